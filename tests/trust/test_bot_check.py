"""Tests referee.hosting.conformance and referee.commands.bot_group (`arena bot check`).

`arena bot check`: real bot processes against the random bot over gRPC. A sound bot passes
with exit code 0; each kind of misbehaviour gets its own plain-words finding and exit code 1;
bad input gets a clear error and exit code 2."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from arena_games.match_settings import MatchSettings
from typer.testing import CliRunner

from referee.bots.launcher import parse_spec
from referee.bots.sandbox import probe_bubblewrap
from referee.commands.bot_group import bot_app
from referee.hosting.conformance import CheckRun, findings
from tests.e2e.conftest import RAWBOT

GAME = ["--game", "opposing-force"]
QUICK = ["--decision-ms", "300", "--time-bank-ms", "200"]


def check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(bot_app, ["check", *args])
    return result.exit_code, result.output


def rawbot(mode: str) -> str:
    return f"cmd:{sys.executable} {RAWBOT} {mode}"


@pytest.mark.timeout(60)
def test_the_example_strategy_bot_passes() -> None:
    code, out = check("example:opposing-force", *GAME, "--games", "2")
    assert code == 0, out
    assert "played 2 games of opposing-force" in out
    assert "as seat 0 of 2, seat 1 of 2." in out
    assert "decisions: median" in out
    assert "No problems found." in out


@pytest.mark.timeout(60)
@pytest.mark.skipif(probe_bubblewrap() is not None, reason="bubblewrap cannot run here")
def test_the_check_runs_a_bot_in_a_sandbox() -> None:
    code, out = check("example:random", *GAME, "--games", "2", "--sandbox", "bubblewrap")
    assert code == 0, out
    assert "No problems found." in out


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("mode", "finding", "detail"),
    [
        ("illegal", "It chose an action that was not legal and forfeited 2 of 2 games", "index"),
        ("hang", "It did not answer in time and forfeited 2 of 2 games", "no answer within 300"),
        (
            "exit",
            "It crashed or closed its connection and forfeited 2 of 2 games",
            "[arena] the bot's process exited with code 3",
        ),
    ],
)
def test_each_misbehaviour_gets_its_finding(mode: str, finding: str, detail: str) -> None:
    code, out = check(rawbot(mode), *GAME, "--games", "2", *QUICK)
    assert code == 1, out
    assert finding in out
    assert detail in out
    assert "No problems found." not in out


@pytest.mark.timeout(60)
def test_a_bot_that_never_joins_is_named_so() -> None:
    code, out = check("cmd:sleep 60", *GAME, "--games", "1", "--join-timeout-s", "0.5")
    assert code == 1, out
    assert "It never joined the referee and forfeited 2 of 2 games" in out
    assert "did not join within" in out


@pytest.mark.timeout(60)
def test_a_bot_that_dies_at_import_is_a_finding_at_once(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import no_such_module_anywhere\n")
    started = time.monotonic()
    code, out = check(str(broken), *GAME, "--games", "2")
    assert time.monotonic() - started < 10  # not the 20 s join timeout
    assert code == 1, out
    assert (
        "It never joined the referee and forfeited 2 of 2 games (first time: exited with code 1 "
        "before joining (see its log))." in out
    )
    assert "ModuleNotFoundError: No module named 'no_such_module_anywhere'" in out


def test_slow_decisions_and_ignored_messages_are_findings() -> None:
    run = CheckRun(parse_spec("example:random"), "opposing-force", MatchSettings(decision_ms=100))
    run.games, run.times_ms = 1, [20.0, 150.0, 90.0, 400.0]
    run.notices = ["decision 7 was not asked or has expired"]
    assert findings(run) == [
        "2 of 4 decisions took longer than the 100 ms allowed per decision and drew on the "
        "time bank (slowest 400 ms).",
        "The referee ignored 1 of its messages (first: decision 7 was not asked or has expired).",
    ]
    run.times_ms = [20.0, 90.0]
    run.notices = []
    assert findings(run) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["example:random", "--game", "chess"], "chess"),
        (["nobot.py", *GAME], "is not a bot"),
        (["example:nobody", *GAME], "no example bot 'nobody'"),
    ],
)
def test_bad_input_is_a_clear_error(args: list[str], message: str) -> None:
    code, out = check(*args)
    assert code == 2
    assert "error:" in out and message in out
    assert "Traceback" not in out


def test_a_keep_folder_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("a file where the folder should be")
    code, out = check("example:random", *GAME, "--keep", str(tmp_path / "afile" / "keep"))
    assert code == 2, out
    assert "error: cannot write replays and logs to" in out and "Not a directory" in out
    assert "Traceback" not in out
