"""Bot sessions: one per bot process, identified by an unguessable token, playing any number of
matches over one Play stream. The session is the only path between a stream and a seat, so a
stream can act only for its own seats and receives only its own seats' messages."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field

from arena.v1 import referee_pb2 as pb

from referee.decisions import EncodedRequest
from referee.protowire import field_tag, framed
from referee.seats import DecisionClock, SeatFailure
from referee.settings import Misbehaviour

RECENT_MATCHES = 8
"""Matches whose asked decisions a session remembers, so that a late answer from one of them
is told apart from an answer to a decision that was never asked."""

MAX_NOTICES = 100
"""Messages that answer no request (each costs a notice on the outbox) a session may send beyond
one per decision it was asked, before the referee hangs up: late answers after a timeout are
fine, a flood must not grow the outbox without bound. Also how many notice texts are kept."""


_DECISION_REQUEST = field_tag(pb.PlayResponse, "decision_request")


@dataclass(frozen=True, slots=True)
class OutgoingRequest:
    """A decision request waiting in the outbox: the PlayResponse's bytes, and the clock to
    start when the stream takes it."""

    data: bytes  # a serialized pb.PlayResponse
    clock: DecisionClock | None


Outgoing = pb.PlayResponse | OutgoingRequest


class LobbyError(Exception):
    """A Hello the referee refuses; code is the gRPC status name to answer with."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(eq=False)
