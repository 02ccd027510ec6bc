"""`arena tournament run` of a bracket killed with SIGKILL mid-bracket, then `arena tournament
resume`: the bracket ends with the same matches as an unbroken run, each played (and
committed) once: a knockout at two seats and at four, a double elimination at two seats and at
four, each reaching its reset. The scheduler's own control, a scheduler blind to the matches
in flight, is in test_knockout.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

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


def _toml(bots: list[dict[str, str]], fmt: str, game: str = "capture-the-commander") -> str:
    entries = "".join(f'[[bots]]\nspec = "{b["spec"]}"\nname = "{b["name"]}"\n' for b in bots)
    return (
        f'name = "killed-cup"\ngame = "{game}"\nseed = 4\noutput = "out"\n'
        f"{entries}[format]\n{fmt}\n"
        "[time_control]\ndecision_ms = 5000\n[run]\nconcurrency = 2\n"
    )


def killed_and_resumed(tmp_path: Path, toml: str, kill_after: int, total: int) -> Path:
    """The tournament run, killed with SIGKILL once `kill_after` matches have finished (fewer
    than `total`), then resumed to its end; its folder."""
    (tmp_path / "cup.toml").write_text(toml)
    folder = tmp_path / "out"
    runner = subprocess.Popen(
        [*ARENA, "tournament", "run", str(tmp_path / "cup.toml"), "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=marked(folder, ARENA_SCRIPTED_S="0.02"),  # slow enough for the kill to land mid-way
    )
    try:
        wait_for(lambda: len(finished(folder)) >= kill_after, 120, f"{kill_after} matches")
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(10)
    finally:
        if runner.poll() is None:
            runner.kill()
    before = {row[0] for row in finished(folder)}
    assert kill_after <= len(before) < total, "the kill must land mid-bracket"
    sweep_orphans(folder)

    resumed = subprocess.run(
        [*ARENA, "tournament", "resume", str(folder), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert resumed.returncode == 0, resumed.stderr
    wait_for(lambda: not bot_processes(folder), 20, "the resumed runner's bots to end")
    return folder


def sweep_orphans(folder: Path) -> None:
    """Kill the killed runner's orphaned bots (they would exit anyway), until none is seen for
    a second: one forked the moment the runner died carries its token only once it has
    exec'd, after a first look."""
    quiet = 0
    while quiet < 10:
        found = bot_processes(folder)
        for pid in found:
            os.kill(pid, signal.SIGKILL)
        quiet = 0 if found else quiet + 1
        time.sleep(0.1)


def played_once(folder: Path) -> list[str]:
    """Every match finished, checked to be in the log of finished matches exactly once across
    both runners (none lost, none played twice); sorted."""
    after = sorted(row[0] for row in finished(folder))
    events = [json.loads(line) for line in (folder / "tournament.log").read_text().splitlines()]
    done = [e["match_id"] for e in events if e["event"] == "match_finished"]
    assert sorted(done) == after
    return after


