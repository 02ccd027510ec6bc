"""Playing a bot session over gRPC: connect, say hello, answer every request, until the
referee ends the session."""

from __future__ import annotations

import logging
import os
import queue
import time
from collections.abc import Iterator
from dataclasses import dataclass

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
) -> SessionSummary:
    """Play every match the referee gives this session. The address ('host:port' or
    'unix:/path') and token default to $ARENA_ADDRESS and $ARENA_TOKEN. A join that fails
    because the referee is not reachable yet is retried until join_timeout_s."""
    address = address or os.environ.get("ARENA_ADDRESS", "")
    token = token or os.environ.get("ARENA_TOKEN", "")
    if not address or not token:
        raise ArenaError("no referee address or token: pass them or set ARENA_ADDRESS/ARENA_TOKEN")
    deadline = time.monotonic() + join_timeout_s
    delay = 0.05
    while True:
        session = _Session(bot, address, token)
        try:
            return session.play()
        except _JoinFailed as failed:
            if time.monotonic() + delay > deadline:
                raise ArenaError(f"could not join the referee at {address}: {failed}") from None
            log.info("join failed (%s); retrying in %.2fs", failed, delay)
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


class _JoinFailed(Exception):
    pass


class _Session:
    def __init__(self, bot: Bot, address: str, token: str) -> None:
        self.bot = bot
        self.address = address
        self.token = token
        self.outgoing: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
        self.summary = SessionSummary()
        self.joined = False

    def _requests(self) -> Iterator[pb.PlayRequest]:
        while (message := self.outgoing.get()) is not None:
            yield message

    def play(self) -> SessionSummary:
        hello = pb.Hello(token=self.token, bot_name=self.bot.name or type(self.bot).__name__)
        hello.sdk_version = __version__
        self.outgoing.put(pb.PlayRequest(hello=hello))
        with grpc.insecure_channel(self.address) as channel:
            stub = referee_pb2_grpc.RefereeServiceStub(channel)
            try:
                for response in stub.Play(self._requests(), wait_for_ready=not self.joined):
                    self.joined = True
                    if not self._handle(response):
                        break
            except grpc.RpcError as error:
                code, details = error.code(), error.details()
                if not self.joined and code == grpc.StatusCode.UNAVAILABLE:
                    raise _JoinFailed(details) from None
                raise ArenaError(f"the referee ended the session: {code.name}: {details}") from None
            finally:
                self.outgoing.put(None)
        return self.summary

    def _handle(self, response: pb.PlayResponse) -> bool:
        kind = response.WhichOneof("message")
        if kind == "decision_request":
            self._decide(response.decision_request)
        elif kind == "event":
            self.bot.on_event(response.event)
        elif kind == "match_start":
            self.bot.on_match_start(response.match_start)
        elif kind == "match_end":
            self.summary.matches += 1
            self.bot.on_match_end(response.match_end)
        elif kind == "notice":
            log.warning("referee notice: %s", response.notice.message)
        elif kind == "session_end":
            self.summary.end_reason = response.session_end.reason
            return False
        return True

    def _decide(self, request: pb.DecisionRequest) -> None:
        legal = list(request.legal_actions)
        index = choice_index(self.bot.act(unwrap(request.observation), legal), legal)
        self.summary.decisions += 1
        decision = pb.Decision(
            match_id=request.match_id, decision_id=request.decision_id, index=index
        )
        self.outgoing.put(pb.PlayRequest(decision=decision))
