"""Who meets whom next on a live ladder, and the matches a table plays.

The table is chosen as the ladder format does (tournaments.pairing.ladder_table): the focus
version first, then opponents drawn near its openskill mu with seeded noise. The focus is a
provisional version (fewer matches than `provisional_matches`) with the fewest matches, so a
new version plays more at first; once none is provisional, the version that has waited longest
since its last table. A table plays each deal once per rotation of its seats (duplicate deals),
except that a table with a remote bot gives each match a deal of its own: a remote bot is one
party however many processes it runs, so it must never see two seatings of a deal.

Never two bots of one party (an author with their team mates, tournaments/ladder/authors.py) at
one table: an opponent of a party already seated is passed over for the next one drawn; when
fewer parties than seats can play, no table is formed (and serve says why it waits).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from tournaments import pairing
from tournaments.ladder.roster import REMOTE_SPEC
from tournaments.schedule import MatchJob

_MODEL = PlackettLuce()


@dataclass(frozen=True)
class Entrant:
    key: str  # NAME@N
    spec: str
    mu: float
    sigma: float
    seated: int  # matches scheduled for it, finished or not
    last_table: int  # -1: never seated
    party: str = ""  # who it plays for (authors.party_of); "": itself alone

    @property
    def side(self) -> str:
        return self.party or f"bot:{self.key}"


def parties(entrants: Sequence[Entrant]) -> int:
    return len({e.side for e in entrants})


def next_table(
    entrants: Sequence[Entrant], seats: int, provisional: int, rng: random.Random
) -> tuple[Entrant, ...] | None:
    """The next table, focus first, of `seats` parties; None when fewer than `seats` parties
    can play."""
    if len(entrants) < seats or parties(entrants) < seats:
        return None
    newest = [e for e in entrants if e.seated < provisional]
    oldest_table = min((e.last_table for e in entrants), default=0)
    played = {
        e.key: e.seated if e in newest else provisional + e.last_table - oldest_table + 1
        for e in entrants
    }
    ratings = {e.key: (e.mu, e.sigma) for e in entrants}
    sides = {e.key: e.side for e in entrants}
    chosen = pairing.ladder_table(ratings, played, seats, rng, sides)
    by_key = {e.key: e for e in entrants}
    return tuple(by_key[key] for key in chosen)


def table_jobs(
    table_no: int, table: Sequence[Entrant], deals: int, duplicate_deals: bool
) -> list[MatchJob]:
    """deals x seats matches: the seats rotate from match to match; with duplicate deals (and
    no remote bot at the table) each deal is played once per rotation."""
    seats = len(table)
    shared = duplicate_deals and all(e.spec != REMOTE_SPEC for e in table)
    jobs = []
    for game in range(deals * seats):
        rotation = game % seats
        lineup = [table[(rotation + seat) % seats] for seat in range(seats)]
        deal = f"t{table_no}-d{game // seats if shared else game}"
        jobs.append(
            MatchJob(
                f"t{table_no}-g{game}",
                0,
                deal,
                tuple(e.key for e in lineup),
                tuple(e.spec for e in lineup),
            )
        )
    return jobs


def rate(ratings: list[tuple[float, float]], ranks: tuple[int, ...]) -> list[tuple[float, float]]:
    """openskill's Plackett-Luce update of one match, each seat a team of one, ties kept."""
    teams = [[_MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma in ratings]
    rated = _MODEL.rate(teams, ranks=[float(r) for r in ranks])
    return [(team[0].mu, team[0].sigma) for team in rated]
