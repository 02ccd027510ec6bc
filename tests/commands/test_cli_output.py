"""The command line read by scripts, through the real `arena` in its own process: --json prints
one JSON document and nothing else; text names files and bots as they are written, markup and
emoji codes included; and nothing is cut or wrapped on a narrow stdout that is not a terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from arena_games import GAMES

# An emoji code and rich markup: both must print as written.
ODD = ":end: [red]"
# A narrow width, as a script's pipe may claim: rich would lay out for it.
NARROW = {"COLUMNS": "30", "LINES": "10"}
# Two classes, neither of them on a base called Bot: no class names it, so its file's stem,
# odd characters and all, is its name (referee/bots/launcher.py bot_name).
ODD_BOT = """
from example_bots.random_bot import RandomBot


class Odd(RandomBot):
    name = "odd"


class Helper:
    pass
"""


def arena(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    return subprocess.run(
        [sys.executable, "-m", "tournaments.cli.arena_app", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env | NARROW,
    )


def cut_or_rendered(text: str) -> list[str]:
    """Signs of rich at work on text it should have left alone: an ellipsis where it cut, the
    emoji of :end:, markup eaten."""
    return [sign for sign in ("…", "\N{END WITH LEFTWARDS ARROW ABOVE}") if sign in text]


def test_games_as_json_as_a_narrow_table_and_in_help(tmp_path: Path) -> None:
    listed = arena("games", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    document = json.loads(listed.stdout)
    assert [g["name"] for g in document["games"]] == list(GAMES)
    assert document["games"][0]["seats"] == list(next(iter(GAMES.values())).seat_counts)
    table = arena("games", cwd=tmp_path)
    assert not cut_or_rendered(table.stdout)
    row = next(line for line in table.stdout.splitlines() if "capture-the-commander" in line)
    assert "Capture the Commander" in row and "2, 3, 4" in row  # one line, whatever the width
    helped = arena("games", "--help", cwd=tmp_path)
    wanted = "games[].seats list of integer the seat counts it is played at"
    assert wanted in [" ".join(line.split()) for line in helped.stdout.splitlines()]


def test_a_usage_error_is_one_line_on_a_narrow_pipe(tmp_path: Path) -> None:
    wrong = arena("play", "opposing-force", "--bot", "example:random", "--games", "0", cwd=tmp_path)
    assert wrong.returncode == 2
    last = wrong.stderr.splitlines()[-1]
    assert last == "Error: Invalid value for '--games': Input should be greater than or equal to 1"


@pytest.mark.timeout(240)
def test_play_show_verify_and_check_print_names_as_written(tmp_path: Path) -> None:
    folder = tmp_path / f"bots {ODD}"
    folder.mkdir()
    bot = folder / "[bold]odd:end:.py"
    bot.write_text(ODD_BOT)
    replays = tmp_path / f"replays {ODD}"
    play = ["play", "opposing-force", "--bot", bot, "--bot", "example:random", "--seed", "3"]

    text = arena(*play, "--replays", replays / "text", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert not cut_or_rendered(text.stdout)
    lines = text.stdout.splitlines()
    assert sum("[bold]odd:end:" in line and line.startswith("match") for line in lines) == 2
    row = next(line for line in lines if line.startswith("│ [bold]odd:end:"))
    assert row.count("│") == 9  # every column of the standings, on one line
    assert f"replays: {replays / 'text'}" in lines
    assert f"log of [bold]odd:end:: {replays / 'text' / 'logs' / '0-[bold]odd:end:.log'}" in (
        line.partition(",")[0] for line in lines
    )

    scripted = arena(*play, "--replays", replays / "json", "--json", cwd=tmp_path)
    assert scripted.returncode == 0, scripted.stderr
    document = json.loads(scripted.stdout)  # the whole of stdout is the one document
    assert document["complete"] and [b["bot"] for b in document["bots"]] == [
        "[bold]odd:end:",
        "random",
    ]
    assert [s["bot"] for s in document["matches"][0]["seats"]] == ["[bold]odd:end:", "random"]
    files = [Path(m["replay"]) for m in document["matches"]]
    assert all(f.is_file() and ODD in str(f) for f in files)

    _show_and_verify(files, tmp_path)
    checked = arena(
        "bot", "check", bot, "--game", "opposing-force", "--games", "2", "--json", cwd=tmp_path
    )
    assert checked.returncode == 0, checked.stderr
    verdict = json.loads(checked.stdout)
    assert verdict["clean"] and verdict["spec"] == str(bot) and verdict["games"] == 2


def _show_and_verify(files: list[Path], cwd: Path) -> None:
    shown = arena("replay", "show", files[0], "--as", "referee", cwd=cwd)
    assert shown.returncode == 0 and not cut_or_rendered(shown.stdout)
    assert "seat 0: [bold]odd:end:" in shown.stdout.splitlines()[0]
    view = json.loads(
        arena("replay", "show", files[0], "--as", "referee", "--json", cwd=cwd).stdout
    )
    assert view["file"] == str(files[0]) and view["seats"][0] == "[bold]odd:end:"
    assert view["result"] is not None and view["table"]
    decisions = [s for s in view["steps"] if s["kind"] == "decision"]
    assert decisions and all(s["label"] and s["text"] in shown.stdout for s in decisions)

    broken = files[1].with_name(f"broken {ODD}.jsonl")
    broken.write_text(files[1].read_text().replace('"label":"play', '"label":"xplay', 1))
    verified = arena("replay", "verify", files[0], broken, cwd=cwd)
    assert verified.returncode == 1
    assert f"ok   {files[0]} (" in verified.stdout
    assert f"FAIL {broken}" in verified.stderr and not cut_or_rendered(verified.stderr)
    report = arena("replay", "verify", files[0], broken, "--json", cwd=cwd)
    assert report.returncode == 1
    document = json.loads(report.stdout)
    assert not document["ok"] and [f["ok"] for f in document["files"]] == [True, False]
    assert document["files"][1]["file"] == str(broken) and "xplay" in document["files"][1]["error"]


def test_a_bad_spec_with_json_is_an_error_on_stderr_and_nothing_on_stdout(tmp_path: Path) -> None:
    failed = arena(
        "play", "opposing-force", "--bot", f"{ODD}.py", "--bot", "x", "--json", cwd=tmp_path
    )
    assert failed.returncode == 2 and failed.stdout == ""
    assert f"{ODD}.py" in failed.stderr and "Traceback" not in failed.stderr
