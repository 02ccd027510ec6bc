"""A 95% interval for each bot's openskill mu at tables of three and four, where there is no
Elo table: a bootstrap over the tournament's deals.

Why a bootstrap and not mu +- 1.96 sigma: openskill's sigma is its filter's own belief, which
never falls below the drift it adds before every match (tau), and which does not see that mu
depends on the order the matches were rated in. Simulated four-seat tournaments of bots with
fixed Plackett-Luce strengths (400 matches, 200 tournaments) put the spread of a bot's final mu
across tournaments at about 1.1, where openskill's sigma said 1.7; the bootstrap's spread,
from one tournament, was 1.1 to 1.2. So sigma overstates the error by half, and the bootstrap
measures it.

The resampled unit is the deal (every seating of a duplicate deal stays together, as they were
played to cancel the luck of the cards); each resample is rated in its drawn order, which
averages over the order effect too. The interval is mu +- 1.96 times the spread of mu over the
resamples in which the bot played, centred on the mu the standings show. Resamples are seeded
by the matches' ids, so the standings of one state print the same interval every time.
"""

from __future__ import annotations

import hashlib
import random
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tournaments.ratings import Z95, SkillBoard, checked, skill_table
from tournaments.records import MatchRecord

# Ratings done per interval, at most: 2 to 5 s at four seats (openskill takes 50-120 us a
# match here). Above 400 matches there are fewer resamples than the most, never fewer than the
# least: the spread of 30 resamples is still within about 13% of the truth.
RATING_BUDGET = 40_000
MOST_RESAMPLES = 100
LEAST_RESAMPLES = 30


@dataclass(frozen=True)
class SkillInterval:
    name: str
    mu: float
    low: float
    high: float
    resamples: int  # those in which the bot played


def resamples_for(matches: int) -> int:
    return max(LEAST_RESAMPLES, min(MOST_RESAMPLES, RATING_BUDGET // max(matches, 1)))


def skill_intervals(records: Iterable[MatchRecord], bots: Sequence[str]) -> list[SkillInterval]:
    """Each bot's mu with its bootstrap interval, in the order of bots. A bot that played in
    fewer than two resamples has no spread to measure: its interval is its mu alone."""
    matches = checked(records, bots)
    mu = {row.name: row.mu for row in skill_table(matches, bots)}
    deals = _by_deal(matches)
    rng = random.Random(hashlib.sha256("\n".join(r.match_id for r in matches).encode()).digest())
    seen: dict[str, list[float]] = {bot: [] for bot in bots}
    for _ in range(resamples_for(len(matches)) if deals else 0):
        drawn = [record for _ in deals for record in rng.choice(deals)]
        board = SkillBoard(bots)
        for record in drawn:
            board.add(record)
        for bot in {b for record in drawn for b in record.bots}:
            seen[bot].append(board.ratings[bot].mu)
    return [_interval(bot, mu[bot], seen[bot]) for bot in bots]


def _interval(bot: str, mu: float, resampled: list[float]) -> SkillInterval:
    half = Z95 * statistics.stdev(resampled) if len(resampled) > 1 else 0.0
    return SkillInterval(bot, mu, mu - half, mu + half, len(resampled))


def _by_deal(matches: list[MatchRecord]) -> list[list[MatchRecord]]:
    """The matches grouped by deal, groups in the order of their first match."""
    groups: dict[str, list[MatchRecord]] = {}
    for record in matches:
        groups.setdefault(record.deal, []).append(record)
    return list(groups.values())
