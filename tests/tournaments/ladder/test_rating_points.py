"""The rating history's points on a real ladder.sqlite, written by the store itself: none while
another seating of the deal is still to play (a point would tell how that deal went, and so
something of its cards; control: with the guard patched out, one shows), then one per seat
of each of the deal's seatings, in their order, each the rating the version holds after it,
with the classic Elo (zero-sum, from ELO_START) beside it at two seats. The pair's page of a
deal in play shows the match with no result and counts it nowhere (control: the deal over, the
same read gives it)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.tournaments.web.harness import arena
from tournaments.ladder import matchmaker, rating_history, roster
from tournaments.ladder.database import LadderStore
from tournaments.read_models.history_models import Tally
from tournaments.read_models.history_reads import HistoryReads
from tournaments.read_models.ladder_reads import LadderApi
from tournaments.records import MatchRecord
from tournaments.schedule import MatchJob

DEAL = "deal-1"
SEATINGS = (("m0", ("a@1", "b@1"), (0, 1)), ("m1", ("b@1", "a@1"), (1, 0)))


def ladder(folder: Path) -> LadderStore:
    made = arena("ladder", "init", folder, "--game", "opposing-force")
    assert made.returncode == 0, made.stderr
    store = LadderStore.open(folder)
    for name in ("a", "b"):
        roster.add_bot(store, name, "example:random")
    jobs = [MatchJob(m, 0, DEAL, bots, ("example:random",) * 2) for m, bots, _ in SEATINGS]
    store.schedule(0, jobs)
    return store


def finish(store: LadderStore, index: int) -> None:
    match_id, bots, ranks = SEATINGS[index]
    record = MatchRecord(match_id, DEAL, bots, ranks, (1.0, 0.0), "synthetic")
    store.finish(record, "test", 1.0, matchmaker.rate)


def points(folder: Path) -> list[tuple[int, int, str, str, float, float, float]]:
    with sqlite3.connect(folder / "ladder.sqlite") as db:
        return db.execute(
            "SELECT rated, seat, match_id, version, mu, sigma, elo FROM rating_history "
            "ORDER BY rated, seat"
        ).fetchall()


def test_no_point_while_the_deal_is_in_play_then_one_per_seat(tmp_path: Path) -> None:
    store = ladder(tmp_path)
    finish(store, 0)
    assert points(tmp_path) == []  # m1 still to play: no rating moved, no point
    finish(store, 1)
    found = points(tmp_path)
    assert [(r, s, m, v) for r, s, m, v, *_ in found] == [
        (1, 0, "m0", "a@1"),
        (1, 1, "m0", "b@1"),
        (2, 0, "m1", "b@1"),
        (2, 1, "m1", "a@1"),
    ]
    # Each version's last point is the rating it holds.
    for version in ("a@1", "b@1"):
        last = [p for p in found if p[3] == version][-1]
        held = store.db.execute("SELECT mu, sigma FROM versions WHERE key = ?", (version,))
        assert (last[4], last[5]) == held.fetchone()
    # a won both: its Elo rose from the start, b's fell by as much, match by match.
    a_elo = [p[6] for p in found if p[3] == "a@1"]
    b_elo = [p[6] for p in found if p[3] == "b@1"]
    assert rating_history.ELO_START < a_elo[0] < a_elo[1]
    assert [a + b for a, b in zip(a_elo, b_elo, strict=True)] == pytest.approx(
        [2 * rating_history.ELO_START] * 2
    )
    store.close()


def test_control_without_the_deal_guard_a_point_shows_mid_deal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LadderStore, "_in_play", lambda self, deal: False)
    store = ladder(tmp_path)
    finish(store, 0)
    assert [p[2] for p in points(tmp_path)] == ["m0", "m0"]
    store.close()


def test_a_pair_shows_no_result_of_a_deal_in_play(tmp_path: Path) -> None:
    store = ladder(tmp_path)
    reads = HistoryReads(LadderApi.open(tmp_path))
    finish(store, 0)
    pair = reads.pair("a", "b")
    (shown,) = pair.matches
    assert shown.match.match_id == "m0" and shown.outcome is None
    assert [s.rank for s in shown.match.seats] == [None, None] and shown.match.reason is None
    assert (pair.tally, pair.by_day) == (Tally(), [])
    assert reads.history("a").points == []
    finish(store, 1)  # control: the deal over, the same reads give its results
    pair = reads.pair("a", "b")
    assert [m.outcome for m in pair.matches] == ["win", "win"]  # a first in both seatings
    assert pair.tally == Tally(wins=2) and pair.by_day[-1].total == Tally(wins=2)
    assert reads.pair("b", "a").tally == Tally(losses=2)
    assert [p.match_id for p in reads.history("a").points] == ["m0", "m1"]
    store.close()
