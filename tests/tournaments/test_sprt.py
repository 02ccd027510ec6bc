"""SPRT on duplicate-deal pairs: pentanomial counting, the GSPRT log likelihood ratio and its
decisions on simulated candidates."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from tournaments.records import MatchRecord
from tournaments.sprt import (
    PAIR_SCORES,
    Pentanomial,
    closest_with_mean,
    expected_score,
    pentanomial,
    sprt,
)

_ids = itertools.count()


def game(deal: str, bots: tuple[str, str], winner: str | None) -> MatchRecord:
    ranks = (0, 0) if winner is None else tuple(0 if b == winner else 1 for b in bots)
    return MatchRecord(f"m{next(_ids)}", deal, bots, ranks, (0.0, 0.0), "finished")


def pair(deal: str, first: str | None, second: str | None) -> list[MatchRecord]:
    """Candidate 'new' against baseline 'old' on one deal, seats swapped; winners (None: draw)."""
    return [game(deal, ("new", "old"), first), game(deal, ("old", "new"), second)]


# --- counting --------------------------------------------------------------------------------


def test_pairs_are_counted_by_the_candidates_points() -> None:
    records = [
        *pair("d1", "new", "new"),  # 2 points
        *pair("d2", "new", None),  # 1.5
        *pair("d3", "old", "new"),  # 1: each seat won once
        *pair("d4", None, None),  # 1
        *pair("d5", None, "old"),  # 0.5
        *pair("d6", "old", "old"),  # 0
        game("d7", ("new", "old"), "new"),  # in flight: its twin has not finished
        *pair("d8", "new", "new")[:1] * 2,  # one seating twice is no pair
        game("d9", ("new", "other"), "new"),  # other bots' records are ignored
        game("d9", ("other", "new"), "new"),
        game("d1", ("other", "old"), "other"),  # even on a deal that has a pair
    ]
    assert pentanomial(records, "new", "old") == Pentanomial(n0=1, n1=1, n2=2, n3=1, n4=1)
    assert pentanomial(records, "old", "new") == Pentanomial(n0=1, n1=1, n2=2, n3=1, n4=1)
    assert pentanomial(records[:2], "old", "new").counts == (1, 0, 0, 0, 0)


def test_a_pair_counts_whichever_of_its_matches_finishes_first() -> None:
    first, second = pair("d1", "new", None)
    assert pentanomial([second], "new", "old").pairs == 0
    assert pentanomial([second, first], "new", "old") == Pentanomial(n3=1)


def test_the_candidate_cannot_be_its_own_baseline() -> None:
    with pytest.raises(ValueError, match="both 'new'"):
        pentanomial([], "new", "new")


# --- the statistic ---------------------------------------------------------------------------


def test_the_bounds_are_walds() -> None:
    status = sprt(Pentanomial(), elo0=0, elo1=5, alpha=0.05, beta=0.1)
    assert status.lower == pytest.approx(math.log(0.1 / 0.95))
    assert status.upper == pytest.approx(math.log(0.9 / 0.05))


def test_no_pairs_means_no_evidence() -> None:
    status = sprt(Pentanomial(), 0, 10, 0.05, 0.05)
    assert (status.llr, status.verdict, status.pairs) == (0.0, "continue", 0)
    assert (status.elo, status.elo_low, status.elo_high) == (0.0, -math.inf, math.inf)


@pytest.mark.parametrize("cell", range(5))
def test_all_pairs_alike_gives_a_finite_llr(cell: int) -> None:
    counts = [0] * 5
    counts[cell] = 40
    status = sprt(Pentanomial(*counts), 0, 10, 0.05, 0.05)
    assert math.isfinite(status.llr)
    assert (status.llr > 0) == (cell > 2)


def test_the_llr_leans_towards_the_side_the_pairs_favour() -> None:
    favourable = Pentanomial(10, 60, 200, 90, 20)
    unfavourable = Pentanomial(20, 90, 200, 60, 10)
    assert sprt(favourable, 0, 10, 0.05, 0.05).llr > 0
    assert sprt(unfavourable, 0, 10, 0.05, 0.05).llr < 0


def test_mirrored_counts_and_hypotheses_negate_the_llr() -> None:
    counts = Pentanomial(13, 71, 240, 88, 9)
    mirrored = Pentanomial(*reversed(counts.counts))
    direct = sprt(counts, -3, 7, 0.05, 0.05).llr
    assert sprt(mirrored, -7, 3, 0.05, 0.05).llr == pytest.approx(-direct, rel=1e-9)


def test_the_llr_agrees_with_its_normal_approximation_on_many_pairs() -> None:
    # For close hypotheses, LLR ~ N (s1 - s0) (2 mean - s0 - s1) / (2 var) per game score.
    counts = (400, 2000, 5200, 2100, 300)
    pairs = sum(counts)
    mean = sum(c * x for c, x in zip(counts, PAIR_SCORES, strict=True)) / pairs
    var = sum(c * (x - mean) ** 2 for c, x in zip(counts, PAIR_SCORES, strict=True)) / pairs
    s0, s1 = expected_score(0), expected_score(10)
    approximation = pairs * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    assert sprt(Pentanomial(*counts), 0, 10, 0.05, 0.05).llr == pytest.approx(
        approximation, rel=0.01
    )


def test_the_fitted_distribution_has_the_mean_and_fits_best() -> None:
    observed = [0.05, 0.2, 0.4, 0.25, 0.1]
    fitted = closest_with_mean(observed, 0.45)
    assert sum(fitted) == pytest.approx(1.0)
    assert sum(p * x for p, x in zip(fitted, PAIR_SCORES, strict=True)) == pytest.approx(0.45)

    def fit(p: list[float]) -> float:
        return sum(f * math.log(q) for f, q in zip(observed, p, strict=True))

    # Moving mass along a direction that keeps the total and the mean only lowers the fit.
    for direction in ([1, -2, 1, 0, 0], [0, 1, -2, 1, 0], [0, 0, 1, -2, 1], [1, -1, -1, 1, 0]):
        for step in (-1e-3, 1e-3):
            moved = [p + step * d for p, d in zip(fitted, direction, strict=True)]
            assert fit(moved) < fit(fitted)


def test_the_elo_estimate_brackets_the_mean_score() -> None:
    status = sprt(Pentanomial(10, 60, 200, 90, 20), 0, 10, 0.05, 0.05)
    mean = (60 * 0.25 + 200 * 0.5 + 90 * 0.75 + 20) / 380
    assert status.elo == pytest.approx(400 * math.log10(mean / (1 - mean)))
    assert status.elo_low < status.elo < status.elo_high


@pytest.mark.parametrize(
    ("elo0", "elo1", "alpha", "beta", "message"),
    [
        (5, 5, 0.05, 0.05, "elo0 .5. must be below elo1"),
        (0, 10, 0, 0.05, "alpha must be between 0 and 1"),
        (0, 10, 0.05, 1.0, "beta must be between 0 and 1"),
    ],
)
def test_impossible_settings_are_refused(
    elo0: float, elo1: float, alpha: float, beta: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        sprt(Pentanomial(1, 1, 1, 1, 1), elo0, elo1, alpha, beta)


# --- decisions on simulated candidates -------------------------------------------------------

LUCK = 0.5  # the share of deals the cards decide: each seat wins once, a pair scores 1
DRAWS = 0.4  # per game, in deals that skill decides


def simulated_pair(rng: random.Random, elo: float) -> tuple[str | None, str | None]:
    """Winners of a pair for a candidate `elo` stronger; the mean score per game is
    expected_score(elo), and the luck of the deal correlates the two games."""
    if rng.random() < LUCK:
        return "new", "old"
    score = (expected_score(elo) - LUCK / 2) / (1 - LUCK)
    win = score - DRAWS / 2
    assert 0 <= win <= 1 - DRAWS

    def one() -> str | None:
        roll = rng.random()
        return "new" if roll < win else None if roll < win + DRAWS else "old"

    return one(), one()


def pair_index(first: str | None, second: str | None) -> int:
    """The pentanomial cell: the candidate's half points over the pair."""
    return sum(2 if winner == "new" else 1 if winner is None else 0 for winner in (first, second))


