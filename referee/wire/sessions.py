"""Bot sessions: one per bot process, identified by an unguessable token, playing any number of
matches over one Play stream at a time. The session is the only path between a stream and a
seat, so a stream can act only for its own seats and receives only its own seats' messages.

A session with a rejoin grace outlives its stream: when the stream drops, a new stream with the
same token may take over within the grace and finish the match. The decisions waiting meanwhile
keep their clocks running (the time away is the bot's); the new stream is sent the current
match's start and every request the old one took but did not answer. Past the grace, what waits
fails as a crash; a rejoin after that plays the matches still to come.

A new stream with the token also takes the seat from a stream the referee still holds: a
connection cut on the way (a router that stops forwarding) can look open to the referee for
minutes, and refusing the bot until then would cost it its matches. The old stream is closed
(ABORTED, REPLACED); the token is a bearer secret either way. A session without a grace keeps
one stream for good: a second is refused."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from arena.v1 import referee_pb2 as pb
from arena_games.match_settings import Misbehaviour
from arena_games.protowire import field_tag, framed

from referee.matches.decisions import EncodedRequest
from referee.matches.seats import DecisionClock, SeatFailure

REPLACED = "a newer stream with this session's token took the seat over"

RECENT_REFUSALS = 32  # refused streams a lobby remembers

RECENT_MATCHES = 8
"""Matches whose asked decisions a session remembers, so that a late answer from one of them
is told apart from an answer to a decision that was never asked."""

MAX_NOTICES = 100
"""Messages that answer no request (each costs a notice on the outbox) a session may send beyond
one per decision it was asked, before the referee hangs up: late answers after a timeout are
fine, a flood must not grow the outbox without bound. Also how many notice texts are kept."""


_DECISION_REQUEST = field_tag(pb.PlayResponse, "decision_request")

EXIT_WAIT_S = 0.5
"""How long a stream's end waits for the bot's process to end, when the referee started it. The
bot's socket closes as its process dies, so the referee usually sees the stream end a moment
before the exit is reaped; waiting, bounded, lets the forfeit name the exit code or the signal
rather than only a stream that ended."""

ProcessEnd = Callable[[float], Awaitable[str | None]]
"""How the bot's process ended ("exited with code 7"), waiting up to that many seconds; None
while it still runs."""


@dataclass(frozen=True, slots=True)
class OutgoingRequest:
    """A decision request waiting in the outbox: the PlayResponse's bytes, and the clock to
    start when the stream takes it (None when it is sent again to a rejoined stream)."""

    data: bytes  # a serialized pb.PlayResponse
    clock: DecisionClock | None
    key: tuple[str, int] = ("", 0)  # (match id, decision id)


@dataclass(slots=True)
class _Waiting:
    """A decision asked of the session and not yet answered."""

    future: asyncio.Future[pb.Decision]
    request: OutgoingRequest  # with the decision's clock
    taken: bool = False  # a stream took it: a rejoined stream is sent it again


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
    # How long a new stream with the token may take over from one that dropped (0: none).
    rejoin_grace_s: float = 0.0
    # Which stream is the session's now (each attach makes a new one), and since when the
    # session has had none after a drop (time.perf_counter()), else None.
    stream: int = 0
    away_since: float | None = None
    rejoins: int = 0
    # Each decision's answer to come, by (match id, decision id): a late answer from an
    # earlier match can never settle a decision of the current one.
    _pending: dict[tuple[str, int], _Waiting] = field(default_factory=dict)
    # The current match's start, and whether a stream took it (a rejoined one gets it again).
    _start: pb.PlayResponse | None = None
    _start_taken: bool = False
    _grace: asyncio.TimerHandle | None = None
    # When the stream began the write it is still in (time.perf_counter()), else None: a write
    # that does not end means the bot is not reading its stream.
    writing_since: float | None = None
    # Ends the current stream's call at once (set by the servicer): a stream replaced while it
    # is stuck in a write would otherwise never see that it was.
    stop_stream: Callable[[], None] | None = None
    _attached: bool = False
    _ended: bool = False
    _asked: int = 0
    # The highest decision id asked, by match, for the last RECENT_MATCHES matches.
    _highest: dict[str, int] = field(default_factory=dict)
    _unrequested: int = 0
    # Set by whoever started the bot's process (None: a remote bot, whose process the referee
    # cannot see): a stream's end then says how the process ended.
    process_end: ProcessEnd | None = None
    # The CPU seconds the bot's process tree used so far (referee/bots/cpu_group.py), set by
    # whoever started it with CPU accounting (the CPU clock); None: no accounting.
    cpu_s: Callable[[], float] | None = None
    _judging: asyncio.Task[None] | None = None

    @property
    def asked(self) -> int:
        """Decisions asked of this session so far."""
        return self._asked

    @property
    def current_match(self) -> str | None:
        """The id of the match this session plays now, between its start and its end."""
        return self._start.match_start.match_id if self._start is not None else None

    @property
    def attached(self) -> bool:
        """A stream is the session's now."""
        return self._attached

    @property
    def ended(self) -> bool:
        return self._ended

    def attach(self, hello: pb.Hello) -> None:
        if self._attached and self.rejoin_grace_s <= 0:
            raise LobbyError(
                "ALREADY_EXISTS", "this token has already joined (one stream per session)"
            )
        if self.closing is not None or self._ended:
            raise LobbyError("PERMISSION_DENIED", "the referee has ended this session")
        rejoining = self.connected.is_set()
        if rejoining and self.rejoin_grace_s <= 0:
            raise LobbyError("PERMISSION_DENIED", "this session's stream ended: no rejoining")
        taking_over = self._attached
        if taking_over:
            self._replace_stream()
        self._attached = True
        self.stream += 1
        self.bot_name = hello.bot_name
        self.connected.set()
        if rejoining:
            self._rejoined(taking_over)

    def _replace_stream(self) -> None:
        """The stream that holds the seat gives it up to a new one with the token. One waiting
        for its outbox stops at the None _rejoined leaves it, and closes as REPLACED; one stuck
        in a write (a cut connection whose window is full) is ended here."""
        stop, self.stop_stream = self.stop_stream, None
        if self.writing_since is not None and stop is not None:
            stop()
        self.writing_since = None

    def _rejoined(self, taking_over: bool = False) -> None:
        """A new stream takes over: it gets a fresh outbox holding the current match's start
        and every request a dropped stream took unanswered, then what was still waiting."""
        if self._grace is not None:
            self._grace.cancel()
        away_s = time.perf_counter() - (self.away_since or time.perf_counter())
        self.away_since = None
        self.rejoins += 1
        if self.failure is not None and self.failure.kind is Misbehaviour.CRASH:
            self.failure = None  # the matches to come are played again
        old, self.outbox = self.outbox, asyncio.Queue()
        if self._start is not None and self._start_taken:
            self.outbox.put_nowait(self._start)
        for waiting in self._pending.values():
            if waiting.taken and not waiting.future.done():
                request = waiting.request
                self.outbox.put_nowait(OutgoingRequest(request.data, None, request.key))
        while not old.empty():
            if (message := old.get_nowait()) is not None:
                self.outbox.put_nowait(message)
        old.put_nowait(None)  # a dropped stream still reading it stops
        how = "took the seat over from an older stream" if taking_over else "rejoined"
        self.outbox.put_nowait(
            pb.PlayResponse(
                notice=pb.Notice(
                    message=f"{how} after {away_s:.1f} s: the current match's "
                    "start and any request waiting for an answer are sent again"
                )
            )
        )

    def stream_ended(self, stream: int, seen: str) -> None:
        """Stream number `stream` is gone, and `seen` is what the referee saw of its end.
        Within the rejoin grace a new one may take over; else, or after it, every waiting
        decision fails as a crash, with how the bot's process ended when the referee holds it."""
        if stream != self.stream or not self._attached or self.failure is not None:
            return  # an older stream, replaced already; or failed before
        self._attached = False
        self.writing_since = None
        if self.rejoin_grace_s <= 0 or self.closing is not None or self._ended:
            if not self._ended:
                self._crashed(seen)
            return
        self.away_since = time.perf_counter()
        self._grace = asyncio.get_running_loop().call_later(
            self.rejoin_grace_s,
            self._crashed,
            seen,
            f"; it did not rejoin within {self.rejoin_grace_s:g} s",
        )

    def _crashed(self, seen: str, after: str = "") -> None:
        """Fail as a crash: at once for a remote bot, else once its process is seen to end
        (EXIT_WAIT_S at most)."""
        if self.process_end is None:
            self.fail(Misbehaviour.CRASH, seen + after)
            return
        self._judging = asyncio.ensure_future(self._judge(self.process_end, seen, after))

    async def _judge(self, process_end: ProcessEnd, seen: str, after: str) -> None:
        how = await process_end(EXIT_WAIT_S)
        if self._attached:
            return  # a stream took the seat over meanwhile
        if how is None:
            self.fail(Misbehaviour.CRASH, f"{seen}, while its process still ran{after}")
        else:
            self.fail(Misbehaviour.CRASH, f"its process {how}, which ended its stream{after}")

    async def send(self, message: pb.PlayResponse) -> None:
        if self.failure is not None:
            raise self.failure
        kind = message.WhichOneof("message")
        if kind == "match_start":
            self._start, self._start_taken = message, False
        elif kind == "match_end":
            self._start = None
        self.outbox.put_nowait(message)  # no bound: never waits

    async def decide(
        self, request: EncodedRequest, clock: DecisionClock | None = None
    ) -> pb.Decision:
        """The bot's answer, timed by clock from when the stream takes the request to when the
        answer comes off it."""
        future: asyncio.Future[pb.Decision] = asyncio.get_running_loop().create_future()
        key = (request.match_id, request.decision_id)
        outgoing = OutgoingRequest(framed(_DECISION_REQUEST, request.data), clock, key)
        self._pending[key] = _Waiting(future, outgoing)
        self._asked += 1
        self._remember(request.match_id, request.decision_id)
        try:
            if self.failure is not None:
                raise self.failure
            self.outbox.put_nowait(outgoing)
            return await future
        finally:
            self._pending.pop(key, None)

    def sending(self, message: Outgoing) -> pb.PlayResponse | bytes | None:
        """What the stream writes for an outbox item, which it is about to write, or None for a
        request whose decision is already over (nothing to send). A decision's clock starts
        here rather than when the match queued the request: time the request waits behind
        other messages in a busy referee is the referee's, not the bot's."""
        if not isinstance(message, OutgoingRequest):
            if message is self._start:
                self._start_taken = True
            return message
        if message.clock is not None and not message.clock.sent():
            return None
        waiting = self._pending.get(message.key)
        if waiting is not None:
            waiting.taken = True
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
        waiting = self._pending.get((decision.match_id, decision.decision_id))
        if waiting is None or waiting.future.done():
            self._unmatched(decision)
            return
        if waiting.request.clock is not None:
            # Before the match's task wakes: that wait is the referee's.
            waiting.request.clock.answered()
        waiting.future.set_result(decision)

    def _remember(self, match_id: str, decision_id: int) -> None:
        self._highest[match_id] = max(decision_id, self._highest.pop(match_id, 0))
        if len(self._highest) > RECENT_MATCHES:
            del self._highest[next(iter(self._highest))]  # the oldest match

    def _unmatched(self, decision: pb.Decision) -> None:
        """An answer to no waiting decision. One asked before (answered, or timed out) is late
        and settles nothing; one never asked, while a decision waits, is a protocol mistake
        that fails the waiting decision at once rather than after its deadline."""
        named = f"decision {decision.decision_id} of match {decision.match_id!r}"
        waiting = [k for k, w in self._pending.items() if not w.future.done()]
        # Ids start at 1: an answer to decision 0 (an id left unset) was never asked.
        asked_before = 0 < decision.decision_id <= self._highest.get(decision.match_id, 0)
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
            self._pending[key].future.set_exception(failure)

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
        if self._grace is not None:
            self._grace.cancel()
        self.failure = SeatFailure(kind, detail)
        for waiting in self._pending.values():
            if not waiting.future.done():
                waiting.future.set_exception(self.failure)

    def turn_away(self, code: str, detail: str) -> None:
        """Close the session with status code (a gRPC status name) and the detail, through no
        fault of the bot: a live ladder that stops answers UNAVAILABLE, so that the bot comes
        back (a SessionEnd tells it to exit)."""
        if self._ended or self.closing is not None:
            return
        self._ended = True
        self.closing = (code, detail)
        self.outbox.put_nowait(None)

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
        """A write stuck since then (the bot does not read), or no stream since then (the bot
        is away: its time runs)."""
        writing, away = self.session.writing_since, self.session.away_since
        return (writing is not None and writing <= since) or (away is not None and away <= since)


