"""Standings, crosstables, openskill ratings and Bradley-Terry Elo of finished matches."""

from __future__ import annotations

import itertools
import math
import random
from typing import Protocol, TypeVar

import pytest

from tournaments.ratings import (
    SkillBoard,
    crosstable,
    elo_table,
    skill_table,
    standings,
)
from tournaments.records import MatchRecord

_ids = itertools.count()


def match(
    bots: tuple[str, ...],
    ranks: tuple[int, ...],
    forfeits: tuple[tuple[int, str, str], ...] = (),
) -> MatchRecord:
    number = next(_ids)
    return MatchRecord(
        match_id=f"m{number}",
        deal=f"d{number}",
        bots=bots,
        ranks=ranks,
        scores=tuple(0.0 for _ in bots),
        reason="finished",
        forfeits=forfeits,
    )


def head_to_head(a: str, b: str, wins: int, draws: int, losses: int) -> list[MatchRecord]:
    """a's results against b, seats alternating."""
    ranks = [(0, 1)] * wins + [(0, 0)] * draws + [(1, 0)] * losses
    records = []
    for n, (mine, theirs) in enumerate(ranks):
        seated = ((a, b), (mine, theirs)) if n % 2 == 0 else ((b, a), (theirs, mine))
        records.append(match(*seated))
    return records


class Named(Protocol):
    @property
    def name(self) -> str: ...


Row = TypeVar("Row", bound=Named)


def by_name(rows: list[Row]) -> dict[str, Row]:
    return {row.name: row for row in rows}


# --- openskill -------------------------------------------------------------------------------


def test_a_win_raises_the_winner_and_lowers_the_loser() -> None:
    rows = skill_table([match(("loser", "winner"), (1, 0))], ["winner", "loser"])
    winner, loser = rows
    assert (winner.name, loser.name) == ("winner", "loser")
    assert winner.mu > 25 > loser.mu
    assert winner.matches == loser.matches == 1
    assert winner.conservative == pytest.approx(winner.mu - 3 * winner.sigma)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_a_bot_that_always_wins_ends_above_one_that_always_loses(seats: int) -> None:
    rng = random.Random(seats)
    bots = ["strong", "weak", "mid1", "mid2", "mid3"]
    records = []
    for _ in range(60):
        middle = rng.sample(bots[2:], seats - 2)
        ranks = [0, seats - 1, *rng.sample(range(1, seats - 1), seats - 2)]
        seating = list(zip(["strong", "weak", *middle], ranks, strict=True))
        rng.shuffle(seating)
        records.append(match(tuple(b for b, _ in seating), tuple(r for _, r in seating)))
    rows = skill_table(records, bots)
    assert rows[0].name == "strong"
    assert rows[-1].name == "weak"
    ratings = by_name(rows)
    assert ratings["strong"].mu > 25 > ratings["weak"].mu


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_a_tie_between_equal_players_keeps_them_equal(seats: int) -> None:
    bots = ("a", "b", "c", "d")[:seats]
    rows = by_name(skill_table([match(bots, (0,) * seats)], list(bots)))
    assert {row.mu for row in rows.values()} == {25.0}


def test_tied_winners_of_a_four_seat_table_stay_level_with_each_other() -> None:
    records = [match(("a", "x", "b", "y"), (0, 2, 0, 3))]
    rows = by_name(skill_table(records, ["a", "b", "x", "y"]))
    a, b, x, y = (rows[n] for n in "abxy")
    assert a.mu == pytest.approx(b.mu)
    # Weng-Lin's tie rule lets the two winners share one first place, so from equal priors the
    # third gains as much as they do; only the last loses.
    assert a.mu > 25 and x.mu > 25 > y.mu


def test_swapping_names_swaps_skill_ratings() -> None:
    rng = random.Random(7)
    records = [match(("p", "q", "r"), tuple(rng.sample([0, 1, 1], 3))) for _ in range(20)]
    swap = {"p": "q", "q": "p", "r": "r"}
    swapped = [match(tuple(swap[b] for b in r.bots), r.ranks) for r in records]
    rows = by_name(skill_table(records, ["p", "q", "r"]))
    mirrored = by_name(skill_table(swapped, ["p", "q", "r"]))
    for bot in "pqr":
        assert rows[bot].mu == pytest.approx(mirrored[swap[bot]].mu)