def run_until_decided(rng: random.Random, elo: float, max_pairs: int) -> tuple[str, int]:
    """Play pairs, check every 10 (as a runner checks between batches), return the verdict."""
    counts = [0] * 5
    for played in range(1, max_pairs + 1):
        counts[pair_index(*simulated_pair(rng, elo))] += 1
        if played % 10 == 0:
            status = sprt(Pentanomial(*counts), 0, 10, 0.05, 0.05)
            if status.verdict != "continue":
                return status.verdict, played
    return "continue", max_pairs


@pytest.mark.parametrize("seed", range(5))
def test_a_clearly_stronger_candidate_is_accepted_from_real_records(seed: int) -> None:
    rng = random.Random(seed)
    records: list[MatchRecord] = []
    for number in range(1000):
        records += pair(f"d{number}", *simulated_pair(rng, elo=60))
        if number % 10 == 9:
            status = sprt(pentanomial(records, "new", "old"), 0, 10, 0.05, 0.05)
            if status.verdict != "continue":
                break
    assert status.verdict == "H1"
    assert status.pairs <= 1000


def pentanomial_of(rng: random.Random, elo: float, pairs: int) -> Pentanomial:
    counts = [0] * 5
    for _ in range(pairs):
        counts[pair_index(*simulated_pair(rng, elo))] += 1
    return Pentanomial(*counts)


def test_the_95_percent_interval_covers_the_true_elo_about_95_percent_of_the_time() -> None:
    # Read at a fixed size, not where an SPRT stopped: a stopped test's estimate leans high.
    covered = 0
    for seed in range(100):
        status = sprt(pentanomial_of(random.Random(seed), 60, 400), 0, 10, 0.05, 0.05)
        covered += status.elo_low < 60 < status.elo_high
    assert 88 <= covered <= 100


def test_the_interval_narrows_as_pairs_grow() -> None:
    widths = []
    for pairs in (250, 1000, 4000):
        status = sprt(pentanomial_of(random.Random(pairs), 60, pairs), 0, 10, 0.05, 0.05)
        widths.append(status.elo_high - status.elo_low)
    assert widths[0] > widths[1] > widths[2]
    assert widths[0] / widths[2] == pytest.approx(4, rel=0.25)  # 1 / sqrt(pairs)


def test_equal_bots_are_found_not_stronger_on_most_seeds() -> None:
    verdicts = [run_until_decided(random.Random(seed), 0, 20_000)[0] for seed in range(40)]
    assert "continue" not in verdicts
    # alpha = 0.05 at elo0 = 0: allow a few more false H1 than the expected two.
    assert verdicts.count("H0") >= 35
