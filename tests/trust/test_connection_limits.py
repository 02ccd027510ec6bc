"""Tests referee.wire.connections, referee.wire.refusals and referee.wire.server.

Connections and streams that prove nothing cannot take the referee down: a flood of idle
connections larger than its open-file limit leaves bots joining and results saved; grpc really
closes connections that never finish their handshake, that open no call, or that come past the
cap; Play streams that never say Hello are bounded, the oldest pushed out first; wrong tokens
are logged sparingly and slowed down, while a right token from the same address joins at once.
Each guard beside its control. Real referee processes (`arena play` under a lowered
RLIMIT_NOFILE), a real attacker process, real sockets, bounded in time."""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
import structlog
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc
from arena_games import get_game
from arena_games import replay_file as replay
from arena_games.deals import practice_secret
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.bots.launcher import parse_spec
from referee.hosting.series import SeriesPlan, run_series
from referee.replays.verify import verify
from referee.wire import connections, server
from referee.wire.connections import HelloWaits, raise_fd_limit
from referee.wire.refusals import MAX_FAILURES
from referee.wire.server import RefereeServer, start_server
from tests.e2e.conftest import free_port
from tests.trust.test_sandbox import needs_bwrap

# Honest bots held to deadlines of a few hundred ms, or floods and refusals timed: these run
# alone, after the rest of the suite (make test), where no other test takes their cores.
pytestmark = pytest.mark.realtime
IDLE = Path(__file__).resolve().parent.parent / "bots" / "idle_connections.py"
FD_LIMIT = 1024
FLOOD = 1100
WAIT_S = 10.0


class Attacker:
    """tests/bots/idle_connections.py, with what it prints gathered as it comes."""

    def __init__(self, port: int, count: int, *options: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(IDLE), "127.0.0.1", str(port), str(count), *options],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.held = threading.Event()
        threading.Thread(target=self._gather, daemon=True).start()

    def _gather(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.strip())
            if line.startswith("holding"):
                self.held.set()

    def holding(self) -> int:
        assert self.held.wait(60), self.lines
        return int(next(line for line in self.lines if line.startswith("holding")).split()[1])

    def closed(self) -> int:
        counts = [int(line.split()[1]) for line in self.lines if line.startswith("closed")]
        return counts[-1] if counts else 0

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextmanager
def attacking(port: int, count: int, *options: str) -> Iterator[Attacker]:
    attacker = Attacker(port, count, *options)
    try:
        yield attacker
    finally:
        attacker.stop()


def fd_limit(limit: int) -> Callable[[], None]:
    """A preexec_fn: the child's open-file limit, soft and hard, is limit."""
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))


def arena_play(port: int, replays: Path, *before: str) -> list[str]:
    """`arena play` of four matches between two SDK bot processes, listening on port; before
    are Python statements run first in the referee's process (the controls turn guards off)."""
    setup = "; ".join([*before, "from tournaments.cli.arena_app import main", "main()"])
    return [
        sys.executable,
        "-c",
        setup,
        "play",
        "opposing-force",
        "--bot",
        "example:random",
        "--bot",
        "example:random",
        "--games",
        "4",
        "--listen",
        f"127.0.0.1:{port}",
        "--replays",
        str(replays),
    ]


# The guards of referee.wire.connections, as the code was before them.
UNGUARDED = (
    "import referee.wire.server",
    "referee.wire.server.server_options = lambda listeners: []",
)


# -- a flood of idle connections against a referee with 1,024 file descriptors ---------------


