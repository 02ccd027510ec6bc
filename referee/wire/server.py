"""The gRPC face of the referee: a thin servicer that hands streams to sessions and spectators.

Health checking and server reflection are on, so grpcurl and grpc_health_probe work as usual.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import structlog
from arena.v1 import referee_pb2 as pb
from arena_games import GAMES
from arena_games.match_settings import Misbehaviour
from google.protobuf.message import DecodeError
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from referee.wire import spectators
from referee.wire.connections import MAX_HELLO_WAITS, HelloWaits, server_options
from referee.wire.refusals import Refusals
from referee.wire.sessions import REPLACED, BotSession, Lobby, LobbyError
from referee.wire.spectators import MAX_SPECTATORS, Refused, SpectatorGate, SpectatorHub

log = structlog.get_logger("referee.wire.server")

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["RefereeService"].full_name
MAX_MESSAGE_BYTES = 256 * 1024
# The SDK says Hello the moment its stream opens; a stream silent this long is not a bot.
HELLO_TIMEOUT_S = 3.0
# A wrong token from an address over its refusal budget (referee.wire.refusals) is answered only
# after this long: a guesser that waits for each answer is slowed to one guess a second. A
# right token is never held back, so bots that share the guesser's address (every Unix-socket
# client is one address) join as ever.
HELLO_PENALTY_S = 1.0
GRPC_MESSAGE_BYTES = 2 * MAX_MESSAGE_BYTES
"""What grpc itself reads of one message. A message over it is dropped unread and the call
cancelled, which the servicer cannot tell apart from a cancel by the bot or a closed connection;
so the referee's own limit, MAX_MESSAGE_BYTES, is applied below this one (_play_request), where
the referee sees the message and can say why it hung up. Each stream can make grpc hold this
much at a time, Hello streams included (referee.wire.connections bounds how many wait)."""
HALF_CLOSE_S = 0.5
"""After the bot's side of a stream ends, how long the referee waits to see whether the call
itself is cancelled (the connection closed, the process died, the bot cancelled) before it
judges the end a half-close: grpc shows the reading side end first in every case."""
# What the referee saw of a Play stream's end (a forfeit's detail; the session adds how the
# bot's process ended when the referee started it).
STREAM_CANCELLED = (
    "its stream was cancelled (CANCELLED) with no status from the bot: it cancelled the call, "
    f"or its connection closed or broke, or it sent a message over {GRPC_MESSAGE_BYTES} bytes, "
    "which grpc drops unread"
)
HALF_CLOSED = "it half-closed its stream (it ended its side) before the referee ended the session"

PlayContext = grpc.aio.ServicerContext[pb.PlayRequest, pb.PlayResponse]
WatchContext = grpc.aio.ServicerContext[pb.WatchRequest, bytes]
ListContext = grpc.aio.ServicerContext[pb.ListGamesRequest, pb.ListGamesResponse]


class RefereeServicer:
    """The RefereeService methods (see referee_handlers)."""

    def __init__(
        self,
        lobby: Lobby,
        hub: SpectatorHub,
        hello_timeout_s: float,
        gate: SpectatorGate | None = None,
        hello_waits: HelloWaits | None = None,
    ) -> None:
        self.lobby = lobby
        self.hub = hub
        self.hello_timeout_s = hello_timeout_s
        # Without a gate of its own, a token nobody was told: no one watches.
        self.gate = gate or SpectatorGate(secrets.token_urlsafe(32))
        self.refusals = self.gate.refusals  # one count per address, for Watch and Hello
        self.hello_waits = HelloWaits() if hello_waits is None else hello_waits

    async def Play(
        self,
        request_iterator: AsyncIterator[pb.PlayRequest],
        context: PlayContext,
    ) -> AsyncIterator[pb.PlayResponse | bytes]:
        session = await self._join(request_iterator, context)
        if session is None:
            return
        # This stream's number and outbox: a rejoin with the token gives the session new ones.
        stream, outbox = session.stream, session.outbox
        session.stop_stream = _canceller(asyncio.current_task())
        reader = asyncio.create_task(self._read(request_iterator, session, stream))
        log.info(
            "session_joined",
            name=session.name,
            bot=session.bot_name,
            peer=context.peer(),
            rejoins=session.rejoins,
        )
        seen = STREAM_CANCELLED
        try:
            welcome = pb.Welcome(
                session_id=session.name,
                bot_name=session.name,
                rejoin_grace_ms=round(session.rejoin_grace_s * 1000),
            )
            yield pb.PlayResponse(welcome=welcome)
            while (message := await outbox.get()) is not None:
                data = session.sending(message)
                if data is None:
                    continue  # a request whose decision is over: the bot never sees it
                session.writing_since = time.perf_counter()
                yield data  # resumes once grpc has taken the message: flow control may wait
                if session.stream == stream:
                    session.writing_since = None
            if session.stream != stream:
                log.info("session_replaced", name=session.name, peer=context.peer())
                await context.abort(grpc.StatusCode.ABORTED, REPLACED)
            if session.closing is not None:
                code, detail = session.closing
                await context.abort(getattr(grpc.StatusCode, code), detail)
            seen = "the referee ended its stream"
        finally:
            # Reached by a cancel of this task when the call died under it: the bot's process
            # ended, its connection closed, or it cancelled the call.
            reader.cancel()
            session.stream_ended(stream, seen)

    async def _join(
        self,
        request_iterator: AsyncIterator[pb.PlayRequest],
        context: PlayContext,
    ) -> BotSession | None:
        evicted = self.hello_waits.enter()
        try:
            first = await self._first_message(request_iterator, context, evicted)
            if first is None:
                return None
            if first.WhichOneof("message") != "hello":
                self.lobby.note_refusal("a stream whose first message was not a Hello")
                await context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Hello"
                )
            try:
                return self.lobby.claim(first.hello)
            except LobbyError as refused:
                await self._refuse_hello(context, refused, evicted)
            return None  # unreachable: abort raises
        finally:
            self.hello_waits.leave(evicted)

    async def _first_message(
        self,
        request_iterator: AsyncIterator[pb.PlayRequest],
        context: PlayContext,
        evicted: asyncio.Future[None],
    ) -> pb.PlayRequest | None:
        """The stream's first message, or None when it ended without one; aborts the stream
        when none comes in time or a newer stream needs its place."""
        reading = asyncio.ensure_future(anext(request_iterator))
        reading.add_done_callback(_settled)
        try:
            await asyncio.wait(
                (reading, evicted),
                timeout=self.hello_timeout_s,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            late = not reading.done()
            if late:
                reading.cancel()
        if late:
            if evicted.done():
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, self._evicted_detail())
            self.lobby.note_refusal(
                f"a stream that sent no Hello within {self.hello_timeout_s:g} s"
            )
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "no Hello in time")
        try:
            return reading.result()
        except StopAsyncIteration:
            return None
        except OversizedMessage as exc:
            self.lobby.note_refusal(f"a stream whose first message was {exc}")
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, f"the first message was {exc}")
        except DecodeError as exc:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"the first message is not a PlayRequest: {exc}"
            )
        return None  # unreachable: abort raises

    def _evicted_detail(self) -> str:
        return (
            f"{self.hello_waits.limit} newer streams were waiting for their Hello: say Hello "
            "as soon as the stream opens"
        )

    async def _refuse_hello(
        self, context: PlayContext, refused: LobbyError, evicted: asyncio.Future[None]
    ) -> None:
        peer = context.peer()
        over_budget = self.refusals.over_budget_for(peer) is not None
        self.refusals.refuse("hello_refused", peer, refused.code, str(refused))
        self.lobby.note_refusal(
            f"a Hello with {refused}" if refused.code == "PERMISSION_DENIED" else str(refused)
        )
        if over_budget:
            # Still a waiting stream meanwhile: a flood of them pushes out its own oldest.
            await asyncio.wait((evicted,), timeout=HELLO_PENALTY_S)
        await context.abort(getattr(grpc.StatusCode, refused.code), str(refused))

    async def _read(
        self, request_iterator: AsyncIterator[pb.PlayRequest], session: BotSession, stream: int
    ) -> None:
        try:
            async for message in request_iterator:
                if session.stream != stream:
                    return  # a rejoined stream has taken over
                session.receive(message)
                if session.closing is not None:
                    return
            # The call may be going away (Play's task is then cancelled, and this one with
            # it), or the bot half-closed and still reads: only the wait tells them apart.
            await asyncio.sleep(HALF_CLOSE_S)
            session.stream_ended(stream, HALF_CLOSED)
        except asyncio.CancelledError:
            raise
        except OversizedMessage as exc:
            session.hang_up(Misbehaviour.MALFORMED, f"sent {exc}", "RESOURCE_EXHAUSTED")
        except DecodeError as exc:
            session.hang_up(
                Misbehaviour.MALFORMED,
                f"sent bytes that are not a PlayRequest: {exc}",
                "INVALID_ARGUMENT",
            )
        except Exception as exc:  # a broken stream
            session.stream_ended(stream, f"its stream broke: {exc}")

    async def Watch(self, request: pb.WatchRequest, context: WatchContext) -> AsyncIterator[bytes]:
        peer = context.peer()
        try:
            self.gate.admit(peer, request.token)
            watcher = self.hub.subscribe(request.match_id)
        except Refused as refused:
            await context.abort(getattr(grpc.StatusCode, refused.code), refused.detail)
        log.info("spectator_joined", peer=peer, match=request.match_id or "all")
        try:
            # Headers now, so a client can tell it was let in before any match says anything.
            await context.send_initial_metadata(())
            # Each message comes serialized once for every stream (see SpectatorHub).
            while (batch := await self.hub.next_batch(watcher)) is not None:
                for data in batch:
                    yield data
        finally:
            # Also when the hub cancels a write the client never took: the place is free.
            self.hub.unsubscribe(watcher)
        if watcher.dropped:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"this Watch stream fell {spectators.QUEUE_LIMIT} messages behind and was "
                "dropped: a spectator must keep up",
            )

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


def _canceller(task: asyncio.Task[Any] | None) -> Callable[[], None] | None:
    """What ends a stream's call from outside it: a cancel of the task grpc runs it in."""
    if task is None:
        return None

    def cancel() -> None:
        task.cancel()

    return cancel


