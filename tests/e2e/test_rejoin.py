"""Tests referee.wire.sessions and referee.wire.server (the rejoin grace) and arena_sdk.client.

Rejoining: a remote bot whose connection drops, or whose process dies, comes back with its
token within the grace and finishes its match; without a grace it forfeits, as before. Real
referee, real bot processes, a real TCP proxy that cuts connections; 127.0.0.1 only."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import grpc
import pytest
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc
from arena_games import get_game
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings

from referee.bots.launcher import BotSpec, parse_spec, start_bot, stop_bot
from referee.hosting.series import SeriesPlan, run_series
from referee.matches.match import MatchOutcome
from referee.replays.verify import verify
from referee.wire import connections
from referee.wire.server import RefereeServer, start_server
from referee.wire.sessions import BotSession, LobbyError
from tests.e2e.conftest import rawbot

GAME = get_game("opposing-force")
SLEEPY = Path(__file__).resolve().parent.parent / "bots" / "sleepy_bot.py"
SETTINGS = MatchSettings(decision_ms=5000, time_bank_ms=5000)
# A silent cut's clocks: the waiting decision times out after 5 s (which the controls wait out),
# over twice the 2 s the keepalive takes to find the connection dead (a ping after 1 s of
# silence, unanswered 1 s later) before the bot joins again.
SILENT_CUT_SETTINGS = MatchSettings(decision_ms=2500, time_bank_ms=2500)
REMOTE = [BotSpec("remote", f"bot-{i}", ()) for i in range(2)]


async def remote_series(
    grace_s: float, play: object, tmp_path: Path, settings: MatchSettings = SETTINGS
) -> tuple[MatchOutcome, list[BotSession]]:
    """One match between two remote bots; play(server, sessions) starts their processes."""
    server = await start_server("127.0.0.1:0")
    plan = SeriesPlan(
        GAME,
        REMOTE,
        1,
        secret=practice_secret(4),
        replays=tmp_path,
        settings=settings,
        rejoin_grace_s=grace_s,
    )
    sessions: list[BotSession] = []
    started: list[asyncio.Task[None]] = []

    def tokens(_: RefereeServer, own: list[list[BotSession]]) -> None:
        sessions.extend(s[0] for s in own)
        started.append(asyncio.ensure_future(play(server, sessions)))  # type: ignore[operator]

    try:
        [(outcome, _)] = await asyncio.wait_for(
            run_series(plan, server=server, on_sessions=tokens), 60
        )
        await started[0]
        return outcome, sessions
    finally:
        await server.stop()


def a_process_dies_and_another_takes_its_token(tmp_path: Path, grace_s: float) -> object:
    async def play(server: RefereeServer, sessions: list[BotSession]) -> None:
        log = tmp_path / "logs"
        other = await start_bot(rawbot("play"), server.address, sessions[1].token, log / "b.log")
        dying = await start_bot(rawbot("exit"), server.address, sessions[0].token, log / "a.log")
        await dying.wait()  # exits at its third decision, mid-match
        again = await start_bot(rawbot("play"), server.address, sessions[0].token, log / "a2.log")
        await asyncio.sleep(0.5)
        for process in (dying, again, other):
            await stop_bot(process, grace_s=15)

    return asyncio.run(remote_series(grace_s, play, tmp_path))


@pytest.mark.timeout(120)
def test_a_remote_bot_whose_process_died_rejoins_with_its_token_and_finishes(
    tmp_path: Path,
) -> None:
    outcome, sessions = a_process_dies_and_another_takes_its_token(tmp_path, grace_s=20)  # type: ignore[misc]
    assert not outcome.forfeits, outcome.forfeits
    assert sessions[0].rejoins == 1 and sessions[1].rejoins == 0
    assert outcome.replay_path is not None
    verify(outcome.replay_path)


@pytest.mark.timeout(120)
def test_control_without_a_grace_the_bot_whose_process_died_forfeits(tmp_path: Path) -> None:
    outcome, sessions = a_process_dies_and_another_takes_its_token(tmp_path, grace_s=0)  # type: ignore[misc]
    assert [(f.cause.value) for f in outcome.forfeits] == ["crash"]
    assert sessions[0].rejoins == 0


class CuttingProxy:
    """A TCP proxy to the referee that can cut every connection it carries."""

    def __init__(self, target: str) -> None:
        host, _, port = target.rpartition(":")
        self.target = (host, int(port))
        self.writers: list[asyncio.StreamWriter] = []
        self.pairs: list[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = []
        self.held: set[asyncio.StreamWriter] = set()  # referee sides left open after a cut
        # Connections that forward nothing any more, each side left open (see stall).
        self.stalled: set[asyncio.StreamWriter] = set()
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._carry, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"127.0.0.1:{port}"

    async def _carry(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self.writers += [writer, up_writer]
        self.pairs.append((writer, up_writer))

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await src.read(65536):
                    if dst in self.stalled:
                        continue  # read and dropped: the sender's kernel sees it delivered
                    dst.write(data)
                    await dst.drain()
            if dst not in self.held and dst not in self.stalled:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def stall(self) -> None:
        """Stop forwarding on every connection carried so far, in both directions, closing
        nothing, not even when one side closes its end: as a router that lost its route.
        Connections made afterwards are carried as ever."""
        self.stalled.update(self.writers)
        self.writers = []

    def cut(self) -> None:
        self.writers += list(self.stalled)
        self.stalled = set()
        for writer in self.writers:
            writer.transport.abort()  # a reset, as a network that fails
        self.writers = []

    async def cut_bot_side_first(self, referee_side_after_s: float) -> None:
        """A cut the bot sees at once and the referee only later: the bot's side is reset
        now, the referee's side of the same connections stays open a while."""
        pairs, self.pairs = self.pairs, []
        self.held.update(referee_side for _, referee_side in pairs)
        for bot_side, _ in pairs:
            bot_side.transport.abort()
        await asyncio.sleep(referee_side_after_s)
        for _, referee_side in pairs:
            referee_side.transport.abort()

    async def stop(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()


def drop_first_bot_mid_match(
    first: BotSpec, log_path: Path, referee_sees_it_after_s: float = 0.0
) -> object:
    """A remote_series play: the first bot reaches the referee through a CuttingProxy, which
    cuts its connection once it has been asked 3 decisions (the referee's side after
    referee_sees_it_after_s); the second is the sleepy bot."""

    async def play(server: RefereeServer, sessions: list[BotSession]) -> None:
        proxy = CuttingProxy(server.address)
        address = await proxy.start()
        bots = [
            await start_bot(first, address, sessions[0].token, log_path),
            await start_bot(parse_spec(str(SLEEPY)), server.address, sessions[1].token, None),
        ]
        async with asyncio.timeout(20):
            while sessions[0]._asked < 3:  # mid-match
                await asyncio.sleep(0.01)
        if referee_sees_it_after_s:
            await proxy.cut_bot_side_first(referee_sees_it_after_s)
        else:
            proxy.cut()
        for bot in bots:
            await stop_bot(bot, grace_s=30)
        await proxy.stop()

    return play


@pytest.mark.timeout(120)
def test_an_sdk_bot_whose_connection_drops_joins_again_and_finishes(tmp_path: Path) -> None:
    """The SDK joins again with the same token when the connection breaks under it."""
    log = tmp_path / "logs" / "a.log"
    play = drop_first_bot_mid_match(parse_spec(str(SLEEPY)), log)
    outcome, sessions = asyncio.run(remote_series(20.0, play, tmp_path))
    assert not outcome.forfeits, outcome.forfeits
    assert sessions[0].rejoins == 1
    assert "joining again" in log.read_text()
    assert outcome.replay_path is not None
    verify(outcome.replay_path)


def refusing_second_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard off, as before issue 31: while the referee holds a session's stream open, a
    new stream with its token is refused with ALREADY_EXISTS and the old one keeps the seat."""
    attach = BotSession.attach

    def refusing(self: BotSession, hello: pb.Hello) -> None:
        if self.attached:
            raise LobbyError("ALREADY_EXISTS", "this token has already joined")
        attach(self, hello)

    monkeypatch.setattr(BotSession, "attach", refusing)


@pytest.mark.timeout(120)
def test_a_rejoin_that_finds_its_old_stream_still_open_takes_the_seat_over(
    tmp_path: Path,
) -> None:
    """The referee still holds the old stream of a cut connection open (for 2 s here): the
    SDK's new stream takes the seat from it at once, and the old one is closed as replaced."""
    log = tmp_path / "logs" / "a.log"
    play = drop_first_bot_mid_match(parse_spec(str(SLEEPY)), log, referee_sees_it_after_s=2.0)
    outcome, sessions = asyncio.run(remote_series(20.0, play, tmp_path))
    assert not outcome.forfeits, outcome.forfeits
    assert sessions[0].rejoins == 1
    assert "the old stream is still open at the referee" not in log.read_text()


@pytest.mark.timeout(120)
def test_control_a_referee_that_refuses_while_it_holds_the_old_stream_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Against a referee that refuses (the guard off), the SDK takes ALREADY_EXISTS for "try
    again" and gets in once the referee has seen the old stream end."""
    refusing_second_streams(monkeypatch)
    log = tmp_path / "logs" / "a.log"
    play = drop_first_bot_mid_match(parse_spec(str(SLEEPY)), log, referee_sees_it_after_s=2.0)
    outcome, sessions = asyncio.run(remote_series(20.0, play, tmp_path))
    assert not outcome.forfeits, outcome.forfeits
    assert sessions[0].rejoins == 1
    assert "the old stream is still open at the referee" in log.read_text()


def stall_first_bot_mid_match(log_path: Path) -> object:
    """A remote_series play: the first bot (an SDK bot) reaches the referee through a
    CuttingProxy, which stops forwarding its connection once it has been asked 3 decisions,
    closing neither side; the second is the sleepy bot."""

    async def play(server: RefereeServer, sessions: list[BotSession]) -> None:
        proxy = CuttingProxy(server.address)
        address = await proxy.start()
        bots = [
            await start_bot(parse_spec(str(SLEEPY)), address, sessions[0].token, log_path),
            await start_bot(parse_spec(str(SLEEPY)), server.address, sessions[1].token, None),
        ]
        async with asyncio.timeout(20):
            while sessions[0]._asked < 3:  # mid-match
                await asyncio.sleep(0.01)
        proxy.stall()
        async with asyncio.timeout(60):
            while not sessions[1].ended:  # the match is over
                await asyncio.sleep(0.05)
        for bot in bots:
            await stop_bot(bot, grace_s=1)  # a bot still on the dead stream never ends itself
        await proxy.stop()

    return play


def silent_cut(tmp_path: Path, keepalive_s: str, monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setenv("ARENA_KEEPALIVE_S", keepalive_s)  # the bots' environment
    log = tmp_path / "logs" / "a.log"
    play = stall_first_bot_mid_match(log)
    outcome, sessions = asyncio.run(remote_series(20.0, play, tmp_path, SILENT_CUT_SETTINGS))
    return outcome, sessions, log.read_text()


@pytest.mark.realtime  # keepalive and decision clocks race: alone, not on a loaded machine
@pytest.mark.timeout(120)
def test_an_sdk_bot_whose_connection_stops_forwarding_finds_it_dead_and_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A silent cut: nothing is closed, nothing arrives. The SDK's keepalive ping goes
    unanswered, it joins again through a new connection, and its new stream takes the seat
    from the old one, which the referee still holds open."""
    outcome, sessions, said = silent_cut(tmp_path, "1", monkeypatch)  # type: ignore[misc]
    assert not outcome.forfeits, (outcome.forfeits, said)
    assert sessions[0].rejoins == 1
    assert "joining again" in said
    assert outcome.replay_path is not None
    verify(outcome.replay_path)


@pytest.mark.realtime  # keepalive and decision clocks race: alone, not on a loaded machine
@pytest.mark.timeout(120)
def test_control_a_silent_cut_forfeits_when_the_old_stream_keeps_the_seat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard off: the SDK finds the connection dead and knocks again and again, but the
    referee, which never sees the old stream end, refuses each new stream until the waiting
    decision times out (issue 31: ALREADY_EXISTS until then, then a timeout)."""
    refusing_second_streams(monkeypatch)
    outcome, sessions, said = silent_cut(tmp_path, "1", monkeypatch)  # type: ignore[misc]
    assert [(f.seat, f.cause.value) for f in outcome.forfeits] == [(0, "timeout")]
    assert sessions[0].rejoins == 0
    assert "the old stream is still open at the referee" in said


@pytest.mark.realtime  # keepalive and decision clocks race: alone, not on a loaded machine
@pytest.mark.timeout(120)
def test_control_without_keepalive_a_silent_cut_goes_unnoticed_and_forfeits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome, sessions, said = silent_cut(tmp_path, "0", monkeypatch)  # type: ignore[misc]
    assert [(f.seat, f.cause.value) for f in outcome.forfeits] == [(0, "timeout")]
    assert sessions[0].rejoins == 0
    assert "joining again" not in said


@pytest.mark.timeout(120)
def test_a_bot_that_drops_its_own_stream_joins_again_and_is_sent_its_request_again(
    tmp_path: Path,
) -> None:
    from tests.trust.test_hostile_bots import hostile, read_record

    record = tmp_path / "rejoin.jsonl"

    async def play(server: RefereeServer, sessions: list[BotSession]) -> None:
        log = tmp_path / "logs"
        bots = [
            await start_bot(
                hostile("rejoin", record), server.address, sessions[0].token, log / "a"
            ),
            await start_bot(rawbot("play"), server.address, sessions[1].token, log / "b.log"),
        ]
        for bot in bots:
            await stop_bot(bot, grace_s=30)

    outcome, sessions = asyncio.run(remote_series(20.0, play, tmp_path))
    assert not outcome.forfeits, outcome.forfeits
    assert sessions[0].rejoins == 1
    told = read_record(record)
    assert {"kind": "rejoining", "asked": 3} in told
    notices = [str(r["message"]) for r in told if r["kind"] == "notice"]
    assert any(n.startswith("rejoined after") for n in notices)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("keepalive_s", [1.0, 0.0])
def test_the_referee_finds_a_silently_cut_stream_dead_by_its_own_pings(
    keepalive_s: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot with no keepalive of its own (a raw client) whose connection stops forwarding and
    never comes back: the referee's pings go unanswered and it ends the stream, so that the
    bot is no longer taken for present (and seated). Control, the referee's pings off: the
    stream stays the session's."""
    monkeypatch.setattr(connections, "KEEPALIVE_S", keepalive_s)

    async def scenario() -> bool:
        server = await start_server("127.0.0.1:0")
        session = server.lobby.register("far")
        session.rejoin_grace_s = 30.0
        proxy = CuttingProxy(server.address)
        address = await proxy.start()
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                call = referee_pb2_grpc.RefereeServiceStub(channel).Play()
                await call.write(pb.PlayRequest(hello=pb.Hello(token=session.token)))
                assert (await call.read()).WhichOneof("message") == "welcome"
                proxy.stall()
                async with asyncio.timeout(5):
                    while session.attached:
                        await asyncio.sleep(0.1)
                call.cancel()
            return False
        except TimeoutError:
            return True
        finally:
            await proxy.stop()
            await server.stop()

    held = asyncio.run(scenario())
    assert held == (keepalive_s == 0)


async def knock_while_opening(opening: bool, log_path: Path) -> tuple[bool, int | None]:
    """An SDK bot process knocks with a token its referee has not registered yet, as a remote
    bot does at a live ladder that has just started; the session is registered 2 s later.
    Whether it joined, and its exit code if it had ended by then."""
    server = await start_server("127.0.0.1:0")
    server.lobby.opening = opening
    token = "registered-later-0123456789"
    env = dict(ARENA_ADDRESS=server.address, ARENA_TOKEN=token, ARENA_RECONNECT_S="30")
    with log_path.open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            *parse_spec(str(SLEEPY)).argv,
            env={**os.environ, **env},
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
        )
    try:
        await asyncio.sleep(2.0)
        ended = process.returncode
        session = server.lobby.register("late", "remote", token=token)
        server.lobby.opening = False
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(session.connected.wait(), 15)
        joined = session.connected.is_set()
        session.end("the test is over")
        return joined, ended
    finally:
        await stop_bot(process, grace_s=5)
        await server.stop()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("opening", [True, False], ids=["opening", "control-unknown-at-once"])
def test_a_bot_that_knocks_before_its_ladder_has_registered_it_joins_once_it_has(
    tmp_path: Path, opening: bool
) -> None:
    """A ladder's referee listens before serve has registered its remote bots: a bot that
    knocks meanwhile is told to come back (UNAVAILABLE), which the SDK does, and joins. The
    control, a referee that calls the token unknown at once: the bot believes it and exits."""
    log = tmp_path / "bot.log"
    joined, ended = asyncio.run(knock_while_opening(opening, log))
    if opening:
        assert (joined, ended) == (True, None), log.read_text()
        assert "the referee is starting" in log.read_text()
    else:
        assert not joined and ended == 2, log.read_text()
        assert "unknown token" in log.read_text()
