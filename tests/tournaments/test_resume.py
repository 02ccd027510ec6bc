"""A runner killed with SIGKILL mid-tournament, then resumed: no finished match is lost or played
twice, the matches in flight are played again, and no bot process is left behind."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.replays.verify import verify
from tournaments.config import load_config
from tournaments.schedule import Ledger, scheduler_for

ARENA = [sys.executable, "-m", "tournaments.cli.arena_app"]

CONFIG = """
name = "killed"
game = "opposing-force"
seed = 5
output = "out"

[[bots]]
spec = "example:opposing-force"
[[bots]]
spec = "example:random"
[[bots]]
spec = "SLEEPY"

[format]
kind = "round-robin"
games_per_pairing = 8

[time_control]
decision_ms = 120000  # the sleepy bot may be held at its gate while the test looks

[run]
concurrency = 2
"""


SLEEPY = Path(__file__).resolve().parent.parent / "bots" / "sleepy_bot.py"


def write_config(path: Path, name: str) -> None:
    path.write_text(CONFIG.replace("SLEEPY", str(SLEEPY)).replace('"killed"', f'"{name}"'))


def finished(folder: Path) -> list[tuple[str, str, str, str]]:
    database = folder / "tournament.sqlite"
    if not database.exists():
        return []
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
            rows = db.execute(
                "SELECT match_id, finished_at, worker, ranks FROM matches "
                "WHERE finished_at IS NOT NULL ORDER BY match_id"
            ).fetchall()
    except sqlite3.OperationalError:  # created but the schema is not committed yet
        return []
    return [tuple(row) for row in rows]


MARK = "ARENA_TEST_FOLDER"  # in a runner's environment, so in its bots': whose they are


def marked(folder: Path, **env: str) -> dict[str, str]:
    """The environment of a runner whose bots bot_processes(folder) finds."""
    return dict(os.environ, **env, **{MARK: str(folder)})


def bot_processes(folder: Path) -> list[int]:
    """The bots (processes with a seat's token) of a runner started with marked(folder): their
    output goes to a pipe, but they inherit its environment, and keep it once orphaned."""
    wanted = f"{MARK}={folder}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            values = environ.read_bytes().split(b"\0")
        except OSError:
            continue
        if wanted in values and any(v.startswith(b"ARENA_TOKEN=") for v in values):
            found.append(int(environ.parts[2]))
    return found


def arena_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *args], capture_output=True, text=True, timeout=60)


def wait_for(condition: object, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def test_resume_after_kill_9_loses_and_repeats_nothing(tmp_path: Path) -> None:
    config_file = tmp_path / "killed.toml"
    write_config(config_file, "killed")
    folder = tmp_path / "out"
    gate = tmp_path / "gate"
    gate.touch()
    runner = subprocess.Popen(
        [*ARENA, "tournament", "run", str(config_file), "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=marked(folder, ARENA_SLEEPY_S="0.05", ARENA_SLEEPY_GATE=str(gate)),
    )
    try:
        wait_for(lambda: len(finished(folder)) >= 5, 120, "five finished matches")
        # The sleepy bot's matches are held in flight from here, however long the checks below
        # take on a loaded machine: the kill lands mid-tournament.
        gate.unlink()
        # Standings can be read while the runner writes.
        shown = subprocess.run(
            [*ARENA, "tournament", "standings", str(folder)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert shown.returncode == 0, shown.stderr
        assert "/24 matches" in shown.stdout
        assert f"state: running (pid {runner.pid} on " in shown.stdout
        # One runner at a time: a second one is refused while the first lives.
        second = arena_run("tournament", "resume", str(folder), "--no-progress")
        assert second.returncode == 2 and "Traceback" not in second.stderr, second.stderr
        assert f"{folder} is being run by pid {runner.pid} on " in second.stderr
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(10)
    finally:
        gate.touch()  # the orphaned bots answer, find their referee gone, and end
        if runner.poll() is None:
            runner.kill()
    before = finished(folder)
    assert 5 <= len(before) < 24, "the kill must land mid-tournament"
    # The database still says running; the lock, released with the process, says otherwise.
    shown = arena_run("tournament", "standings", str(folder))
    assert f"state: stopped: the runner (pid {runner.pid} on " in shown.stdout
    assert f"is gone; `arena tournament resume {folder}` continues it" in shown.stdout

    # The orphaned bots lose their referee and exit on their own: a bot that was joining when
    # the runner died waits out the SDK's join timeout (30 s), one that had joined its rejoin
    # grace (10 s); no bot outlives both.
    wait_for(lambda: not bot_processes(folder), 45, "the killed runner's bots to exit")

    resumed = subprocess.run(
        [*ARENA, "tournament", "resume", str(folder), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert resumed.returncode == 0, resumed.stderr
    after = finished(folder)
    expected = scheduler_for(load_config(config_file), b"s" * 32).next_jobs(Ledger()) or []
    assert sorted(row[0] for row in after) == sorted(job.match_id for job in expected)
    # What finished before the kill is untouched: not lost, not played again.
    assert set(before) <= set(after)
    events = [json.loads(line) for line in (folder / "tournament.log").read_text().splitlines()]
    starts = [i for i, e in enumerate(events) if e["event"] == "tournament_started"]
    assert len(starts) == 2
    replayed = [e["match_id"] for e in events[starts[1] :] if e["event"] == "match_finished"]
    # The resumed runner plays exactly the matches that had not finished, each once.
    assert sorted(replayed) == sorted(set(row[0] for row in after) - {row[0] for row in before})
    assert len(replayed) == len(set(replayed))
    for replay in (folder / "replays").glob("*.jsonl"):
        verify(replay)
    with sqlite3.connect(folder / "tournament.sqlite") as db:
        kept = {Path(row[0]) for row in db.execute("SELECT replay FROM matches")}
    assert len(kept) == 24 and all(path.is_file() for path in kept)
    # A replay beside them can only be of an attempt the kill cut off between its replay and
    # its commit: never replaced, it is kept under the next free name.
    for extra in set((folder / "replays").glob("*.jsonl")) - kept:
        assert extra.name.split(".")[0] in {row[0] for row in after}, extra
    assert not bot_processes(folder)


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_stops_cleanly_and_resume_finishes(
    tmp_path: Path, stop: signal.Signals, code: int
) -> None:
    """Ctrl-C, and SIGTERM as a service manager sends it, stop the runner the same way."""
    config_file = tmp_path / "stopped.toml"
    write_config(config_file, "stopped")
    folder = tmp_path / "out"
    runner = subprocess.Popen(
        [*ARENA, "tournament", "run", str(config_file), "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=marked(folder),
    )
    try:
        wait_for(lambda: len(finished(folder)) >= 2, 120, "two finished matches")
        runner.send_signal(stop)
        _, stderr = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == code and "arena tournament resume" in stderr
    assert not bot_processes(folder)  # stopped with the runner, not orphaned
    state = subprocess.run(
        [*ARENA, "tournament", "standings", str(folder)], capture_output=True, text=True
    )
    assert "state: interrupted" in state.stdout
    resumed = subprocess.run(
        [*ARENA, "tournament", "resume", str(folder), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert len(finished(folder)) == 24
