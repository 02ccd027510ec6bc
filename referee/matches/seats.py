"""What the match runner needs from a seat, and the errors a seat can fail with."""

from __future__ import annotations

from typing import Protocol

from arena.v1 import referee_pb2 as pb
from arena_games.match_settings import Misbehaviour

from referee.matches.decisions import EncodedRequest


class SeatFailure(Exception):
    """A seat failed a decision; kind says how, the message gives the detail."""

    def __init__(self, kind: Misbehaviour, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


class DecisionClock(Protocol):
    """A decision's clock, which the seat starts and stops where the bot's time really starts
    and ends: time a request or an answer waits in a busy referee is the referee's."""

    def sent(self) -> bool:
        """The request is leaving for the bot; False when its decision is already over (the
        request is then dropped, not sent)."""

    def answered(self) -> None:
        """The bot's answer is in."""


class Seat(Protocol):
    """One participant of one match, wherever it runs."""

    name: str

    async def start(self, start: pb.MatchStart) -> None: ...

    async def decide(
        self, request: EncodedRequest, clock: DecisionClock | None = None
    ) -> pb.Decision:
        """The seat's answer; raises SeatFailure. The runner enforces the deadline, from
        clock.sent() if the seat calls it; the bot's time ends at clock.answered() if the seat
        calls it, else when the match has the answer."""
        ...

    async def end(self, end: pb.MatchEnd) -> None: ...

    def stalled(self, since: float) -> bool:
        """Whether the seat's stream has been unable to take anything since `since` (a
        time.perf_counter()): a bot that stops reading its stream blocks the referee's writes."""
        ...


class Spectators(Protocol):
    """Where public information of a match goes (the Watch streams)."""

    def publish(self, match_id: str, message: pb.WatchResponse) -> None: ...

    def watching(self, match_id: str) -> bool:
        """Whether anyone watches the match: what only spectators need is built only then."""
        ...