def _settled(task: asyncio.Future[Any]) -> None:
    """Mark a task's outcome as seen: a read given up on may still end, with no one to tell."""
    if not task.cancelled():
        task.exception()


class OversizedMessage(DecodeError):
    """A message from a bot over the referee's limit (MAX_MESSAGE_BYTES)."""

    def __init__(self, size: int) -> None:
        super().__init__(
            f"a message of {size} bytes, over the referee's limit of {MAX_MESSAGE_BYTES} bytes"
        )


def _play_request(data: bytes) -> pb.PlayRequest:
    """Play's request deserializer, which applies the referee's message limit (see
    GRPC_MESSAGE_BYTES)."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise OversizedMessage(len(data))
    return pb.PlayRequest.FromString(data)


def _as_is(data: bytes) -> bytes:
    return data


def _play_response_bytes(message: pb.PlayResponse | bytes) -> bytes:
    """Play's response serializer: decision requests come already serialized (see
    referee.matches.decisions), every other response is a message."""
    return message if isinstance(message, bytes) else message.SerializeToString()


def referee_handlers(servicer: RefereeServicer) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
    """As the generated add_RefereeServiceServicer_to_server registers, but Play also writes
    bytes."""
    return {
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play,
            request_deserializer=_play_request,
            response_serializer=_play_response_bytes,
        ),
        "Watch": grpc.unary_stream_rpc_method_handler(
            servicer.Watch,
            request_deserializer=pb.WatchRequest.FromString,
            response_serializer=_as_is,  # the hub serializes each message once for all
        ),
        "ListGames": grpc.unary_unary_rpc_method_handler(
            servicer.ListGames,
            request_deserializer=pb.ListGamesRequest.FromString,
            response_serializer=pb.ListGamesResponse.SerializeToString,
        ),
    }


class RefereeServer:
    """A started grpc.aio server with its lobby and spectator hub."""

    def __init__(
        self,
        server: grpc.aio.Server,
        lobby: Lobby,
        hub: SpectatorHub,
        address: str,
        unix_address: str | None = None,
        spectator_token: str = "",
        hello_waits: HelloWaits | None = None,
    ):
        self.server = server
        self.lobby = lobby
        self.hub = hub
        # Play streams yet to say Hello (empty is falsy: hence no `or`).
        self.hello_waits = HelloWaits() if hello_waits is None else hello_waits
        self.address = address
        self.unix_address = unix_address  # also listening here, for bots without network
        self.spectator_token = spectator_token  # what Watch asks for (over TCP only)

    async def stop(self, grace: float = 1.0) -> None:
        self.hub.close()
        await self.server.stop(grace)


class TlsError(ValueError):
    """A server certificate or key that cannot be used."""


def tls_credentials(cert: Path | None, key: Path | None) -> grpc.ServerCredentials | None:
    """Server credentials from PEM files, or None (plaintext) when neither is given."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise TlsError("TLS needs both a certificate and its private key (PEM files)")
    key_pem = _pem(key, b"PRIVATE KEY-----", "private key")
    cert_pem = _pem(cert, b"-----BEGIN CERTIFICATE-----", "certificate")
    return grpc.ssl_server_credentials([(key_pem, cert_pem)])