@pytest.mark.timeout(120)
def test_bots_join_and_results_are_saved_while_idle_connections_outnumber_the_fd_limit(
    tmp_path: Path,
) -> None:
    """The outside review: 1,100 connections that never send, against `arena play` with an
    open-file limit of 1,024, and no bot could join, no replay could be written, and `arena
    play` exited 2 with no result. Now connections past the cap are closed at once, the rest
    at the handshake timeout, and the reserve keeps replays writable."""
    port = free_port()
    with attacking(port, FLOOD) as attacker:
        play = subprocess.Popen(
            arena_play(port, tmp_path),
            preexec_fn=fd_limit(FD_LIMIT),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert attacker.holding() == FLOOD  # all connected before the bots started
        out, err = play.communicate(timeout=90)
    assert play.returncode == 0, err[-3000:]
    assert "Too many open files" not in err and "File descriptor limit" not in err
    replays = sorted(tmp_path.glob("*.jsonl"))
    assert len(replays) == 4
    for path in replays:
        verify(path)
        [result] = [r for r in replay.read(path) if isinstance(r, replay.ResultRecord)]
        assert result.forfeits == {}, result  # both bots joined and played every match
    assert "replays:" in out
    # The referee closed them all: past the cap at once, the others at the handshake timeout.
    assert attacker.closed() == FLOOD


@pytest.mark.timeout(120)
def test_control_without_the_guards_the_same_flood_takes_every_file_descriptor(
    tmp_path: Path,
) -> None:
    port = free_port()
    with attacking(port, FLOOD) as attacker:
        play = subprocess.Popen(
            arena_play(port, tmp_path, *UNGUARDED),
            preexec_fn=fd_limit(FD_LIMIT),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert attacker.holding() == FLOOD
            assert play.stderr is not None
            # grpc's accept loop says so once a second while the descriptors are gone.
            for line in play.stderr:
                if "File descriptor limit reached" in line:
                    break
            else:
                pytest.fail("the referee never ran out of file descriptors")
            assert len(os.listdir(f"/proc/{play.pid}/fd")) >= FD_LIMIT - 1
            assert not list(tmp_path.glob("*.jsonl"))
        finally:
            play.kill()
            play.communicate()


def test_the_soft_open_file_limit_is_raised_to_the_hard_one() -> None:
    code = "from referee.wire.connections import raise_fd_limit; print(raise_fd_limit())"
    lowered = subprocess.run(
        [sys.executable, "-c", code],
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (512, 2048)),
        capture_output=True,
        text=True,
        check=True,
    )
    assert lowered.stdout.strip() == "2048"
    assert raise_fd_limit() == resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# -- what grpc really does with the options ---------------------------------------------------


async def closed_within(
    target: RefereeServer, count: int, send: str, within_s: float
) -> tuple[int, float]:
    """(connections of count the server closed, seconds until the last one was)."""
    port = int(target.address.rsplit(":", 1)[1])
    began = time.monotonic()
    with attacking(port, count, "--send", send) as attacker:
        await asyncio.to_thread(attacker.holding)
        while attacker.closed() < count and time.monotonic() - began < within_s:
            await asyncio.sleep(0.05)
        return attacker.closed(), time.monotonic() - began


@pytest.mark.timeout(60)
@pytest.mark.parametrize("send", ["raw", "preface", "settings"])
def test_connections_that_prove_nothing_are_closed(
    send: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """raw and preface: the handshake never ends (grpc.server_handshake_timeout_ms); settings:
    the handshake ends, but no call comes (grpc.max_connection_idle_ms)."""
    monkeypatch.setattr(connections, "HANDSHAKE_TIMEOUT_S", 0.5)
    monkeypatch.setattr(connections, "IDLE_CONNECTION_S", 0.5)

    async def scenario() -> tuple[tuple[int, float], tuple[int, float]]:
        guarded = await start_server("127.0.0.1:0")
        try:
            closed = await closed_within(guarded, 20, send, WAIT_S)
        finally:
            await guarded.stop()
        # Control: grpc's defaults keep them (the handshake timeout is 120 s, no idle limit).
        monkeypatch.setattr(server, "server_options", lambda listeners: [])
        unguarded = await start_server("127.0.0.1:0")
        try:
            kept = await closed_within(unguarded, 20, send, 1.5)
        finally:
            await unguarded.stop()
        return closed, kept

    (closed, seconds), (kept_closed, _) = asyncio.run(scenario())
    assert closed == 20 and seconds < 3.0
    assert kept_closed == 0


@pytest.mark.timeout(60)
def test_connections_past_the_cap_are_closed_at_once_each_address_its_own_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """grpc.max_allowed_incoming_connections counts per listening address: a flood of the TCP
    port does not shut the Unix socket, where sandboxed bots join."""
    cap = 8
    monkeypatch.setattr(connections, "connection_cap", lambda limit, listeners: cap)
    unix = f"unix:{tmp_path / 'referee.sock'}"

    async def healthy(target: str) -> bool:
        async with grpc.aio.insecure_channel(target) as channel:
            try:
                await health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=1.0
                )
                return True
            except grpc.aio.AioRpcError:
                return False

    async def scenario() -> tuple[int, bool, bool, bool]:
        guarded = await start_server("127.0.0.1:0", unix_listen=unix)
        port = int(guarded.address.rsplit(":", 1)[1])
        try:
            with attacking(port, 50) as attacker:
                await asyncio.to_thread(attacker.holding)
                await asyncio.sleep(0.3)
                over_cap_closed = attacker.closed()
                tcp_full = not await healthy(guarded.address)
                unix_open = await healthy(unix)
            tcp_back = await healthy(guarded.address)  # control: the same call, flood gone
            return over_cap_closed, tcp_full, unix_open, tcp_back
        finally:
            await guarded.stop()

    over_cap_closed, tcp_full, unix_open, tcp_back = asyncio.run(scenario())
    assert over_cap_closed == 50 - cap
    assert tcp_full and unix_open and tcp_back


# -- streams that never say Hello -------------------------------------------------------------


def silent_play(
    channel: grpc.aio.Channel,
) -> grpc.aio.StreamStreamCall[pb.PlayRequest, pb.PlayResponse]:
    return referee_pb2_grpc.RefereeServiceStub(channel).Play()  # type: ignore[call-arg]


async def hello(channel: grpc.aio.Channel, token: str) -> pb.PlayResponse | grpc.StatusCode:
    """The first answer to a Hello with token: a Welcome, or the status code of a refusal."""
    call = silent_play(channel)
    try:
        await call.write(pb.PlayRequest(hello=pb.Hello(token=token, bot_name="t")))
        first = await asyncio.wait_for(call.read(), WAIT_S)
        assert isinstance(first, pb.PlayResponse)
        return first
    except grpc.aio.AioRpcError as error:
        return error.code()
    finally:
        call.cancel()


@pytest.mark.timeout(60)
def test_streams_waiting_for_hello_are_bounded_and_the_oldest_goes_first() -> None:
    cap = 5

    async def flood(target: RefereeServer, streams: int) -> tuple[int, list[grpc.StatusCode]]:
        """Open silent streams one after another; (streams the server counts as waiting at
        most, the codes of those it ended), then an honest Hello."""
        async with grpc.aio.insecure_channel(target.address) as channel:
            calls = [silent_play(channel) for _ in range(streams)]
            for call in calls:  # grpc.aio sends a stream's headers with its first message, or here
                await call.wait_for_connection()
            await asyncio.sleep(0.5)
            waiting = len(target.hello_waits)
            session = target.lobby.register("honest")
            answer = await hello(channel, session.token)
            assert isinstance(answer, pb.PlayResponse) and answer.HasField("welcome"), answer
            ended = []
            for call in calls:
                if call.done():
                    ended.append(await call.code())
                call.cancel()
            return waiting, ended

    async def scenario() -> tuple[tuple[int, list[grpc.StatusCode]], int]:
        capped = await start_server("127.0.0.1:0", max_hello_waits=cap)
        try:
            result = await flood(capped, 3 * cap)
        finally:
            await capped.stop()
        # Control: with room for all, every silent stream waits.
        roomy = await start_server("127.0.0.1:0", max_hello_waits=1000)
        try:
            uncapped, _ = await flood(roomy, 3 * cap)
        finally:
            await roomy.stop()
        return result, uncapped

    (waiting, ended), uncapped = asyncio.run(scenario())
    assert waiting == cap
    assert ended == [grpc.StatusCode.RESOURCE_EXHAUSTED] * (2 * cap + 1)
    assert uncapped == 3 * cap


def test_hello_waits_push_out_the_oldest() -> None:
    async def scenario() -> list[bool]:
        waits = HelloWaits(2)
        first, second = waits.enter(), waits.enter()
        third = waits.enter()
        waits.leave(second)
        fourth = waits.enter()
        return [n.done() for n in (first, second, third, fourth)]

    assert asyncio.run(scenario()) == [True, False, False, False]
    with pytest.raises(ValueError):
        HelloWaits(0)


# -- wrong tokens -----------------------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_a_flood_of_wrong_tokens_is_logged_once_slowed_and_a_right_token_still_joins(
    transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over the Unix socket every client is one address ('unix:'), the guesser and the bots
    of the series alike: a right token is never held back, so the shared address costs the
    bots nothing."""
    penalty = 0.3
    monkeypatch.setattr(server, "HELLO_PENALTY_S", penalty)
    flood = MAX_FAILURES + 10
    unix = f"unix:{tmp_path / 'referee.sock'}"

    async def scenario() -> tuple[list[float], float, object]:
        target = await start_server("127.0.0.1:0", unix_listen=unix)
        try:
            address = target.address if transport == "tcp" else unix
            async with grpc.aio.insecure_channel(address) as channel:
                took = []
                for n in range(flood):
                    began = time.perf_counter()
                    code = await hello(channel, f"guess-{n}")
                    assert code == grpc.StatusCode.PERMISSION_DENIED
                    took.append(time.perf_counter() - began)
            # A bot of the same address, on a connection of its own.
            async with grpc.aio.insecure_channel(address) as channel:
                session = target.lobby.register("honest")
                began = time.perf_counter()
                answer = await hello(channel, session.token)
                return took, time.perf_counter() - began, answer
        finally:
            await target.stop()

    with structlog.testing.capture_logs() as logs:
        took, honest_s, answer = asyncio.run(scenario())
    refused = [entry for entry in logs if entry["event"] == "hello_refused"]
    assert len(refused) == 1, refused  # of flood refusals
    assert refused[0]["reason"] == "unknown token"
    assert refused[0]["peer"].startswith("ipv4:127.0.0.1:" if transport == "tcp" else "unix:")
    # Control: the first MAX_FAILURES answers come at once; past them each waits the penalty.
    assert max(took[:MAX_FAILURES]) < penalty
    assert min(took[MAX_FAILURES:]) >= penalty
    # The same address with the right token is not held back.
    assert isinstance(answer, pb.PlayResponse) and answer.HasField("welcome")
    assert honest_s < penalty


@pytest.mark.timeout(60)
def test_a_bot_that_starts_slowly_still_joins_within_the_hello_timeout(tmp_path: Path) -> None:
    """The Hello timeout counts from when the stream opens, and the SDK opens it only once it
    has connected and says Hello at once: a bot that takes longer than the timeout to start
    joins. Control: a stream that opens and then waits that long is cut off."""
    slow = parse_spec(
        f"cmd:sh -c 'sleep {server.HELLO_TIMEOUT_S + 1}; exec {sys.executable} -m "
        "arena_sdk.launch example_bots.random_bot:RandomBot'"
    )
    plan = SeriesPlan(
        get_game("opposing-force"),
        [slow, parse_spec("example:random")],
        1,
        secret=practice_secret(3),
        replays=tmp_path,
    )
    [(outcome, _)] = asyncio.run(run_series(plan))
    assert not outcome.forfeits, outcome.forfeits

    async def late_hello() -> object:
        target = await start_server("127.0.0.1:0")
        try:
            async with grpc.aio.insecure_channel(target.address) as channel:
                call = silent_play(channel)
                await call.wait_for_connection()
                await asyncio.sleep(server.HELLO_TIMEOUT_S + 1)
                assert call.done()  # ended before the Hello came
                return await call.code()
        finally:
            await target.stop()

    assert asyncio.run(late_hello()) == grpc.StatusCode.DEADLINE_EXCEEDED


SANDBOXED_SERIES = """
import asyncio, sys
from pathlib import Path
from arena_games.deals import practice_secret
from arena_games import get_game
from referee.hosting.series import SeriesPlan, run_series
from referee.bots.launcher import parse_spec
from referee.bots.sandbox import Sandbox, Tier
bots = [parse_spec("example:random"), parse_spec("example:random")]
plan = SeriesPlan(get_game("opposing-force"), bots, 4, secret=practice_secret(3),
                  replays=Path(sys.argv[2]), sandbox=Sandbox(tier=Tier.BUBBLEWRAP))
series = asyncio.run(run_series(plan, listen="127.0.0.1:" + sys.argv[1]))
print("forfeits", sum(len(outcome.forfeits) for outcome, _ in series))
"""


@needs_bwrap
@pytest.mark.timeout(120)
def test_a_flood_that_reconnects_at_once_keeps_out_no_sandboxed_bot(tmp_path: Path) -> None:
    """An attacker that opens a new connection the moment the referee closes one keeps the TCP
    port at its cap for as long as it likes: grpc has no cap per client, so a bot joining over
    TCP meanwhile may not get in (a firewall's job). Bots in the bubblewrap tier join over the
    series' Unix socket, whose cap is its own: they play every match, and the referee keeps
    the descriptors its replays need."""
    port = free_port()
    with attacking(port, FLOOD, "--reopen") as attacker:
        series = subprocess.Popen(
            [sys.executable, "-c", SANDBOXED_SERIES, str(port), str(tmp_path)],
            preexec_fn=fd_limit(FD_LIMIT),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert attacker.holding() == FLOOD
        out, err = series.communicate(timeout=90)
        reopened = attacker.closed()
    assert series.returncode == 0, err[-3000:]
    assert out.splitlines()[-1] == "forfeits 0", out[-2000:]
    assert "Too many open files" not in err and "File descriptor limit" not in err
    assert reopened > FLOOD  # the referee kept closing what the attacker kept opening
    replays = sorted(tmp_path.glob("*.jsonl"))
    assert len(replays) == 4
    for path in replays:
        verify(path)