class BotSession:
    token: str
    name: str
    spec: str = ""
    bot_name: str = ""  # what the bot calls itself in its Hello
    outbox: asyncio.Queue[Outgoing | None] = field(default_factory=asyncio.Queue)
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    failure: SeatFailure | None = None
    notices: list[str] = field(default_factory=list)
    # (gRPC status name, detail) once the referee hangs up on the bot for its own fault.
    closing: tuple[str, str] | None = None
    # Each decision's answer to come and its clock, by (match id, decision id): a late answer
    # from an earlier match can never settle a decision of the current one.
    _pending: dict[tuple[str, int], tuple[asyncio.Future[pb.Decision], DecisionClock | None]] = (
        field(default_factory=dict)
    )
    # When the stream began the write it is still in (time.perf_counter()), else None: a write
    # that does not end means the bot is not reading its stream.
    writing_since: float | None = None
    _attached: bool = False
    _ended: bool = False
    _asked: int = 0
    # The highest decision id asked, by match, for the last RECENT_MATCHES matches.
    _highest: dict[str, int] = field(default_factory=dict)
    _unrequested: int = 0

    def attach(self, hello: pb.Hello) -> None:
        if self._attached:
            raise LobbyError(
                "ALREADY_EXISTS", "this token has already joined (one stream per session)"
            )
        self._attached = True
        self.bot_name = hello.bot_name
        self.connected.set()

    async def send(self, message: pb.PlayResponse) -> None:
        if self.failure is not None:
            raise self.failure
        self.outbox.put_nowait(message)  # no bound: never waits

    async def decide(
        self, request: EncodedRequest, clock: DecisionClock | None = None
    ) -> pb.Decision:
        """The bot's answer, timed by clock from when the stream takes the request to when the
        answer comes off it."""
        future: asyncio.Future[pb.Decision] = asyncio.get_running_loop().create_future()
        key = (request.match_id, request.decision_id)
        self._pending[key] = (future, clock)
        self._asked += 1
        self._remember(request.match_id, request.decision_id)
        try:
            if self.failure is not None:
                raise self.failure
            data = framed(_DECISION_REQUEST, request.data)
            self.outbox.put_nowait(OutgoingRequest(data, clock))
            return await future
        finally:
            self._pending.pop(key, None)

    def sending(self, message: Outgoing) -> pb.PlayResponse | bytes | None:
        """What the stream writes for an outbox item, which it is about to write, or None for a
        request whose decision is already over (nothing to send). A decision's clock starts
        here rather than when the match queued the request: time the request waits behind
        other messages in a busy referee is the referee's, not the bot's."""
        if not isinstance(message, OutgoingRequest):
            return message
        if message.clock is not None and not message.clock.sent():
            return None
        return message.data

    def receive(self, message: pb.PlayRequest) -> None:
        """A message from the bot after its Hello."""
        if self.closing is not None:
            return
        kind = message.WhichOneof("message")
        if kind != "decision":
            self._notice("", f"unexpected {kind or 'empty'} message ignored")
            return
        decision = message.decision
        key = (decision.match_id, decision.decision_id)
        future, clock = self._pending.get(key, (None, None))
        if future is None or future.done():
            self._unmatched(decision)
            return
        if clock is not None:
            clock.answered()  # before the match's task wakes to it: that wait is the referee's
        future.set_result(decision)

    def _remember(self, match_id: str, decision_id: int) -> None:
        self._highest[match_id] = max(decision_id, self._highest.pop(match_id, 0))
        if len(self._highest) > RECENT_MATCHES:
            del self._highest[next(iter(self._highest))]  # the oldest match

    def _unmatched(self, decision: pb.Decision) -> None:
        """An answer to no waiting decision. One asked before (answered, or timed out) is late
        and settles nothing; one never asked, while a decision waits, is a protocol mistake
        that fails the waiting decision at once rather than after its deadline."""
        named = f"decision {decision.decision_id} of match {decision.match_id!r}"
        waiting = [k for k, (future, _) in self._pending.items() if not future.done()]
        asked_before = decision.decision_id <= self._highest.get(decision.match_id, 0)
        if asked_before or not waiting:
            self._notice(decision.match_id, f"{named} was not asked or has expired")
            return
        match_id, decision_id = waiting[0]
        expected = f"decision {decision_id} of match {match_id!r}"
        self._notice(
            decision.match_id, f"{named} was never asked: the referee waits for {expected}"
        )
        failure = SeatFailure(Misbehaviour.PROTOCOL, f"answered {named}, expected {expected}")
        for key in waiting:
            self._pending[key][0].set_exception(failure)

    def _notice(self, match_id: str, text: str) -> None:
        self._unrequested += 1
        if self._unrequested > MAX_NOTICES + self._asked:
            self.hang_up(
                Misbehaviour.MALFORMED,
                f"flooded the referee: {self._unrequested} messages that answered no request, "
                f"for {self._asked} decisions asked",
                "RESOURCE_EXHAUSTED",
            )
            return
        if len(self.notices) < MAX_NOTICES:
            self.notices.append(text)
        self.outbox.put_nowait(pb.PlayResponse(notice=pb.Notice(match_id=match_id, message=text)))

    def hang_up(self, kind: Misbehaviour, detail: str, code: str) -> None:
        """End the stream for the bot's own fault: what it was deciding fails with this cause,
        and the stream closes with status code (a gRPC status name) and the detail."""
        if self.closing is not None or self._ended:
            return
        self.fail(kind, detail)
        self.closing = (code, detail)
        self.outbox.put_nowait(None)

    def fail(self, kind: Misbehaviour, detail: str) -> None:
        """The stream is gone: every pending and future decision fails with this cause."""
        if self.failure is not None or self._ended:
            return
        self.failure = SeatFailure(kind, detail)
        for future, _ in self._pending.values():
            if not future.done():
                future.set_exception(self.failure)

    def end(self, reason: str) -> None:
        """Close the session: the bot is told, then its stream ends."""
        if self._ended:
            return
        self._ended = True
        self.outbox.put_nowait(pb.PlayResponse(session_end=pb.SessionEnd(reason=reason)))
        self.outbox.put_nowait(None)


class SessionSeat:
    """A session playing one seat of one match."""

    def __init__(self, session: BotSession) -> None:
        self.session = session
        self.name = session.name

    async def start(self, start: pb.MatchStart) -> None:
        await self.session.send(pb.PlayResponse(match_start=start))

    async def decide(
        self, request: EncodedRequest, clock: DecisionClock | None = None
    ) -> pb.Decision:
        return await self.session.decide(request, clock)

    async def end(self, end: pb.MatchEnd) -> None:
        await self.session.send(pb.PlayResponse(match_end=end))

    def stalled(self, since: float) -> bool:
        writing = self.session.writing_since
        return writing is not None and writing <= since


class Lobby:
    """The sessions a referee expects, by token."""

    def __init__(self) -> None:
        self._by_token: dict[str, BotSession] = {}

    def register(self, name: str, spec: str = "") -> BotSession:
        session = BotSession(token=secrets.token_urlsafe(24), name=name, spec=spec)
        self._by_token[session.token] = session
        return session

    def claim(self, hello: pb.Hello) -> BotSession:
        session = self._by_token.get(hello.token)
        if session is None:
            raise LobbyError("PERMISSION_DENIED", "unknown token")
        session.attach(hello)
        return session

    def forget(self, session: BotSession) -> None:
        self._by_token.pop(session.token, None)
