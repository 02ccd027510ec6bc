"""Tests arena_sdk.client: a stream that drops before its Welcome.

The SDK learns the referee's rejoin grace from the Welcome; a connection cut after the bot's
Hello and before that Welcome used to leave it with a grace of 0, and a bot its referee started
(ARENA_RECONNECT_S=0) exited, though the referee held its seat for it. Now it joins again within
GRACE_BEFORE_WELCOME_S. Real referee, real bot processes, a real TCP proxy that resets the
connection on the Welcome's first byte; 127.0.0.1 only."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import pytest

from referee.bots.launcher import BotSpec, parse_spec, start_bot, stop_bot
from referee.replays.verify import verify
from referee.wire.server import RefereeServer
from referee.wire.sessions import BotSession
from tests.e2e.test_rejoin import SLEEPY, remote_series

GRACE_S = 5.0  # the referee's: the control's forfeit comes this long after its bot is gone
FRAME_HEADER = 9  # an HTTP/2 frame: length (3 bytes), type, flags, stream id (4)
DATA = 0  # the frame type that carries gRPC messages: the referee's first is the Welcome


class WelcomeCutter:
    """A TCP proxy to the referee that resets its first connection just before the referee's
    first message (the Welcome) would reach the bot: the HTTP/2 frames before it (SETTINGS,
    the response's HEADERS) pass, the first DATA frame does not. Later connections pass whole."""

    def __init__(self, target: str) -> None:
        host, _, port = target.rpartition(":")
        self.target = (host, int(port))
        self.connections = 0
        self.cuts = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._carry, "127.0.0.1", 0)
        return f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _carry(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self.connections += 1
        first = self.connections == 1

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            dst.close()

        async def down_until_welcome() -> None:
            buffer = b""
            while data := await up_reader.read(65536):
                buffer += data
                while len(buffer) >= FRAME_HEADER:
                    size = FRAME_HEADER + int.from_bytes(buffer[:3], "big")
                    if len(buffer) < size:
                        break
                    if buffer[3] == DATA and size > FRAME_HEADER:
                        self.cuts += 1
                        writer.transport.abort()  # a reset, as a network that fails
                        up_writer.transport.abort()
                        return
                    writer.write(buffer[:size])
                    buffer = buffer[size:]
                await writer.drain()

        down = down_until_welcome() if first else pipe(up_reader, writer)
        await asyncio.gather(pipe(reader, up_writer), down, return_exceptions=True)

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()


def cut_before_welcome(first: BotSpec, log_path: Path, cuts: list[int]) -> object:
    """A remote_series play: the first bot reaches the referee through a WelcomeCutter; the
    second is the sleepy bot. cuts gets how many connections the proxy reset."""

    async def play(server: RefereeServer, sessions: list[BotSession]) -> None:
        proxy = WelcomeCutter(server.address)
        address = await proxy.start()
        bots = [
            await start_bot(first, address, sessions[0].token, log_path),
            await start_bot(parse_spec(str(SLEEPY)), server.address, sessions[1].token, None),
        ]
        for bot in bots:
            await stop_bot(bot, grace_s=40)
        cuts.append(proxy.cuts)
        await proxy.stop()

    return play


def without_grace_before_welcome() -> BotSpec:
    """The sleepy bot with the guard off, in its own process: no grace before a Welcome (the
    SDK as it was)."""
    code = (
        "import sys; import arena_sdk.client as client; client.GRACE_BEFORE_WELCOME_S = 0.0; "
        f"from arena_sdk.launch import main; sys.exit(main([{str(SLEEPY)!r}]))"
    )
    return parse_spec("cmd:" + shlex.join([sys.executable, "-c", code]))


@pytest.mark.timeout(120)
def test_an_sdk_bot_cut_before_its_welcome_joins_again_and_plays(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "a.log"
    cuts: list[int] = []
    play = cut_before_welcome(parse_spec(str(SLEEPY)), log, cuts)
    outcome, sessions = asyncio.run(remote_series(GRACE_S, play, tmp_path))
    said = log.read_text()
    assert cuts == [1], said  # the cut happened, once, before the Welcome
    assert not outcome.forfeits, (outcome.forfeits, said)
    assert sessions[0].rejoins == 1
    assert "joining again" in said
    assert outcome.replay_path is not None
    verify(outcome.replay_path)


@pytest.mark.timeout(120)
def test_control_without_a_grace_before_the_welcome_the_bot_exits_and_forfeits(
    tmp_path: Path,
) -> None:
    log = tmp_path / "logs" / "a.log"
    cuts: list[int] = []
    play = cut_before_welcome(without_grace_before_welcome(), log, cuts)
    outcome, sessions = asyncio.run(remote_series(GRACE_S, play, tmp_path))
    said = log.read_text()
    assert cuts == [1], said
    assert "could not be joined again within 0 s" in said
    assert [f.seat for f in outcome.forfeits] == [0], outcome.forfeits
    assert sessions[0].rejoins == 0
