"""A seat's view of a match, gathered from the messages it receives, for search in a bot's own
process: feed it the MatchStart, every Event and each request's observation and legal
actions, and it hands out the SeatView that the engines' world samplers read."""

from __future__ import annotations

from collections.abc import Sequence

from arena.v1 import referee_pb2 as pb
from google.protobuf.message import Message

from referee.games import get_game
from referee.games.base import GameDefinition, GameOptions, SeatView, WorldSampler

_GAME_FIELDS = pb.Observation.DESCRIPTOR.oneofs_by_name["game"].fields


def wrap(observation: Message) -> pb.Observation:
    """The wire's Observation around a game's own observation message (what the SDK's act()
    receives)."""
    if isinstance(observation, pb.Observation):
        return observation
    for field in _GAME_FIELDS:
        if field.message_type is observation.DESCRIPTOR:
            wrapped = pb.Observation()
            getattr(wrapped, field.name).CopyFrom(observation)
            return wrapped
    raise ValueError(f"not a game's observation: {observation.DESCRIPTOR.full_name}")


class SeatTracker:
    """What one seat has been told in its current match."""

    def __init__(self) -> None:
        self.start: pb.MatchStart | None = None
        self.events: list[pb.Event] = []
        self.game: GameDefinition[GameOptions] | None = None

    def on_match_start(self, start: pb.MatchStart) -> None:
        self.start, self.events = start, []
        self.game = get_game(start.game)

    def on_event(self, event: pb.Event) -> None:
        self.events.append(event)

    def view(self, observation: Message, legal_actions: Sequence[pb.LegalAction] = ()) -> SeatView:
        """The view at a request: its observation (wrapped or the game's own) and legal
        actions, after every event received so far."""
        if self.start is None:
            raise ValueError("no MatchStart yet")
        return SeatView(self.start, tuple(self.events), wrap(observation), tuple(legal_actions))

    def sampler(
        self, observation: Message, legal_actions: Sequence[pb.LegalAction] = ()
    ) -> WorldSampler[GameOptions]:
        """Determinizations of the view at a request (see WorldSampler)."""
        if self.game is None:
            raise ValueError("no MatchStart yet")
        return self.game.world_sampler(self.view(observation, legal_actions))
