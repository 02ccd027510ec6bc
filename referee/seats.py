"""What the match runner needs from a seat, and the errors a seat can fail with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from arena.v1 import referee_pb2 as pb

from referee.decisions import EncodedRequest
from referee.settings import Misbehaviour


class SeatFailure(Exception):
    """A seat failed a decision; kind says how, the message gives the detail."""

    def __init__(self, kind: Misbehaviour, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


class Seat(Protocol):
    """One participant of one match, wherever it runs."""

    name: str

    async def start(self, start: pb.MatchStart) -> None: ...

    async def decide(
        self, request: EncodedRequest, on_sent: Callable[[], None] | None = None
    ) -> pb.Decision:
        """The seat's answer; raises SeatFailure. The runner enforces the deadline, from the
        moment the seat calls on_sent (when the request leaves for the bot), if it does."""
        ...

    async def end(self, end: pb.MatchEnd) -> None: ...


class Spectators(Protocol):
    """Where public information of a match goes (the Watch streams)."""

    def publish(self, match_id: str, message: pb.WatchResponse) -> None: ...

    def watching(self, match_id: str) -> bool:
        """Whether anyone watches the match: what only spectators need is built only then."""
        ...
