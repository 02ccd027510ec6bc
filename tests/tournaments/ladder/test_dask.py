"""A live ladder whose matches run on a Dask LocalCluster: they are played on the workers, and
a bot paused or retired keeps no process there (its pool on every worker is stopped, and no
match starts it again), while the other bots play on."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.tournaments.web.harness import arena
from tests.tournaments.web.ladder_harness import count, finished, make_ladder, seated, serving

SLEEPY = Path(__file__).resolve().parents[2] / "bots" / "sleepy_bot.py"


def processes_with(marker: str) -> list[int]:
    """The pids whose command line holds marker (the bot's own argument)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # ended meanwhile
            continue
        if marker.encode() in argv:
            found.append(int(entry.name))
    return found


def in_flight(folder: Path, version: str) -> bool:
    sql = "SELECT COUNT(*) FROM matches WHERE status = 'scheduled' AND instr(bots, ?) > 0"
    return count(folder, sql, f'"{version}"') > 0


@pytest.mark.timeout(400)
def test_a_ladder_plays_on_dask_and_a_paused_or_retired_bot_keeps_no_process_there(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ladder"
    marked = tmp_path / "marked_bot.py"  # its path in a process's command line marks it
    shutil.copy(SLEEPY, marked)
    marker = str(marked)
    make_ladder(
        folder,
        {
            "a": "example:random",
            "b": "example:random",
            "marked": marker,
        },
        executor="dask",
        dask_workers=2,
        concurrency=2,
        tier="none",  # its bot is in pytest's tmp_path, 0700: a bot's own uid could not read it
    )
    with serving(folder) as served:
        served.wait_for("matches of marked", lambda: finished(folder, "marked@1") >= 3)
        workers = {
            str(w)
            for (w,) in rows(folder, "SELECT DISTINCT worker FROM matches WHERE worker IS NOT NULL")
        }
        pids = {int(w.rsplit(":", 1)[1]) for w in workers}
        assert pids and served.process.pid not in pids and os.getpid() not in pids
        served.wait_for("a process of marked on a worker", lambda: bool(processes_with(marker)))
        for action in ("pause", "retire"):
            if action == "retire":  # back first: it plays on the workers again
                assert arena("ladder", "resume", folder, "--name", "marked").returncode == 0
                played = finished(folder, "marked@1")
                served.wait_for(
                    "marked back",
                    lambda n=played: finished(folder, "marked@1") > n,  # type: ignore[misc]
                )
            assert arena("ladder", action, folder, "--name", "marked").returncode == 0
            served.wait_for("its last match to end", lambda: not in_flight(folder, "marked@1"))
            served.wait_for("its processes stopped", lambda: not processes_with(marker), 60)
            before, others = seated(folder, "marked@1"), finished(folder)

            def others_played(others: int = others) -> bool:
                assert not processes_with(marker), "a process of marked started again"
                return finished(folder) >= others + 6

            served.wait_for("matches of the others", others_played)
            assert seated(folder, "marked@1") == before


def rows(folder: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(f"file:{folder / 'ladder.sqlite'}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()