def test_a_board_fed_one_match_at_a_time_agrees_with_the_table() -> None:
    records = [*head_to_head("a", "b", 3, 1, 2), match(("c", "a", "b"), (0, 1, 2))]
    board = SkillBoard(["a", "b", "c"])
    for record in records:
        board.add(record)
    assert board.table() == skill_table(records, ["a", "b", "c"])


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (match(("a", "zed"), (0, 1)), "'zed', which is not one of the tournament's bots"),
        (match(("a", "b"), (0, 1, 2)), "has 2 bots but 3 ranks"),
        (match(("a", "a"), (0, 1)), "seats 'a' more than once"),
        (match(("a",), (0,)), "needs at least 2"),
    ],
)
def test_a_malformed_record_is_refused_by_name(record: MatchRecord, message: str) -> None:
    for table in (skill_table, elo_table, crosstable, standings):
        with pytest.raises(ValueError, match=message) as caught:
            table([record], ["a", "b"])
        assert record.match_id in str(caught.value)


def test_repeated_bot_names_are_refused() -> None:
    with pytest.raises(ValueError, match="repeated: a"):
        skill_table([], ["a", "b", "a"])


# --- Elo -------------------------------------------------------------------------------------

ELO_OF_75_PERCENT = 400 * math.log10(3)  # 190.85: odds of 3 to 1


@pytest.mark.parametrize(("wins", "draws", "losses"), [(3000, 0, 1000), (2000, 2000, 0)])
def test_a_75_percent_score_is_about_191_elo_apart(wins: int, draws: int, losses: int) -> None:
    rows = by_name(elo_table(head_to_head("a", "b", wins, draws, losses), ["a", "b"]))
    a, b = rows["a"], rows["b"]
    assert a.elo - b.elo == pytest.approx(ELO_OF_75_PERCENT, abs=1.0)
    assert a.elo + b.elo == pytest.approx(0.0, abs=1e-9)
    assert a.score == pytest.approx(0.75)


