"""`arena tournament run` of a knockout killed with SIGKILL mid-bracket, then `arena tournament
resume`: the bracket ends with the same matches as an unbroken run, each played (and
committed) once. The scheduler's own control, a scheduler blind to the matches in flight, is
in test_knockout.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from tests.tournaments.bracket_script import bracket_config, scripted_bots
from tests.tournaments.test_knockout_runs import ARENA, play
from tests.tournaments.test_resume import bot_processes, finished, marked, wait_for

LOSING = {
    "s1": {"W3-T1": 0},
    "s2": {},
    "s3": {"W2-T2": 0},
    "s4": {"W1-T4": 0},
    "s5": {"W2-T1": 0},
    "s6": {"W1-T3": 2},
    "s7": {},
    "s8": {"W1-T1": 0},
}


def _toml(bots: list[dict[str, str]]) -> str:
    entries = "".join(f'[[bots]]\nspec = "{b["spec"]}"\nname = "{b["name"]}"\n' for b in bots)
    return (
        'name = "killed-cup"\ngame = "capture-the-commander"\nseed = 4\noutput = "out"\n'
        f'{entries}[format]\nkind = "knockout"\ntiebreak_deals = 2\n'
        "[time_control]\ndecision_ms = 5000\n[run]\nconcurrency = 2\n"
    )


def test_a_knockout_killed_mid_bracket_resumes_without_repeat_or_loss(tmp_path: Path) -> None:
    unbroken, _ = play(tmp_path / "unbroken", _raw(tmp_path / "unbroken"))
    expected = sorted(unbroken.ledger.scheduled)

    bots = scripted_bots(tmp_path, LOSING)
    (tmp_path / "cup.toml").write_text(_toml(bots))
    folder = tmp_path / "out"
    runner = subprocess.Popen(
        [*ARENA, "tournament", "run", str(tmp_path / "cup.toml"), "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=marked(folder, ARENA_SCRIPTED_S="0.02"),  # slow enough for the kill to land mid-way
    )
    try:
        wait_for(lambda: len(finished(folder)) >= 4, 120, "four finished matches")
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(10)
    finally:
        if runner.poll() is None:
            runner.kill()
    before = {row[0] for row in finished(folder)}
    assert 4 <= len(before) < len(expected), "the kill must land mid-bracket"
    for pid in bot_processes(folder):  # the killed runner's orphans (they would exit anyway)
        os.kill(pid, signal.SIGKILL)

    resumed = subprocess.run(
        [*ARENA, "tournament", "resume", str(folder), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert resumed.returncode == 0, resumed.stderr
    after = finished(folder)
    assert sorted(row[0] for row in after) == expected
    events = [json.loads(line) for line in (folder / "tournament.log").read_text().splitlines()]
    done = [e["match_id"] for e in events if e["event"] == "match_finished"]
    assert sorted(done) == expected  # across both runners: none lost, none played twice
    shown = subprocess.run(
        [*ARENA, "tournament", "standings", str(folder), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(shown.stdout)["bracket"]["champion"] == "s2"
    assert not bot_processes(folder)


def _raw(folder: Path) -> dict[str, object]:
    folder.mkdir()
    return bracket_config(scripted_bots(folder, LOSING), {"kind": "knockout", "tiebreak_deals": 2})
