"""Tests referee.hosting.conformance and referee.commands.bot_group (`arena bot check`).

`arena bot check`: real bot processes against the random bot over gRPC. A sound bot passes
with exit code 0; each kind of misbehaviour gets its own plain-words finding and exit code 1;
bad input gets a clear error and exit code 2."""

from __future__ import annotations

import json
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


@pytest.mark.timeout(60)
def test_a_bot_that_exits_mid_game_is_named_with_its_exit_code() -> None:
    """Issue 38: the finding names the exit code, as the forfeit does, not a stream that ended."""
    code, out = check(rawbot("exit"), *GAME, "--games", "2", *QUICK)
    assert code == 1, out
    assert "(first time: its process exited with code 3, which ended its stream)" in out


@pytest.mark.timeout(90)
def test_drop_the_sdk_bot_joins_again_after_its_connection_is_cut_and_finishes() -> None:
    """--drop resets the example bot's connection at its 3rd decision (both sides, no goodbye):
    the SDK joins again with its token within the grace and the game goes on."""
    code, out = check("example:opposing-force", *GAME, "--games", "2", "--drop", "--json")
    assert code == 0, out
    verdict = json.loads(out[out.index("{\n") :])  # after the referee's log lines
    drop = verdict["drop"]
    assert drop["came_back"] and drop["finished"], drop
    assert drop["cut_at_decision"] == 3 and drop["game"] == 1
    assert 0 < drop["back_after_s"] < drop["grace_s"]
    assert verdict["clean"] and verdict["games"] == 2


@pytest.mark.timeout(90)
def test_control_drop_a_bot_that_does_not_reconnect_is_reported_not_back() -> None:
    """The raw-wire bot exits when its stream breaks: the same cut finds it not back."""
    code, out = check(rawbot("play"), *GAME, "--games", "2", "--drop", "--drop-grace-s", "2")
    assert code == 1, out
    assert "Its connection was cut at its decision 3 of game 1: it did not come back within" in out
    assert "It did not come back within the 2 s grace after its connection was cut" in out


@pytest.mark.timeout(90)
@pytest.mark.skipif(probe_bubblewrap() is not None, reason="bubblewrap cannot run here")
def test_drop_in_bubblewrap_cuts_the_unix_socket_and_the_bot_comes_back() -> None:
    """In bubblewrap the bot has no network: the relay listens on a Unix socket of its own."""
    args = ("example:opposing-force", *GAME, "--games", "2", "--drop", "--sandbox", "bubblewrap")
    code, out = check(*args)
    assert code == 0, out
    assert "Its connection was cut at its decision 3 of game 1: it came back after" in out
