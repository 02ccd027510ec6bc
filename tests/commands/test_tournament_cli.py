"""`arena tournament` and `arena demo` as a user runs them: real processes, clear errors."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ARENA = [sys.executable, "-m", "tournaments.cli.arena_app"]

CONFIG = """
name = "cli"
game = "orc-pit-fighting"
[[bots]]
spec = "example:orc-pit-fighting"
[[bots]]
spec = "example:random"
[format]
kind = "round-robin"
games_per_pairing = 2
"""


def arena(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA, *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


def test_run_then_standings_then_resume_of_a_finished_tournament(tmp_path: Path) -> None:
    config = tmp_path / "cli.toml"
    config.write_text(CONFIG)
    out = tmp_path / "out"
    ran = arena("tournament", "run", config, "--out", out, "--no-progress")
    assert ran.returncode == 0, ran.stderr
    assert "cli (orc-pit-fighting, round-robin): 2/2 matches" in ran.stdout
    assert "Elo" in ran.stdout and "crosstable" in ran.stdout
    assert (out / "config.toml").read_text() == CONFIG
    assert len(list((out / "replays").glob("*.jsonl"))) == 2
    shown = arena("tournament", "standings", out)
    assert shown.returncode == 0 and "state: finished" in shown.stdout
    again = arena("tournament", "resume", out, "--no-progress")
    assert again.returncode == 0 and "2/2 matches" in again.stdout
    twice = arena("tournament", "run", config, "--out", out)
    assert twice.returncode == 2 and "already holds a tournament" in twice.stderr


def test_bad_input_is_a_clear_error_never_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(CONFIG.replace('kind = "round-robin"', 'kind = "round-robin"\nseats = 5'))
    cases = [
        (("tournament", "run", bad), "format.round-robin.seats: Input should be less than"),
        (("tournament", "run", tmp_path / "none.toml"), "cannot read"),
        (("tournament", "resume", tmp_path), "holds no tournament"),
        (("tournament", "standings", tmp_path / "nowhere"), "holds no tournament"),
    ]
    (tmp_path / "afile").write_text("a file where the tournament's folder should be")
    good = tmp_path / "good.toml"
    good.write_text(CONFIG)
    cases.append(
        (("tournament", "run", good, "--out", tmp_path / "afile" / "out"), "Not a directory")
    )
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "tournament.sqlite").write_text("not a database")
    cases.append((("tournament", "standings", tmp_path / "junk"), "not a tournament database"))
    for args, message in cases:
        result = arena(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_demo_plays_a_round_robin_in_every_game(tmp_path: Path) -> None:
    shown = arena("demo", "--games-per-pairing", "2", "--out", tmp_path / "demo", timeout=300)
    assert shown.returncode == 0, shown.stderr
    for game in (
        "opposing-force",
        "capture-the-commander",
        "officers-battle",
        "orc-pit-fighting",
        "strato-sphere",
    ):
        assert f"demo-{game} ({game}, round-robin): 6/6 matches" in shown.stdout
        assert len(list((tmp_path / "demo" / game / "replays").glob("*.jsonl"))) == 6


def test_a_bot_that_never_played_fails_the_run_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import no_such_module_anywhere\n")
    config = tmp_path / "cli.toml"
    config.write_text(CONFIG.replace('spec = "example:random"', 'spec = "broken.py"'))
    out = tmp_path / "out"
    ran = arena("tournament", "run", config, "--out", out, "--no-progress")
    assert ran.returncode == 1, ran.stderr
    assert "2/2 matches" in ran.stdout  # played out: every match a forfeit of the broken bot
    said = ran.stderr
    assert "error: bot broken never played: exited with code 1 before joining the referee" in said
    assert f"the end of its log {out / 'logs'}/broken-" in said
    assert "ModuleNotFoundError: No module named 'no_such_module_anywhere'" in said
    # The path is for the console: the seats were told (in the result) only to see its log.
    result = json.loads(next((out / "replays").glob("*.jsonl")).read_text().splitlines()[-1])
    [(cause, detail)] = result["forfeits"].values()
    assert (cause, detail) == ("no_show", "exited with code 1 before joining (see its log)")


def test_a_saved_configuration_this_arena_refuses_is_a_clear_error(tmp_path: Path) -> None:
    """Capture the Commander's teams at three seats passed validation once, and failed every
    match: such a tournament is refused on resume, with the reason, not with a traceback."""
    config = tmp_path / "cli.toml"
    config.write_text(CONFIG)
    out = tmp_path / "out"
    assert arena("tournament", "run", config, "--out", out, "--no-progress").returncode == 0
    with sqlite3.connect(out / "tournament.sqlite") as db:
        [(saved,)] = db.execute("SELECT value FROM meta WHERE key = 'config'").fetchall()
        raw = json.loads(saved)
        raw["game"], raw["options"] = "capture-the-commander", {"teams": True}
        raw["format"].update(seats=3, games_per_pairing=3)
        db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(raw),))
    for command in ("resume", "standings"):
        refused = arena("tournament", command, out)
        assert refused.returncode == 2, refused.stderr
        assert "holds a configuration this arena refuses" in refused.stderr
        assert "teams needs exactly 4 seats" in refused.stderr
        assert "Traceback" not in refused.stderr


PAUSING = Path(__file__).resolve().parent.parent / "bots" / "pausing_bot.py"


def finished_rows(folder: Path) -> int:
    try:
        with sqlite3.connect(f"file:{folder / 'tournament.sqlite'}?mode=ro", uri=True) as db:
            [(count,)] = db.execute(
                "SELECT COUNT(*) FROM matches WHERE finished_at IS NOT NULL"
            ).fetchall()
    except sqlite3.OperationalError:  # not created yet
        return 0
    return int(count)


@pytest.mark.timeout(120)
def test_replays_that_cannot_be_written_mid_run_lose_no_result(tmp_path: Path) -> None:
    # Each process of the pausing bot thinks for a second in its second match (the third and
    # fourth of the run): the replays' folder goes away meanwhile.
    pausing = f"cmd:{sys.executable} {PAUSING} 1"
    config = tmp_path / "cli.toml"
    config.write_text(
        CONFIG.replace('spec = "example:random"', f"spec = {json.dumps(pausing)}").replace(
            "games_per_pairing = 2", "games_per_pairing = 4\n[run]\nconcurrency = 1"
        )
    )
    out = tmp_path / "out"
    runner = subprocess.Popen(
        [*ARENA, "tournament", "run", str(config), "--out", str(out), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while finished_rows(out) < 2:
            assert time.monotonic() < deadline, "two matches did not finish"
            time.sleep(0.02)
        (out / "replays").rename(tmp_path / "gone")
        (out / "replays").write_text("")
        stdout, stderr = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, stderr
    assert "4/4 matches" in stdout
    assert "warning: 2 matches have no replay" in stderr and "their results count" in stderr
    with sqlite3.connect(out / "tournament.sqlite") as db:
        replays = [row[0] for row in db.execute("SELECT replay FROM matches ORDER BY seq")]
    assert [r is None for r in replays] == [False, False, True, True]
    log = (out / "tournament.log").read_text()
    assert log.count('"event": "replay_not_written"') == 2 and "is not a folder" in log
