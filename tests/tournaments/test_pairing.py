"""Tables for round-robin, gauntlet, Swiss and ladder."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Callable

import pytest

from tournaments.pairing import SwissRound, gauntlet, ladder_table, round_robin, swiss_round

BOTS = [f"b{i}" for i in range(7)]


def rematches(tables: tuple[tuple[str, ...], ...], met: dict[frozenset[str], int]) -> int:
    return sum(
        met.get(frozenset(pair), 0) > 0
        for table in tables
        for pair in itertools.combinations(table, 2)
    )


def ranked_points(names: str) -> dict[str, float]:
    """Distinct points, first name highest, so the ranking is fixed."""
    return {name: float(len(names) - i) for i, name in enumerate(names)}


def met_pairs(*pairs: str) -> dict[frozenset[str], int]:
    return {frozenset(pair): 1 for pair in pairs}


# --- round-robin and gauntlet ----------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("count", [4, 5, 7])
def test_round_robin_is_every_set_of_bots_once(seats: int, count: int) -> None:
    tables = round_robin(BOTS[:count], seats)
    assert len(tables) == math.comb(count, seats)
    assert len({frozenset(t) for t in tables}) == len(tables)
    assert all(len(set(t)) == seats for t in tables)
    meetings = Counter(frozenset(p) for t in tables for p in itertools.combinations(t, 2))
    assert set(meetings.values()) == {math.comb(count - 2, seats - 2)}


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_gauntlet_challengers_meet_the_field_and_never_each_other(seats: int) -> None:
    challengers, field = ["new1", "new2"], BOTS[:5]
    tables = gauntlet(challengers, field, seats)
    assert len(tables) == len(challengers) * math.comb(len(field), seats - 1)
    for table in tables:
        assert table[0] in challengers
        assert set(table[1:]) <= set(field) and len(set(table)) == seats
    for challenger, bot in itertools.product(challengers, field):
        assert any(t[0] == challenger and bot in t for t in tables)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: round_robin(["a"], 2), "1 bots cannot fill a table of 2 seats"),
        (lambda: round_robin(["a", "b"], 3), "2 bots cannot fill a table of 3 seats"),
        (lambda: round_robin(["a", "b"], 1), "at least 2 seats, not 1"),
        (lambda: round_robin(["a", "b", "a"], 2), "repeated: a"),
        (lambda: gauntlet([], ["a", "b"], 2), "at least one challenger"),
        (lambda: gauntlet(["c"], ["a"], 3), "2 bots .a challenger and the field. cannot fill"),
        (lambda: gauntlet(["a"], ["a", "b"], 2), "repeated: a"),
        (lambda: swiss_round({"a": 0}, {}, 2, random.Random(1)), "1 bots cannot fill"),
        (lambda: swiss_round({"a": 0, "b": 0}, {}, 2, random.Random(1), {"z": 1}), "bye .* z"),
        (lambda: ladder_table({"a": (25, 8), "b": (25, 8)}, {}, 3, random.Random(1)), "fill"),
        (lambda: ladder_table({"a": (25, 8), "b": (25, 8)}, {"z": 3}, 2, random.Random(1)), "z"),
    ],
)
def test_impossible_requests_are_refused_clearly(make: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


# --- Swiss -----------------------------------------------------------------------------------


def test_swiss_pairs_neighbours_in_the_ranking_when_nobody_has_met() -> None:
    paired = swiss_round(ranked_points("abcdef"), {}, 2, random.Random(1))
    assert paired == SwissRound((("a", "b"), ("c", "d"), ("e", "f")), ())


def test_swiss_steps_around_a_rematch() -> None:
    paired = swiss_round(ranked_points("abcd"), met_pairs("ab"), 2, random.Random(1))
    assert paired.tables == (("a", "c"), ("b", "d"))


def test_swiss_backtracks_when_the_greedy_choice_strands_a_rematch() -> None:
    # Top down, a-b and c-d leave e-f, who have met; the search goes back and finds c-e, d-f.
    paired = swiss_round(ranked_points("abcdef"), met_pairs("ef"), 2, random.Random(1))
    assert paired.tables == (("a", "b"), ("c", "e"), ("d", "f"))


def fewest_rematches(bots: list[str], met: dict[frozenset[str], int]) -> int:
    """Brute force over every perfect matching."""
    if not bots:
        return 0
    first, rest = bots[0], bots[1:]
    return min(
        (met.get(frozenset((first, partner)), 0) > 0)
        + fewest_rematches([b for b in rest if b != partner], met)
        for partner in rest
    )


@pytest.mark.parametrize("seed", range(30))
def test_swiss_two_seats_finds_the_fewest_rematches_possible(seed: int) -> None:
    rng = random.Random(seed)
    bots = [f"p{i}" for i in range(rng.choice([4, 6, 8]))]
    met = {frozenset(p): 1 for p in itertools.combinations(bots, 2) if rng.random() < 0.6}
    points = {bot: float(rng.randrange(4)) for bot in bots}
    paired = swiss_round(points, met, 2, random.Random(seed))
    assert sorted(b for t in paired.tables for b in t) == sorted(bots)
    assert rematches(paired.tables, met) == fewest_rematches(bots, met)


def test_swiss_at_three_seats_avoids_rematches_when_it_can() -> None:
    met: Counter[frozenset[str]] = Counter()
    for table in ("abc", "def", "ghi"):  # last round
        met.update(frozenset(p) for p in itertools.combinations(table, 2))
    paired = swiss_round(ranked_points("abcdefghi"), dict(met), 3, random.Random(1))
    assert len(paired.tables) == 3
    assert rematches(paired.tables, dict(met)) == 0


def test_swiss_at_four_seats_keeps_rematches_to_the_unavoidable() -> None:
    met: Counter[frozenset[str]] = Counter()
    for table in ("abcd", "efgh"):
        met.update(frozenset(p) for p in itertools.combinations(table, 2))
    paired = swiss_round(ranked_points("abcdefgh"), dict(met), 4, random.Random(1))
    # Any table of four holds at least two of one earlier table; the best is two of each.
    assert rematches(paired.tables, dict(met)) == 4


def test_the_bye_goes_to_the_lowest_ranked_of_those_with_fewest_byes() -> None:
    points = ranked_points("abcde")
    assert swiss_round(points, {}, 2, random.Random(1)).byes == ("e",)
    assert swiss_round(points, {}, 2, random.Random(1), {"e": 1}).byes == ("d",)
    assert swiss_round(points, {}, 4, random.Random(1), {"e": 1}).byes == ("d",)
    six = ranked_points("abcdef")
    assert swiss_round(six, {}, 4, random.Random(1), {"f": 1}).byes == ("d", "e")


@pytest.mark.parametrize("seats", [2, 3])
def test_over_a_whole_swiss_every_bot_sits_out_equally(seats: int) -> None:
    bots = list("abcdefg")  # 7: one bye a round at 2 seats, one at 3
    rng = random.Random(5)
    points = dict.fromkeys(bots, 0.0)
    met: Counter[frozenset[str]] = Counter()
    byes: Counter[str] = Counter()
    for _ in range(7):
        paired = swiss_round(points, dict(met), seats, rng, dict(byes))
        byes.update(paired.byes)
        for table in paired.tables:
            met.update(frozenset(p) for p in itertools.combinations(table, 2))
            for bot in table:
                points[bot] += rng.random()
    assert all(byes[bot] == 1 for bot in bots)


def test_swiss_is_a_function_of_its_seed() -> None:
    level = dict.fromkeys("abcdefgh", 1.0)
    rounds = {seed: swiss_round(level, {}, 2, random.Random(seed)) for seed in range(8)}
    assert swiss_round(level, {}, 2, random.Random(3)) == rounds[3]
    assert len(set(rounds.values())) > 1  # equal points: the seed breaks the ties


# --- ladder ----------------------------------------------------------------------------------


def test_the_ladder_seats_the_least_played_bot() -> None:
    ratings = {"a": (30.0, 2.0), "b": (20.0, 2.0), "c": (25.0, 2.0), "d": (26.0, 2.0)}
    table = ladder_table(ratings, {"a": 5, "b": 2, "c": 5, "d": 5}, 3, random.Random(1))
    assert table[0] == "b"
    assert len(set(table)) == 3


def test_among_the_least_played_the_most_uncertain_goes_first() -> None:
    ratings = {"a": (30.0, 2.0), "b": (20.0, 6.0), "c": (25.0, 7.0), "d": (26.0, 2.0)}
    for seed in range(5):
        assert ladder_table(ratings, {"a": 1, "d": 1}, 2, random.Random(seed))[0] == "c"


def test_ladder_opponents_are_mostly_the_nearest_but_not_always() -> None:
    ratings = {
        "focus": (25.0, 1.0),
        "near": (25.5, 1.0),
        "close": (30.0, 1.0),
        "far": (60.0, 1.0),
    }
    played = {"focus": 0, "near": 9, "close": 9, "far": 9}
    opponents = Counter(
        ladder_table(ratings, played, 2, random.Random(seed))[1] for seed in range(300)
    )
    assert opponents["near"] > opponents["close"] > opponents["far"]
    assert opponents["close"] >= 30  # the noise varies the pairs
    assert opponents["far"] <= 3


def test_the_ladder_is_a_function_of_its_seed() -> None:
    ratings = {name: (25.0 + i, 3.0) for i, name in enumerate("abcdef")}
    tables = [ladder_table(ratings, {}, 3, random.Random(seed)) for seed in range(10)]
    assert tables == [ladder_table(ratings, {}, 3, random.Random(seed)) for seed in range(10)]
    assert len(set(tables)) > 1
