"""The gRPC face of the referee: a thin servicer that hands streams to sessions and spectators.

Health checking and server reflection are on, so grpcurl and grpc_health_probe work as usual.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import structlog
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from referee.games import GAMES
from referee.sessions import BotSession, Lobby, LobbyError
from referee.settings import Misbehaviour
from referee.spectators import SpectatorHub

log = structlog.get_logger("referee.server")

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["RefereeService"].full_name
MAX_MESSAGE_BYTES = 256 * 1024
HELLO_TIMEOUT_S = 10.0

PlayContext = grpc.aio.ServicerContext[pb.PlayRequest, pb.PlayResponse]
WatchContext = grpc.aio.ServicerContext[pb.WatchRequest, pb.WatchResponse]
ListContext = grpc.aio.ServicerContext[pb.ListGamesRequest, pb.ListGamesResponse]


class RefereeServicer(referee_pb2_grpc.RefereeServiceServicer):
    def __init__(self, lobby: Lobby, hub: SpectatorHub, hello_timeout_s: float) -> None:
        self.lobby = lobby
        self.hub = hub
        self.hello_timeout_s = hello_timeout_s

    async def Play(
        self,
        request_iterator: AsyncIterator[pb.PlayRequest],
        context: PlayContext,
    ) -> AsyncIterator[pb.PlayResponse]:
        session = await self._join(request_iterator, context)
        if session is None:
            return
        reader = asyncio.create_task(self._read(request_iterator, session))
        log.info("session_joined", name=session.name, bot=session.bot_name, peer=context.peer())
        try:
            yield pb.PlayResponse(
                welcome=pb.Welcome(session_id=session.name, bot_name=session.name)
            )
            while (message := await session.outbox.get()) is not None:
                yield message
        finally:
            reader.cancel()
            session.fail(Misbehaviour.CRASH, "the bot's stream was closed")

    async def _join(
        self,
        request_iterator: AsyncIterator[pb.PlayRequest],
        context: PlayContext,
    ) -> BotSession | None:
        try:
            first = await asyncio.wait_for(anext(request_iterator), self.hello_timeout_s)
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "no Hello in time")
        except StopAsyncIteration:
            return None
        if first.WhichOneof("message") != "hello":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Hello")
        try:
            return self.lobby.claim(first.hello)
        except LobbyError as refused:
            log.warning("hello_refused", reason=str(refused), peer=context.peer())
            await context.abort(getattr(grpc.StatusCode, refused.code), str(refused))
        return None  # unreachable: abort raises

    async def _read(
        self, request_iterator: AsyncIterator[pb.PlayRequest], session: BotSession
    ) -> None:
        try:
            async for message in request_iterator:
                session.receive(message)
            session.fail(Misbehaviour.CRASH, "the bot closed its stream")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a broken stream, an oversized or undecodable message
            session.fail(Misbehaviour.CRASH, f"the bot's stream broke: {exc}")

    async def Watch(
        self, request: pb.WatchRequest, context: WatchContext
    ) -> AsyncIterator[pb.WatchResponse]:
        queue = self.hub.subscribe(request.match_id)
        try:
            while (message := await queue.get()) is not None:
                yield message
        finally:
            self.hub.unsubscribe(queue)

    async def ListGames(
        self, request: pb.ListGamesRequest, context: ListContext
    ) -> pb.ListGamesResponse:
        return pb.ListGamesResponse(
            games=[
                pb.GameInfo(
                    name=g.name,
                    title=g.title,
                    seat_counts=list(g.seat_counts),
                    rules_version=g.rules_version,
                )
                for g in GAMES.values()
            ]
        )


class RefereeServer:
    """A started grpc.aio server with its lobby and spectator hub."""

    def __init__(self, server: grpc.aio.Server, lobby: Lobby, hub: SpectatorHub, address: str):
        self.server = server
        self.lobby = lobby
        self.hub = hub
        self.address = address

    async def stop(self, grace: float = 1.0) -> None:
        self.hub.close()
        await self.server.stop(grace)


async def start_server(
    listen: str, hello_timeout_s: float = HELLO_TIMEOUT_S, lobby: Lobby | None = None
) -> RefereeServer:
    """Serve on listen ('127.0.0.1:0' picks a free port; 'unix:/path' a Unix socket).
    The returned address is what bots connect to."""
    lobby = lobby or Lobby()
    hub = SpectatorHub()
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0),
        ]
    )
    referee_pb2_grpc.add_RefereeServiceServicer_to_server(
        RefereeServicer(lobby, hub, hello_timeout_s), server
    )
    # grpcio-health-checking ships the asyncio servicer without type stubs.
    health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (
            SERVICE_NAME,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        ),
        server,
    )
    port = server.add_insecure_port(listen)
    if port == 0 and not listen.startswith("unix"):
        raise OSError(f"cannot listen on {listen}")
    await server.start()
    await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    address = listen if listen.startswith("unix") else f"{listen.rsplit(':', 1)[0]}:{port}"
    log.info("listening", address=address)
    return RefereeServer(server, lobby, hub, address)
