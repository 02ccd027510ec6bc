"""Tests referee.wire.server and referee.wire.sessions: a forfeit for a stream that ended says
what the referee saw, the exit code or the signal of a process it started, a half-close, a
cancel, a message over the limit, and no more than it saw.

Each bot is a real process on a real referee on 127.0.0.1 (tests/bots/stream_ender.py); the
control of each process end is the same bot connected as a remote bot, whose process the
referee does not hold: its forfeit names no exit."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from arena_games import get_game
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings

from referee.bots.launcher import BotSpec, parse_spec, start_bot, stop_bot
from referee.hosting.series import SeriesPlan, run_series
from referee.matches.match import MatchOutcome
from referee.wire import server
from referee.wire.server import MAX_MESSAGE_BYTES, RefereeServer, start_server
from referee.wire.sessions import BotSession
from tests.e2e.conftest import rawbot

GAME = get_game("opposing-force")
ENDER = Path(__file__).resolve().parents[2] / "bots" / "stream_ender.py"
SETTINGS = MatchSettings(decision_ms=5000, time_bank_ms=5000)


def ender(mode: str) -> BotSpec:
    return parse_spec(f"cmd:{sys.executable} {ENDER} {mode}")


def one_match(first: BotSpec, tmp_path: Path) -> MatchOutcome:
    """One match of the stream ender (the referee starts it) against a random bot."""
    plan = SeriesPlan(
        GAME,
        [first, rawbot("play")],
        1,
        secret=practice_secret(3),
        replays=tmp_path,
        settings=SETTINGS,
        duplicate_deals=False,
    )
    [(outcome, _)] = asyncio.run(asyncio.wait_for(run_series(plan), 60))
    return outcome


def remote_match(mode: str, tmp_path: Path) -> MatchOutcome:
    """The control: the same bot as a remote one, started by the test with its token."""
    remote = BotSpec("remote", "ender", ())

    async def scenario() -> MatchOutcome:
        server = await start_server("127.0.0.1:0")
        started: list[asyncio.subprocess.Process] = []

        def launch(_: RefereeServer, sessions: list[list[BotSession]]) -> None:
            token = sessions[0][0].token
            starting = start_bot(ender(mode), server.address, token, tmp_path / "ender.log")
            task = asyncio.ensure_future(starting)
            task.add_done_callback(lambda done: started.append(done.result()))

        plan = SeriesPlan(
            GAME,
            [remote, rawbot("play")],
            1,
            secret=practice_secret(3),
            replays=tmp_path,
            settings=SETTINGS,
            duplicate_deals=False,
        )
        try:
            [(outcome, _)] = await asyncio.wait_for(
                run_series(plan, server=server, on_sessions=launch), 60
            )
            return outcome
        finally:
            for process in started:
                await stop_bot(process, grace_s=0)
            await server.stop()

    return asyncio.run(scenario())


def forfeit_of(outcome: MatchOutcome) -> tuple[str, str]:
    [forfeit] = outcome.forfeits
    return forfeit.cause.value, forfeit.detail


@pytest.mark.timeout(120)
def test_a_bot_that_exits_with_code_7_forfeits_saying_so(tmp_path: Path) -> None:
    cause, detail = forfeit_of(one_match(ender("exit7"), tmp_path))
    assert cause == "crash"
    assert detail == "its process exited with code 7, which ended its stream"


@pytest.mark.timeout(120)
def test_control_the_same_exit_of_a_remote_bot_names_no_exit_code(tmp_path: Path) -> None:
    cause, detail = forfeit_of(remote_match("exit7", tmp_path))
    assert cause == "crash"
    assert "code 7" not in detail and "CANCELLED" in detail, detail


@pytest.mark.timeout(120)
def test_a_bot_killed_by_sigkill_forfeits_naming_the_signal(tmp_path: Path) -> None:
    cause, detail = forfeit_of(one_match(ender("sigkill"), tmp_path))
    assert cause == "crash"
    assert "its process was killed by signal 9 (SIGKILL)" in detail, detail


@pytest.mark.timeout(120)
def test_a_half_closed_stream_is_named_while_the_process_lives(tmp_path: Path) -> None:
    cause, detail = forfeit_of(one_match(ender("halfclose"), tmp_path))
    assert cause == "crash"
    assert detail.startswith("it half-closed its stream"), detail
    assert detail.endswith("while its process still ran"), detail
    assert "CANCELLED" not in detail and "exited" not in detail


@pytest.mark.timeout(120)
def test_a_cancelled_call_is_named_cancelled_while_the_process_lives(tmp_path: Path) -> None:
    cause, detail = forfeit_of(one_match(ender("cancel"), tmp_path))
    assert cause == "crash"
    assert "its stream was cancelled (CANCELLED)" in detail, detail
    assert detail.endswith("while its process still ran"), detail
    assert "half-closed" not in detail


@pytest.mark.timeout(120)
def test_a_message_over_the_limit_is_named_with_its_size(tmp_path: Path) -> None:
    cause, detail = forfeit_of(one_match(ender("huge"), tmp_path))
    assert cause == "malformed"
    assert f"over the referee's limit of {MAX_MESSAGE_BYTES} bytes" in detail, detail
    # and only then: the other ends never say so
    for mode in ("exit7", "halfclose"):
        _, other = forfeit_of(one_match(ender(mode), tmp_path / mode))
        assert f"limit of {MAX_MESSAGE_BYTES}" not in other


@pytest.mark.timeout(120)
def test_control_with_grpc_reading_only_up_to_the_limit_the_message_goes_unnamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard off: grpc's own limit at the referee's, as before. grpc drops the message
    unread and cancels the call, and the referee can say only that the call was cancelled."""
    monkeypatch.setattr(server, "GRPC_MESSAGE_BYTES", MAX_MESSAGE_BYTES)
    cause, detail = forfeit_of(one_match(ender("huge"), tmp_path))
    assert cause == "crash"
    assert "its stream was cancelled (CANCELLED)" in detail, detail
    assert f"limit of {MAX_MESSAGE_BYTES}" not in detail
