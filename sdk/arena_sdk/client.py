"""Playing a bot session over gRPC: connect, say hello, answer every request, until the
referee ends the session."""

from __future__ import annotations

import logging
import os
import queue
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


@dataclass
class SessionSummary:
    matches: int = 0
    decisions: int = 0
    end_reason: str = ""


def run(
    bot: Bot,
    address: str | None = None,
    token: str | None = None,
    join_timeout_s: float = 30.0,
    root_cert: str | Path | None = None,
) -> SessionSummary:
    """Play every match the referee gives this session. The address ('host:port' or
    'unix:/path') and token default to $ARENA_ADDRESS and $ARENA_TOKEN. A referee that is not
    reachable yet is waited for until join_timeout_s. With a root certificate (a PEM file;
    default $ARENA_ROOT_CERT) the connection is TLS and the referee must prove itself with a
    certificate that root signed."""
    address = address or os.environ.get("ARENA_ADDRESS", "")
    token = token or os.environ.get("ARENA_TOKEN", "")
    if not address or not token:
        raise ArenaError("no referee address or token: pass them or set ARENA_ADDRESS/ARENA_TOKEN")
    root_cert = root_cert or os.environ.get("ARENA_ROOT_CERT") or None
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
        return _Session(bot, channel, token).play()


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
    def __init__(self, bot: Bot, channel: grpc.Channel, token: str) -> None:
        self.bot = bot
        self.channel = channel
        self.token = token
        self.outgoing: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
        self.summary = SessionSummary()

    def _requests(self) -> Iterator[pb.PlayRequest]:
        while (message := self.outgoing.get()) is not None:
            yield message

    def play(self) -> SessionSummary:
        hello = pb.Hello(token=self.token, bot_name=self.bot.name or type(self.bot).__name__)
        hello.sdk_version = __version__
        self.outgoing.put(pb.PlayRequest(hello=hello))
        stub = referee_pb2_grpc.RefereeServiceStub(self.channel)
        try:
            for response in stub.Play(self._requests()):
                if not self._handle(response):
                    break
        except grpc.RpcError as error:
            code, details = error.code(), error.details()
            raise ArenaError(f"the referee ended the session: {code.name}: {details}") from None
        finally:
            self.outgoing.put(None)
        return self.summary

    def _handle(self, response: pb.PlayResponse) -> bool:
        kind = response.WhichOneof("message")
        if kind == "decision_request":
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
