"""The leaderboard gives each version's time per decision (mean and longest, CPU under the CPU
clock, and wall) over its rated matches, as their replays say; a match whose deal is still in
play adds nothing until the deal is rated (its times would tell how the deal goes)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from referee.matches.seat_times import SeatTimes
from tests.tournaments.ladder.test_live import (
    arena,
    finished,
    make_ladder,
    rows,
    serving,
    stop,
    wait_for,
)
from tournaments.ladder.database import LadderStore
from tournaments.ladder.matchmaker import rate
from tournaments.read_models.ladder_reads import LadderApi
from tournaments.records import read_times
from tournaments.schedule import MatchJob
from tournaments.web.pages import ladder_page

__all__ = ["serving"]  # the fixture, shared with test_live

SLOW = 99_999.0  # a decision time no real match of these bots comes near


def _times_of_rated(folder: Path) -> dict[str, SeatTimes]:
    """Independently of the running totals: each version's times over its rated matches."""
    found: dict[str, list[SeatTimes]] = {}
    for bots, times in rows(
        folder,
        "SELECT m.bots, s.times FROM matches m JOIN seat_times s USING (match_id) "
        "WHERE m.rated IS NOT NULL ORDER BY m.rated",
    ):
        for key, seat in zip(json.loads(str(bots)), json.loads(str(times)), strict=True):
            found.setdefault(key, []).append(SeatTimes.model_validate(seat))
    return {key: SeatTimes.combined(parts) for key, parts in found.items()}


def _board(api: LadderApi) -> dict[str, SeatTimes]:
    return {row.version: row.time for row in api.leaderboard()}


@pytest.mark.timeout(300)
def test_the_leaderboard_shows_times_of_rated_deals_only(
    tmp_path: Path, serving: Callable[[Path], subprocess.Popen[bytes]]
) -> None:
    folder = tmp_path / "ladder"
    make_ladder(folder)
    arena("ladder", "add", str(folder), "--name", "a", "--spec", "example:random")
    arena("ladder", "add", str(folder), "--name", "b", "--spec", "example:first")
    serve = serving(folder)
    wait_for("two rated matches", lambda: finished(folder) >= 2, serve)
    assert stop(serve) == 0

    api = LadderApi(folder)
    shown = _board(api)
    assert shown == _times_of_rated(folder)
    assert shown["a@1"].decisions > 0 and shown["b@1"].decisions > 0
    assert shown["a@1"].wall_max_ms >= shown["a@1"].wall_mean_ms > 0
    # The terminal's board and its JSON, and the page, say the same.
    board = json.loads(arena("ladder", "board", str(folder), "--json"))
    assert {r["version"]: SeatTimes.model_validate(r["time"]) for r in board} == shown
    assert shown["a@1"].brief() in arena("ladder", "board", str(folder))
    page = ladder_page(api.state(), api.leaderboard(), None, [])
    assert f'<td class="num time">{shown["b@1"].brief()}</td>' in page

    # A deal of two seatings, one finished: a real match's record, its times made slow.
    store = LadderStore.open(folder)
    try:
        (real_id,) = rows(folder, "SELECT match_id FROM matches WHERE rated = 1")[0]
        record = next(f.record for f in store.finished() if f.record.match_id == real_id)
        real = replace(record, times=read_times(store.db)[str(real_id)])
        slow = real.times[0].model_copy(update={"wall_max_ms": SLOW})
        jobs = [
            MatchJob(f"in-play-{n}", 0, "in-play", bots, ("example:random",) * 2)
            for n, bots in enumerate([("a@1", "b@1"), ("b@1", "a@1")])
        ]
        store.schedule(store.next_table_no(), jobs)
        first = replace(
            real,
            match_id="in-play-0",
            deal="in-play",
            bots=("a@1", "b@1"),
            times=(slow, real.times[1]),
        )
        store.finish(first, "test", 1.0, rate)
        # Control: its times are kept, and a read of every kept time would show them.
        assert read_times(store.db)["in-play-0"][0].wall_max_ms == SLOW
        assert _board(api) == shown  # the guard: nothing of a deal in play

        second = replace(first, match_id="in-play-1", bots=("b@1", "a@1"))
        store.finish(second, "test", 1.0, rate)
    finally:
        store.close()
    after = _board(api)
    assert after == _times_of_rated(folder)
    assert after["a@1"].wall_max_ms == SLOW  # rated now: its seat 0, a@1
    assert after["b@1"].wall_max_ms == SLOW  # and the second seating's seat 0, b@1
    added = real.times[0].decisions + real.times[1].decisions  # a seat 0 once, a seat 1 once
    assert after["a@1"].decisions == shown["a@1"].decisions + added
