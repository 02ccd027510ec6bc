"""The likelihood of superiority beside the Elo table, and the bootstrap interval of openskill's
mu at three and four seats: what they say, and that the interval measures the real spread of mu
where openskill's sigma overstates it."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from tests.tournaments.test_ratings import head_to_head
from tournaments.ratings import elo_fit, skill_table
from tournaments.records import MatchRecord
from tournaments.skill_interval import (
    LEAST_RESAMPLES,
    MOST_RESAMPLES,
    RATING_BUDGET,
    resamples_for,
    skill_intervals,
)

FOUR = ("strong", "good", "fair", "weak")
STRENGTH = {"strong": 1.0, "good": 0.6, "fair": 0.3, "weak": 0.0}  # Plackett-Luce log-strengths


@pytest.mark.parametrize(("wins", "losses"), [(60, 40), (55, 45), (600, 400)])
def test_los_of_a_long_head_to_head_is_the_classical_one(wins: int, losses: int) -> None:
    """Without draws and over many games, LOS from the fit's covariance is the textbook
    Phi((W - L) / sqrt(W + L)), but for the light prior."""
    fit = elo_fit(head_to_head("a", "b", wins, 0, losses), ["a", "b"])
    classical = 0.5 * (1 + math.erf((wins - losses) / math.sqrt(wins + losses) / math.sqrt(2)))
    assert fit.los("a", "b") == pytest.approx(classical, abs=0.002)
    assert fit.los("a", "b") + fit.los("b", "a") == pytest.approx(1)


def test_los_counts_the_games_between_others_and_is_even_for_equals() -> None:
    records = head_to_head("a", "b", 6, 2, 2) + head_to_head("b", "c", 6, 2, 2)
    fit = elo_fit(records, ["a", "b", "c"])
    # a never met c, but beat b, who beat c: surer that a is above c than above b.
    assert 0.5 < fit.los("a", "b") < fit.los("a", "c")
    even = elo_fit(head_to_head("a", "b", 5, 0, 5), ["a", "b"])
    assert even.los("a", "b") == pytest.approx(0.5)
    more = elo_fit(head_to_head("a", "b", 60, 20, 20), ["a", "b", "c"])
    assert more.los("a", "b") > fit.los("a", "b")


def four_seat_tournament(rng: random.Random, matches: int) -> list[MatchRecord]:
    """Tables of all four in a random order, finishing in a Plackett-Luce draw; one deal each."""
    records = []
    for number in range(matches):
        table = rng.sample(FOUR, 4)
        left, order = list(table), []
        while left:
            weights = [math.exp(STRENGTH[b]) for b in left]
            order.append(left.pop(rng.choices(range(len(left)), weights)[0]))
        ranks = tuple(order.index(bot) for bot in table)
        records.append(
            MatchRecord(f"m{number}", f"d{number}", tuple(table), ranks, (0.0,) * 4, "over")
        )
    return records


def test_the_interval_holds_mu_narrows_with_matches_and_repeats() -> None:
    rng = random.Random(5)
    few, many = four_seat_tournament(rng, 30), four_seat_tournament(rng, 300)
    narrow = {i.name: i for i in skill_intervals(many, FOUR)}
    wide = {i.name: i for i in skill_intervals(few, FOUR)}
    mu = {row.name: row.mu for row in skill_table(many, FOUR)}
    for bot in FOUR:
        assert narrow[bot].low < mu[bot] == narrow[bot].mu < narrow[bot].high
        # Ten times the matches: about a third of the width (1 / sqrt(10)).
        ratio = (narrow[bot].high - narrow[bot].low) / (wide[bot].high - wide[bot].low)
        assert 0.2 < ratio < 0.5
    assert narrow["strong"].low > narrow["weak"].high
    assert skill_intervals(few, FOUR) == skill_intervals(list(few), FOUR)


def test_the_resamples_keep_to_a_budget() -> None:
    assert resamples_for(10) == MOST_RESAMPLES
    assert resamples_for(10**6) == LEAST_RESAMPLES
    assert resamples_for(1000) * 1000 <= RATING_BUDGET


def test_the_bootstrap_measures_the_spread_of_mu_where_sigma_overstates_it() -> None:
    """Across independent tournaments of the same bots, a bot's mu spreads by some amount: the
    bootstrap of one tournament finds about that much, openskill's sigma about half again."""
    rng = random.Random(11)
    matches = 80
    finals = [skill_table(four_seat_tournament(rng, matches), FOUR) for _ in range(60)]
    true_spread = statistics.mean(
        statistics.stdev(next(r.mu for r in table if r.name == bot) for table in finals)
        for bot in FOUR
    )
    sigma = statistics.mean(row.sigma for table in finals for row in table)
    measured = statistics.mean(
        (i.high - i.low) / 2 / 1.96
        for _ in range(3)
        for i in skill_intervals(four_seat_tournament(rng, matches), FOUR)
    )
    assert 0.75 < measured / true_spread < 1.33
    assert sigma / true_spread > 1.3
