"""Playing a bot session over gRPC: connect, say hello, answer every request, until the
referee ends the session."""

from __future__ import annotations

import logging
import os
import queue
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc

from arena_sdk import __version__
from arena_sdk.bot import Bot, choice_index, unwrap

log = logging.getLogger("arena_sdk")


class ArenaError(Exception):
    """The session could not be played: a refused token, no referee, a broken stream."""


class _Dropped(Exception):
    """The stream broke under the bot (the connection, not the referee, ended it)."""


# The connection dropped; the referee did not end the stream itself.
_DROPPED_CODES = frozenset({grpc.StatusCode.UNAVAILABLE})


@dataclass
class SessionSummary:
    matches: int = 0
    decisions: int = 0
    end_reason: str = ""


def run(
    bot: Bot,
    address: str | None = None,
    token: str | None = None,
    join_timeout_s: float | None = None,
    root_cert: str | Path | None = None,
    rejoin_s: float = 30.0,
) -> SessionSummary:
    """Play every match the referee gives this session. The address ('host:port' or
    'unix:/path') and token default to $ARENA_ADDRESS and $ARENA_TOKEN. A referee that is not
    reachable yet is waited for until join_timeout_s (default $ARENA_JOIN_TIMEOUT_S, else
    30 s). With a root certificate (a PEM file;
    default $ARENA_ROOT_CERT) the connection is TLS and the referee must prove itself with a
    certificate that root signed. A connection that drops is joined again with the same token
    for up to rejoin_s, or the shorter grace the referee's Welcome gives (a referee that allows
    rejoining resumes the match; see docs/threat-model.md); 0 gives up at once."""
    address = address or os.environ.get("ARENA_ADDRESS", "")
    token = token or os.environ.get("ARENA_TOKEN", "")
    if not address or not token:
        raise ArenaError("no referee address or token: pass them or set ARENA_ADDRESS/ARENA_TOKEN")
    root_cert = root_cert or os.environ.get("ARENA_ROOT_CERT") or None
    if join_timeout_s is None:
        join_timeout_s = _join_timeout_from_env()
    with _channel(address, root_cert) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=join_timeout_s)
        except grpc.FutureTimeoutError:
            hint = (
                "is it serving TLS with a certificate this root certificate signed?"
                if root_cert
                else "if it serves TLS, give its root certificate in $ARENA_ROOT_CERT"
            )
            raise ArenaError(
                f"could not reach the referee at {address} within {join_timeout_s:g} s ({hint})"
            ) from None
        return _Session(bot, channel, token, rejoin_s).play()


def _join_timeout_from_env() -> float:
    text = os.environ.get("ARENA_JOIN_TIMEOUT_S", "").strip()
    if not text:
        return 30.0
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise ArenaError(f"ARENA_JOIN_TIMEOUT_S must be a positive number of seconds, not {text!r}")
    return seconds


# A bot started before its referee knocks again within a second, not grpc's default of minutes.
_RECONNECT = [("grpc.initial_reconnect_backoff_ms", 100), ("grpc.max_reconnect_backoff_ms", 1000)]


def _channel(address: str, root_cert: str | Path | None) -> grpc.Channel:
    if root_cert is None:
        return grpc.insecure_channel(address, options=_RECONNECT)
    try:
        pem = Path(root_cert).read_bytes()
    except OSError as exc:
        raise ArenaError(f"cannot read the root certificate {root_cert}: {exc}") from None
    credentials = grpc.ssl_channel_credentials(root_certificates=pem)
    return grpc.secure_channel(address, credentials, options=_RECONNECT)


class _Session:
    def __init__(self, bot: Bot, channel: grpc.Channel, token: str, rejoin_s: float) -> None:
        self.bot = bot
        self.channel = channel
        self.token = token
        self.rejoin_s = rejoin_s
        self.outgoing: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
        self.welcomed = False  # the current stream was let in
        self.rejoining = False  # a stream of this session was let in and then dropped
        self.grace_s = 0.0  # how long the referee lets this session rejoin (its Welcome says)
        self.summary = SessionSummary()

    def _requests(
        self, outgoing: queue.SimpleQueue[pb.PlayRequest | None]
    ) -> Iterator[pb.PlayRequest]:
        while (message := outgoing.get()) is not None:
            yield message

    def play(self) -> SessionSummary:
        """Streams until the referee ends the session, joining again after a dropped one."""
        dropped_at: float | None = None
        while True:
            try:
                self._stream()
                return self.summary
            except _Dropped as dropped:
                if self.welcomed or dropped_at is None:  # a stream that had joined: start over
                    dropped_at = time.monotonic()
                self.rejoining = True
                limit_s = min(self.rejoin_s, self.grace_s)
                if time.monotonic() - dropped_at >= limit_s:
                    raise ArenaError(
                        f"the connection to the referee dropped ({dropped}) and could not be "
                        f"joined again within {limit_s:g} s"
                    ) from None
                log.warning("the connection dropped (%s): joining again", dropped)
                time.sleep(0.2)

    def _stream(self) -> None:
        """One stream: Hello, then every message until the session ends. Raises _Dropped when
        the connection broke, ArenaError when the referee ended the stream."""
        hello = pb.Hello(token=self.token, bot_name=self.bot.name or type(self.bot).__name__)
        hello.sdk_version = __version__
        outgoing: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
        self.outgoing = outgoing
        self.welcomed = False
        outgoing.put(pb.PlayRequest(hello=hello))
        stub = referee_pb2_grpc.RefereeServiceStub(self.channel)
        try:
            for response in stub.Play(self._requests(outgoing)):
                if not self._handle(response):
                    break
        except grpc.RpcError as error:
            code, details = error.code(), error.details()
            if code in _DROPPED_CODES and self.rejoin_s > 0:
                raise _Dropped(f"{code.name}: {details}") from None
            if code == grpc.StatusCode.ALREADY_EXISTS and self.rejoining:
                # The referee has not yet seen the old stream drop (a connection cut on the
                # way can look open for a while): try again within the grace.
                raise _Dropped(f"the old stream is still open at the referee: {details}") from None
            raise ArenaError(f"the referee ended the session: {code.name}: {details}") from None
        finally:
            outgoing.put(None)

    def _handle(self, response: pb.PlayResponse) -> bool:
        kind = response.WhichOneof("message")
        if kind == "welcome":
            self.welcomed = True
            self.grace_s = response.welcome.rejoin_grace_ms / 1000
        elif kind == "decision_request":
            self._tell(response.decision_request.events)
            self._decide(response.decision_request)
        elif kind == "match_start":
            self.bot.on_match_start(response.match_start)
        elif kind == "match_end":
            self._tell(response.match_end.events)
            self.summary.matches += 1
            self.bot.on_match_end(response.match_end)
        elif kind == "notice":
            log.warning("referee notice: %s", response.notice.message)
        elif kind == "session_end":
            self.summary.end_reason = response.session_end.reason
            return False
        return True

    def _tell(self, events: Iterable[pb.Event]) -> None:
        """Events come inside the request or end they precede; a bot sees them one by one."""
        for event in events:
            self.bot.on_event(event)

    def _decide(self, request: pb.DecisionRequest) -> None:
        legal = list(request.legal_actions)
        index = choice_index(self.bot.act(unwrap(request.observation), legal), legal)
        self.summary.decisions += 1
        decision = pb.Decision(
            match_id=request.match_id, decision_id=request.decision_id, index=index
        )
        self.outgoing.put(pb.PlayRequest(decision=decision))