def _pem(path: Path, marker: bytes, what: str) -> bytes:
    try:
        pem = path.read_bytes()
    except OSError as exc:
        raise TlsError(f"cannot read the TLS {what} {path}: {exc.strerror or exc}") from None
    if marker not in pem:
        raise TlsError(f"{path} is not a PEM file holding a {what}")
    return pem


async def start_server(
    listen: str,
    hello_timeout_s: float = HELLO_TIMEOUT_S,
    lobby: Lobby | None = None,
    tls_cert: Path | None = None,
    tls_key: Path | None = None,
    unix_listen: str | None = None,
    spectator_token: str | None = None,
    max_spectators: int = MAX_SPECTATORS,
    max_hello_waits: int = MAX_HELLO_WAITS,
) -> RefereeServer:
    """Serve on listen ('127.0.0.1:0' picks a free port; 'unix:/path' a Unix socket), with TLS
    when given a certificate and its key (PEM files). The returned address is what bots
    connect to. unix_listen ('unix:/path') adds a plaintext Unix socket for sandboxed bots.
    Watch is served over TCP only, to at most max_spectators streams at once, each with
    spectator_token (None: a fresh random one; RefereeServer.spectator_token tells it). At
    most max_hello_waits Play streams wait for their Hello at once (referee.wire.connections)."""
    credentials = tls_credentials(tls_cert, tls_key)
    lobby = lobby or Lobby()
    hub = SpectatorHub(max_spectators)
    spectator_token = secrets.token_urlsafe(32) if spectator_token is None else spectator_token
    gate = SpectatorGate(
        spectator_token, tcp_served=not listen.startswith("unix"), refusals=Refusals()
    )
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", GRPC_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0),
            *server_options(listeners=1 if unix_listen is None else 2),
        ]
    )
    hello_waits = HelloWaits(max_hello_waits)
    servicer = RefereeServicer(lobby, hub, hello_timeout_s, gate, hello_waits)
    handlers = referee_handlers(servicer)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
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
    if credentials is None:
        port = server.add_insecure_port(listen)
    else:
        try:
            port = server.add_secure_port(listen, credentials)
        except RuntimeError:  # grpc says only that it failed to bind
            raise TlsError(
                f"cannot serve TLS on {listen}: is the address free, and is {tls_key} the key "
                f"of {tls_cert}?"
            ) from None
    if port == 0 and not listen.startswith("unix"):
        raise OSError(f"cannot listen on {listen}")
    if unix_listen is not None:
        server.add_insecure_port(unix_listen)  # guarded by its folder's permissions
    await server.start()
    await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    address = listen if listen.startswith("unix") else f"{listen.rsplit(':', 1)[0]}:{port}"
    log.info("listening", address=address, tls=credentials is not None)
    unix_address = address if listen.startswith("unix") else unix_listen
    return RefereeServer(server, lobby, hub, address, unix_address, spectator_token, hello_waits)
