"""Tests referee.printable through every command that prints what a bot or a replay wrote.

Terminal escapes from bots and replays: a bot's log and a crafted replay that hold a window
title (OSC 0), a clear screen (CSI 2J), a clipboard write (OSC 52) and a C1 CSI reach the
organiser's terminal only as visible escapes (\\x1b...), through `arena play`, `arena bot
check`, `arena tournament run` and `standings`, and `arena replay show`, `step` and `verify`.
Each control prints the same text with visible() replaced by the identity: the raw sequences
come through."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from referee.bots import launcher
from referee.commands import stepper
from referee.hosting import conformance
from referee.hosting.conformance import CheckReport
from referee.printable import visible
from tests.commands.test_replay_and_cli import _replay
from tests.tournaments.web.harness import arena
from tests.trust.crafted import ESCAPES
from tournaments.cli import standings_print
from tournaments.cli.arena_app import app
from tournaments.standings import standings_report
from tournaments.store import Store

RAW = ("\x1b", "\x07", "\x9b")
SHOWN = ("\\x1b]0;pwned\\x07", "\\x1b[2J", "\\x1b]52;c;cHduZWQ=\\x07", "\\x9b31m")

BOT = f"""
import sys
sys.stderr.write("my hand: " + {ESCAPES!r} + "\\n")
sys.stderr.flush()
sys.exit(3)
"""


def assert_escaped(output: str) -> None:
    assert not any(raw in output for raw in RAW), output
    assert all(shown in output for shown in SHOWN), output


def assert_raw(output: str) -> None:
    """The sequences as the terminal would take them (rich drops a bare BEL, not ESC)."""
    assert "\x1b]0;pwned" in output and "\x1b[2J" in output and "\x1b]52;c;" in output, output


def identity(text: str) -> str:
    return text


@pytest.fixture
def escaping_bot(tmp_path: Path) -> str:
    """A bot that prints the sequences to its log and exits before joining."""
    script = tmp_path / "escapes.py"
    script.write_text(BOT)
    return f"cmd:{sys.executable} {script}"


def test_visible_escapes_every_control_character_but_newline_and_tab() -> None:
    every = "".join(map(chr, range(0xA0)))
    shown = visible(every)
    assert [c for c in shown if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0] == ["\t", "\n"]
    assert visible(shown) == shown  # escaping twice changes nothing
    assert visible("Qh ♠ naïve") == "Qh ♠ naïve"


@pytest.mark.timeout(120)
def test_arena_play_shows_a_dead_bots_log_escaped(escaping_bot: str, tmp_path: Path) -> None:
    replays = tmp_path / "replays"
    ran = arena(
        "play", "opposing-force", "--bot", escaping_bot, "--bot", "example:random",
        "--games", "1", "--replays", replays,
    )  # fmt: skip
    assert ran.returncode == 2, ran.stderr
    assert "the end of its log" in ran.stderr
    assert_escaped(ran.stderr + ran.stdout)
    # Control: the same log described without visible() carries the sequences raw.
    [log] = [p for p in (replays / "logs").glob("*.log") if ESCAPES in p.read_text()]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(launcher, "visible", identity)
        assert_raw(launcher.describe_log(log))


@pytest.mark.timeout(120)
def test_arena_bot_check_shows_the_log_tail_escaped(escaping_bot: str) -> None:
    ran = arena("bot", "check", escaping_bot, "--game", "opposing-force", "--games", "2")
    assert ran.returncode == 1, ran.stderr
    assert "The end of its log:" in ran.stdout
    assert_escaped(ran.stdout + ran.stderr)
    # Control: the same verdict (from --json, where JSON escapes the log as \u001b) made
    # into the report's text without visible() carries the sequences raw.
    args = ("bot", "check", escaping_bot, "--game", "opposing-force", "--games", "2", "--json")
    verdict = CheckReport.model_validate_json(arena(*args).stdout)
    assert_raw("\n".join(conformance.report(verdict)))


@pytest.mark.timeout(120)
def test_a_tournament_and_its_standings_show_names_and_causes_escaped(
    escaping_bot: str, tmp_path: Path
) -> None:
    config = tmp_path / "t.toml"
    name = json.dumps("esc" + ESCAPES)  # a TOML basic string is a JSON string
    config.write_text(
        f'name = "t"\ngame = "opposing-force"\n[[bots]]\nname = {name}\nspec = "{escaping_bot}"\n'
        '[[bots]]\nspec = "example:random"\n[format]\nkind = "round-robin"\n'
        "games_per_pairing = 2\n"
    )
    folder = tmp_path / "out"
    ran = arena("tournament", "run", config, "--out", folder, "--no-progress")
    assert ran.returncode == 1, ran.stderr  # the bot never played
    assert "never played" in ran.stderr
    assert_escaped(ran.stdout + ran.stderr)
    shown = arena("tournament", "standings", folder)
    assert shown.returncode == 0, shown.stderr
    assert not any(raw in shown.stdout for raw in RAW)
    assert "esc\\x1b]0;pwned\\x07" in shown.stdout
    # Control: the same standings printed with visible() as the identity carry the name raw.
    store = Store.open(folder, read_only=True)
    report = standings_report(store.config(), store.ledger())
    console = Console(record=True, width=400, markup=False, emoji=False, highlight=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(standings_print, "visible", identity)
        standings_print.print_standings(report, console)
    assert_raw(console.export_text())


def _crafted_replay(tmp_path: Path) -> Path:
    """A real replay whose seat name, public event text, decision label and result reason
    hold the sequences: `show` and `step` re-simulate only the moves, not the text."""
    real = _replay(tmp_path)
    records = [json.loads(line) for line in real.read_text().splitlines()]
    records[0]["seats"][0]["name"] = "local" + ESCAPES
    event = next(r for r in records if r["type"] == "event" and r["audience"] is None)
    event["text"] = "draws" + ESCAPES
    decision = next(r for r in records if r["type"] == "decision")
    decision["label"] = "play" + ESCAPES
    records[-1]["reason"] = "won" + ESCAPES
    path = tmp_path / "escapes.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


@pytest.mark.timeout(60)
def test_replay_show_prints_a_crafted_replays_text_escaped(tmp_path: Path) -> None:
    path = _crafted_replay(tmp_path)
    for viewer in ("public", "referee"):
        ran = arena("replay", "show", path, "--as", viewer)
        assert ran.returncode == 0, ran.stderr
        assert_escaped(ran.stdout)
        assert "local\\x1b]0;pwned" in ran.stdout and "won\\x1b]0;pwned" in ran.stdout
    # Control: the same command with visible() as the identity prints them raw.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("referee.commands.referee_group.visible", identity)
        result = CliRunner().invoke(app, ["replay", "show", str(path), "--as", "referee"])
    assert result.exit_code == 0, result.output
    assert_raw(result.stdout)


def test_replay_step_shows_a_crafted_replays_text_escaped(tmp_path: Path) -> None:
    path = _crafted_replay(tmp_path)
    title, shown = stepper.steps(path, "referee")
    every = "\n".join([title, *(f"{s.heading}\n{s.board}\n{s.events}" for s in shown)])
    assert_escaped(every)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stepper, "visible", identity)
        title, shown = stepper.steps(path, "referee")
    assert_raw("\n".join([title, *(f"{s.heading}\n{s.events}" for s in shown)]))


@pytest.mark.timeout(60)
def test_replay_verify_prints_a_crafted_error_escaped(tmp_path: Path) -> None:
    """pydantic's message quotes an unknown record type as the file wrote it."""
    real = _replay(tmp_path)
    lines = real.read_text().splitlines()
    lines[1] = json.dumps({"type": ESCAPES, "step": 0})
    path = tmp_path / "escapes.jsonl"
    path.write_text("\n".join(lines) + "\n")
    ran = arena("replay", "verify", path)
    assert ran.returncode == 1
    assert len(ran.stderr.strip().splitlines()) == 1, ran.stderr
    assert_escaped(ran.stderr)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("referee.commands.referee_group.visible", identity)
        result = CliRunner().invoke(app, ["replay", "verify", str(path)])
    assert_raw(result.stderr)


def test_log_lines_on_the_terminal_show_a_bots_text_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A forfeit's detail or a name in a log line reaches stderr escaped; control: structlog's
    own console renderer, which the line goes through first, leaves it raw (it quotes a value
    with repr() only when it holds a space, a quote or an '=')."""
    import structlog

    from referee import log_config as arena_logging

    detail = "crash\x1b]0;pwned\x07\x1b[2J"
    arena_logging.configure("info")  # put back after the test (tests/conftest.py)
    structlog.get_logger().warning("forfeit", detail=detail)
    err = capsys.readouterr().err
    assert not any(raw in err for raw in RAW) and "crash\\x1b]0;pwned\\x07\\x1b[2J" in err, err
    render = structlog.dev.ConsoleRenderer(colors=False)
    assert detail in str(render(None, "warning", {"event": "forfeit", "detail": detail}))