def standings(folder: Path) -> dict[str, Any]:
    shown = subprocess.run(
        [*ARENA, "tournament", "standings", str(folder), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    bracket: dict[str, Any] = json.loads(shown.stdout)["bracket"]
    return bracket


def matches_of(tables: list[str], seats: int) -> list[str]:
    """One deal at each table, in every seating."""
    return sorted(f"{table}-g{game}" for table in tables for game in range(seats))


@pytest.mark.timeout(300)
def test_a_knockout_killed_mid_bracket_resumes_without_repeat_or_loss(tmp_path: Path) -> None:
    unbroken, _ = play(tmp_path / "unbroken", _raw(tmp_path / "unbroken"))
    expected = sorted(unbroken.ledger.scheduled)
    bots = scripted_bots(tmp_path, LOSING)
    toml = _toml(bots, 'kind = "knockout"\ntiebreak_deals = 2')
    folder = killed_and_resumed(tmp_path, toml, 4, len(expected))
    assert played_once(folder) == expected
    assert standings(folder)["champion"] == "s2"


@pytest.mark.timeout(300)
def test_a_double_elimination_killed_before_its_reset_resumes_through_it(
    tmp_path: Path,
) -> None:
    # Five bots (test_knockout_runs.py's reset): s2 loses the winners' final to s1, wins the
    # losers' final, then beats s1 in the grand final (a reset) and again in the reset.
    losing = {
        "s1": {"GF": 0, "GF2": 0},
        "s2": {"W3-T1": 0},
        "s3": {"W2-T2": 0, "L4-T1": 0},
        "s4": {"W2-T1": 0, "L3-T1": 0},
        "s5": {"W1-T4": 0, "L2-T1": 0},
    }
    played = ["W1-T4", "W2-T1", "W2-T2", "L2-T1", "L3-T1", "W3-T1", "L4-T1", "GF", "GF2"]
    expected = matches_of(played, 2)
    toml = _toml(scripted_bots(tmp_path, losing), 'kind = "double-elimination"')
    folder = killed_and_resumed(tmp_path, toml, 6, len(expected))
    assert played_once(folder) == expected
    assert standings(folder)["champion"] == "s2"


@pytest.mark.timeout(300)
def test_a_four_seat_knockout_killed_mid_bracket_resumes_without_repeat_or_loss(
    tmp_path: Path,
) -> None:
    # W1-T1 holds seeds 1, 4, 5, 8 and W1-T2 seeds 2, 3, 6, 7: the two told to lose at each
    # forfeit; in the final all but s6 forfeit.
    losing = {f"s{n}": {"W2-T1": 0} for n in range(1, 9)}
    for name in ("s1", "s8", "s2", "s7"):
        losing[name] = {"W1-T1": 0, "W1-T2": 0}
    del losing["s6"]["W2-T1"]
    expected = matches_of(["W1-T1", "W1-T2", "W2-T1"], 4)
    toml = _toml(scripted_bots(tmp_path, losing), 'kind = "knockout"\nseats = 4', "strato-sphere")
    folder = killed_and_resumed(tmp_path, toml, 3, len(expected))
    assert played_once(folder) == expected
    assert standings(folder)["champion"] == "s6"


@pytest.mark.timeout(300)
def test_a_four_seat_double_elimination_killed_mid_bracket_resumes_through_its_reset(
    tmp_path: Path,
) -> None:
    # W1: s5, s8 and s6, s7 drop; W2 (1-4): s3, s4 drop, s1 and s2 reach the grand final;
    # L1 (5-8): s5, s6 go on; L2 (s5, s6, s3, s4): s3, s4 reach the grand final, where s3
    # wins from the losers' side (a reset) and wins the reset.
    losing: dict[str, dict[str, int]] = {
        "s1": {"GF": 0, "GF2": 0},
        "s2": {"GF": 0, "GF2": 0},
        "s3": {"W2-T1": 0},
        "s4": {"W2-T1": 0, "GF": 0, "GF2": 0},
        "s5": {"W1-T1": 0, "L2-T1": 0},
        "s6": {"W1-T2": 0, "L2-T1": 0},
        "s7": {"W1-T2": 0, "L1-T1": 0},
        "s8": {"W1-T1": 0, "L1-T1": 0},
    }
    expected = matches_of(["W1-T1", "W1-T2", "L1-T1", "W2-T1", "L2-T1", "GF", "GF2"], 4)
    fmt = 'kind = "double-elimination"\nseats = 4'
    toml = _toml(scripted_bots(tmp_path, losing), fmt, "strato-sphere")
    folder = killed_and_resumed(tmp_path, toml, 6, len(expected))
    assert played_once(folder) == expected
    bracket = standings(folder)
    assert bracket["champion"] == "s3"
    tables = {t["table_id"]: t for r in bracket["rounds"] for t in r["tables"]}
    grand = [e["bot"] for e in tables["GF"]["entrants"]]
    assert sorted(grand) == ["s1", "s2", "s3", "s4"]


def _raw(folder: Path) -> dict[str, object]:
    folder.mkdir()
    return bracket_config(scripted_bots(folder, LOSING), {"kind": "knockout", "tiebreak_deals": 2})
