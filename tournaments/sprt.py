"""Is the candidate stronger than the baseline? The sequential probability ratio test that chess
engine testing (fishtest) runs, on pairs of matches that replay one deal with the seats swapped.

A pair scores 0, 1/2, 1, 3/2 or 2 points for the candidate; the five counts (the pentanomial)
are the data. Pairing the two seatings of one deal cancels most of the luck of the cards, so the
pair scores vary less than single games and the test needs fewer matches.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from tournaments.records import MatchRecord

PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # a pair's points per game: 0, 1/2, ... 2 points over 2
# Fishtest's regularization: an empty cell counts as this many pairs, so the maximum-likelihood
# distributions below stay inside the simplex (every cell positive) and their logs are finite.
EMPTY_CELL = 1e-3
Z95 = 1.96

Verdict = Literal["H1", "H0", "continue"]


@dataclass(frozen=True)
class Pentanomial:
    """How many pairs gave the candidate 0, 1/2, 1, 3/2 and 2 points."""

    n0: int = 0
    n1: int = 0
    n2: int = 0
    n3: int = 0
    n4: int = 0

    @property
    def counts(self) -> tuple[int, int, int, int, int]:
        return (self.n0, self.n1, self.n2, self.n3, self.n4)

    @property
    def pairs(self) -> int:
        return sum(self.counts)


def pentanomial(records: Iterable[MatchRecord], candidate: str, baseline: str) -> Pentanomial:
    """Count the finished pairs: two two-seat records of one deal between exactly these two
    bots, with the seats swapped. A deal with only one of its matches finished is still in
    flight and not counted; other bots' records are ignored. Should a deal hold more matches
    (a retried match stored twice), its seatings are paired off in the order they came."""
    if candidate == baseline:
        raise ValueError(f"the candidate and the baseline are both {candidate!r}")
    # For each deal, the candidate's points when it sat in seat 0 and when it sat in seat 1.
    seatings: dict[str, tuple[list[float], list[float]]] = {}
    for record in records:
        if len(record.bots) != 2 or set(record.bots) != {candidate, baseline}:
            continue
        seat = record.bots.index(candidate)
        seatings.setdefault(record.deal, ([], []))[seat].append(record.points(candidate))
    counts = [0] * 5
    for first, second in seatings.values():
        for a, b in zip(first, second, strict=False):
            counts[round(2 * (a + b))] += 1
    return Pentanomial(*counts)


@dataclass(frozen=True)
class SprtStatus:
    llr: float  # log likelihood ratio of H1 (elo >= elo1) against H0 (elo <= elo0)
    lower: float  # H0 is accepted once llr <= lower
    upper: float  # H1 is accepted once llr >= upper
    verdict: Verdict
    pairs: int
    elo: float  # estimate from the pairs' mean score; 0 with no pairs
    elo_low: float  # 95% interval; -inf/inf when the data cannot bound it
    elo_high: float


def sprt(penta: Pentanomial, elo0: float, elo1: float, alpha: float, beta: float) -> SprtStatus:
    """The generalized SPRT of fishtest on the pentanomial: for the score s0 that elo0 implies
    (logistic Elo) the counts are compared with the distribution of mean s0 that fits them best,
    likewise for elo1, and the log likelihood ratio of the two decides. alpha is the chance of
    accepting H1 when elo = elo0, beta of accepting H0 when elo = elo1. With no pairs the LLR
    is 0; empty cells are regularized as fishtest does (see EMPTY_CELL), so all pairs equal is
    fine too."""
    if not elo0 < elo1:
        raise ValueError(f"elo0 ({elo0}) must be below elo1 ({elo1})")
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not 0 < value < 1:
            raise ValueError(f"{name} must be between 0 and 1, not {value}")
    lower = math.log(beta / (1 - alpha))
    upper = math.log((1 - beta) / alpha)
    llr = log_likelihood_ratio(penta.counts, elo0, elo1) if penta.pairs else 0.0
    verdict: Verdict = "H1" if llr >= upper else "H0" if llr <= lower else "continue"
    elo, elo_low, elo_high = elo_interval(penta.counts)
    return SprtStatus(llr, lower, upper, verdict, penta.pairs, elo, elo_low, elo_high)


def expected_score(elo: float) -> float:
    """The logistic Elo model: the score per game of a player `elo` points stronger."""
    return 1 / (1 + 10 ** (-elo / 400))


def elo_of(score: float) -> float:
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return 400 * math.log10(score / (1 - score))


def log_likelihood_ratio(counts: tuple[int, ...], elo0: float, elo1: float) -> float:
    regular = [c if c else EMPTY_CELL for c in counts]
    total = sum(regular)
    observed = [c / total for c in regular]
    h0 = closest_with_mean(observed, expected_score(elo0))
    h1 = closest_with_mean(observed, expected_score(elo1))
    return sum(c * (math.log(q1) - math.log(q0)) for c, q0, q1 in zip(regular, h0, h1, strict=True))


def closest_with_mean(observed: list[float], mean: float) -> list[float]:
    """The distribution p over PAIR_SCORES of the given mean that maximizes sum f_i log p_i for
    the observed frequencies f (all positive; 0 < mean < 1).

    Lagrange gives p_i = f_i / (1 + theta (x_i - mean)) with theta the root of
    g(theta) = sum f_i (x_i - mean) / (1 + theta (x_i - mean)), which falls steadily from +inf to
    -inf across the theta that keep every p_i positive, so bisection finds it.
    """
    offsets = [x - mean for x in PAIR_SCORES]
    low, high = -1 / max(offsets), -1 / min(offsets)

    def g(theta: float) -> float:
        return sum(f * d / (1 + theta * d) for f, d in zip(observed, offsets, strict=True))

    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if g(middle) > 0:
            low = middle
        else:
            high = middle
    theta = (low + high) / 2
    fitted = [f / (1 + theta * d) for f, d in zip(observed, offsets, strict=True)]
    total = sum(fitted)
    return [p / total for p in fitted]


def elo_interval(counts: tuple[int, ...]) -> tuple[float, float, float]:
    """Elo from the mean score per game over the pairs, with a 95% interval from the variance
    of the pair scores (normal approximation; a handful of pairs says little)."""
    pairs = sum(counts)
    if not pairs:
        return 0.0, -math.inf, math.inf
    mean = sum(c * x for c, x in zip(counts, PAIR_SCORES, strict=True)) / pairs
    variance = sum(c * (x - mean) ** 2 for c, x in zip(counts, PAIR_SCORES, strict=True)) / pairs
    half = Z95 * math.sqrt(variance / pairs)
    return elo_of(mean), elo_of(mean - half), elo_of(mean + half)