def test_error_bars_shrink_with_games_as_the_fisher_information_says() -> None:
    errors = []
    for games in (40, 400, 4000):
        rows = elo_table(head_to_head("a", "b", games * 3 // 4, 0, games // 4), ["a", "b"])
        errors.append(rows[0].error95)
        # Each rating is half the difference, whose variance is 1 / (games p (1 - p)) in nats.
        expected = 1.96 * math.sqrt(1 / (4 * games * 0.75 * 0.25)) * 400 / math.log(10)
        assert rows[0].error95 == pytest.approx(expected, rel=0.03)
    assert errors[0] > errors[1] > errors[2]


def test_all_wins_gives_a_finite_rating_that_grows_with_more_wins() -> None:
    few = by_name(elo_table(head_to_head("a", "b", 5, 0, 0), ["a", "b"]))["a"]
    many = by_name(elo_table(head_to_head("a", "b", 50, 0, 0), ["a", "b"]))["a"]
    assert 0 < few.elo < many.elo < math.inf
    assert math.isfinite(many.error95)


def test_a_strict_chain_of_all_wins_is_ordered_and_symmetric() -> None:
    records = head_to_head("top", "mid", 30, 0, 0) + head_to_head("mid", "low", 30, 0, 0)
    rows = by_name(elo_table(records, ["top", "mid", "low"]))
    top, mid, low = rows["top"], rows["mid"], rows["low"]
    assert top.elo > mid.elo > low.elo
    assert mid.elo == pytest.approx(0.0, abs=1e-6)
    assert top.elo == pytest.approx(-low.elo, rel=1e-9)


def test_elo_recovers_the_ratings_that_generated_the_games() -> None:
    truth = {"w": -150.0, "x": -50.0, "y": 50.0, "z": 150.0}
    rng = random.Random(11)
    records = []
    for a, b in itertools.combinations(truth, 2):
        chance = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
        for _ in range(600):
            records.append(match((a, b), (0, 1) if rng.random() < chance else (1, 0)))
    rows = elo_table(records, list(truth))
    assert [row.name for row in rows] == ["z", "y", "x", "w"]
    for row in rows:
        assert abs(row.elo - truth[row.name]) < row.error95
    assert sum(row.elo for row in rows) == pytest.approx(0.0, abs=1e-6)


def test_swapping_names_swaps_elo() -> None:
    records = head_to_head("a", "b", 7, 2, 3) + head_to_head("b", "c", 4, 4, 4)
    swapped = head_to_head("b", "a", 7, 2, 3) + head_to_head("a", "c", 4, 4, 4)
    rows = by_name(elo_table(records, ["a", "b", "c"]))
    mirrored = by_name(elo_table(swapped, ["a", "b", "c"]))
    for bot, twin in (("a", "b"), ("b", "a"), ("c", "c")):
        assert rows[bot].elo == pytest.approx(mirrored[twin].elo)
        assert rows[bot].error95 == pytest.approx(mirrored[twin].error95)


def test_elo_rows_count_the_results() -> None:
    rows = by_name(elo_table(head_to_head("a", "b", 6, 1, 3), ["a", "b", "idle"]))
    a, idle = rows["a"], rows["idle"]
    assert (a.games, a.wins, a.draws, a.losses) == (10, 6, 1, 3)
    assert a.score == pytest.approx(0.65)
    assert (idle.games, idle.score) == (0, 0.0)


def test_elo_refuses_a_three_seat_match() -> None:
    record = match(("a", "b", "c"), (0, 1, 2))
    with pytest.raises(ValueError, match=f"two-seat matches; match '{record.match_id}' has 3"):
        elo_table([record], ["a", "b", "c"])


# --- crosstable and standings ----------------------------------------------------------------


def test_crosstable_renders_points_over_games() -> None:
    table = crosstable(head_to_head("a", "b", 6, 1, 3), ["a", "b", "c"])
    assert table.rows() == [
        ["", "a", "b", "c", "total"],
        ["a", "-", "6.5/10", "", "6.5/10"],
        ["b", "3.5/10", "-", "", "3.5/10"],
        ["c", "", "", "-", "0/0"],
    ]


def test_crosstable_counts_each_pair_of_seats_at_a_bigger_table() -> None:
    records = [match(("a", "b", "c"), (0, 1, 1)), match(("c", "b", "a", "d"), (0, 1, 2, 2))]
    records += head_to_head("a", "d", 2, 1, 0)
    table = crosstable(records, ["a", "b", "c", "d"])
    assert table.points["a", "b"] == 1.0  # ahead at the first table, behind at the second
    assert table.games["a", "b"] == 2
    assert table.points["b", "c"] == 0.5 and table.points["c", "b"] == 1.5
    assert table.points["a", "d"] == 3.0 and table.games["a", "d"] == 4
    for a, b in itertools.permutations("abcd", 2):
        assert table.points.get((a, b), 0) + table.points.get((b, a), 0) == table.games.get(
            (a, b), 0
        )
    meetings = sum(len(r.bots) * (len(r.bots) - 1) // 2 for r in records)
    assert sum(table.total(bot)[0] for bot in "abcd") == meetings
    assert sum(table.total(bot)[1] for bot in "abcd") == 2 * meetings


def test_standings_count_results_points_and_forfeits() -> None:
    records = head_to_head("a", "b", 2, 1, 1)
    records.append(match(("b", "a"), (0, 1), forfeits=((1, "timeout", "no answer in 1000 ms"),)))
    records.append(match(("a", "b", "c"), (0, 0, 2)))
    rows = standings(records, ["a", "b", "c"])
    assert [row.name for row in rows] == ["a", "b", "c"]
    a, b, c = rows
    assert (a.played, a.wins, a.draws, a.losses, a.forfeits) == (6, 3, 1, 2, 1)
    assert a.points == pytest.approx(2 + 0.5 + 0 + 0 + 0.75)
    assert (b.played, b.wins, b.draws, b.losses, b.forfeits) == (6, 3, 1, 2, 0)
    assert b.points == pytest.approx(1 + 0.5 + 1 + 0.75)
    assert (c.played, c.losses, c.points) == (1, 1, 0.0)
