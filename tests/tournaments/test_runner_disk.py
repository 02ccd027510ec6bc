"""A full disk under `arena tournament run`: its folder on a 48 MB tmpfs of the test's own, and
a bot at tier none that fills the disk to the last byte in the middle of its matches. The runner
waits for space, keeps the results the database refused and commits them, each once, when the
file is removed; the control, its commit unguarded (as before), dies of the first one."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import structlog

from tests.tournaments.ladder.test_disk import FILLER, free_mb, small_disk
from tests.tournaments.test_runner import config
from tournaments.run_progress import NoProgress
from tournaments.runner import RunSummary, run_tournament
from tournaments.store import DATABASE, Store
from tournaments.unsaved import Unsaved

__all__ = ["small_disk"]  # the fixture, shared
MATCHES = 40
WAIT_S = 90.0


def finished(folder: Path) -> int:
    """Matches finished; 0 while the runner's thread has made the file but not yet its tables."""
    with sqlite3.connect(f"file:{folder / DATABASE}?mode=ro", uri=True) as db:
        try:
            return int(db.execute("SELECT COUNT(finished_at) FROM matches").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            return 0


def until(check: Callable[[], bool], runner: threading.Thread) -> None:
    """Until check() holds, or the runner has ended (the control's), within WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while not check() and runner.is_alive():
        assert time.monotonic() < deadline, f"{check} not within {WAIT_S:g} s"
        time.sleep(0.1)


@pytest.mark.timeout(200)
@pytest.mark.parametrize("guarded", [True, False])
def test_a_tournament_waits_out_a_full_disk_and_loses_nothing(
    small_disk: Path, monkeypatch: pytest.MonkeyPatch, guarded: bool
) -> None:
    monkeypatch.setenv("ARENA_FILL_DIR", str(small_disk))  # the bot runs at tier none
    if not guarded:
        # The commit without the guard that catches a full disk's error.
        monkeypatch.setattr(Unsaved, "save", lambda self, p: self.commit(p) or True)
    folder = small_disk / "tournament"
    cfg = config(
        "opposing-force",
        [{"name": "filler", "spec": str(FILLER)}, {"name": "rnd", "spec": "example:random"}],
        games_per_pairing=MATCHES,
        run={"disk_reserve_mb": 16},
    )
    outcome: list[RunSummary | BaseException] = []

    def run() -> None:
        quiet = NoProgress()
        store = Store.create(folder, cfg)  # SQLite: in the thread that uses it
        try:
            outcome.append(run_tournament(folder, store, quiet))
        except BaseException as exc:  # the control's end
            outcome.append(exc)
        finally:
            store.close()

    with structlog.testing.capture_logs() as said:
        runner = threading.Thread(target=run)
        runner.start()
        until(lambda: (folder / DATABASE).exists() and finished(folder) >= 4, runner)
        (small_disk / "fill").touch()  # the bot fills the disk at its next decision
        until(lambda: free_mb(small_disk) < 0.1, runner)
        time.sleep(3)
        alive = runner.is_alive()
        (small_disk / "fill").unlink()
        (small_disk / "bot_filler").unlink(missing_ok=True)
        runner.join(WAIT_S)
    events = [e["event"] for e in said]
    if not guarded:
        assert not alive and isinstance(outcome[0], sqlite3.OperationalError)
        assert "database or disk is full" in str(outcome[0])
        return
    assert alive, f"the runner ended on the full disk: {outcome}"
    summary = outcome[0]
    assert isinstance(summary, RunSummary) and summary.state == "finished"
    assert "disk_low" in events and "result_kept_in_memory" in events
    assert summary.played_now == finished(folder) == MATCHES  # every match recorded, once