class Lobby:
    """The sessions a referee expects, by token, and the last streams it turned away (so that
    a bot that never joins can be told why: an unknown token, no Hello)."""

    def __init__(self) -> None:
        self._by_token: dict[str, BotSession] = {}
        self._refused: deque[tuple[float, str]] = deque(maxlen=RECENT_REFUSALS)
        # A live ladder's referee listens before it has registered its remote bots' sessions:
        # until then a token it does not know may be one of theirs, and is told to come back
        # (UNAVAILABLE, which the SDK retries) rather than that it is unknown (which ends it).
        self.opening = False

    def note_refusal(self, reason: str) -> None:
        self._refused.append((time.monotonic(), reason))

    def refused_since(self, since: float) -> list[str]:
        """The reasons streams were turned away since `since` (time.monotonic()), each once."""
        return list(dict.fromkeys(reason for at, reason in self._refused if at >= since))

    def register(self, name: str, spec: str = "", token: str | None = None) -> BotSession:
        """A session expected under a fresh token, or under `token` (a live ladder's remote
        bot keeps the secret it was given across sessions and restarts)."""
        if token is not None and token in self._by_token:
            raise LobbyError("ALREADY_EXISTS", "a session with this token is registered")
        session = BotSession(token=token or secrets.token_urlsafe(24), name=name, spec=spec)
        self._by_token[session.token] = session
        return session

    def claim(self, hello: pb.Hello) -> BotSession:
        session = self._by_token.get(hello.token)
        if session is None and self.opening:
            raise LobbyError("UNAVAILABLE", "the referee is starting: join again in a moment")
        if session is None:
            raise LobbyError("PERMISSION_DENIED", "unknown token")
        session.attach(hello)
        return session

    def forget(self, session: BotSession) -> None:
        self._by_token.pop(session.token, None)
