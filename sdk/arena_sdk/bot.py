"""What a bot author writes: a class with one method, act()."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb

Choice = int | pb.LegalAction


class Bot:
    """Subclass and override act(). The hooks are optional.

    act() gets the seat's observation (the game's own message, such as
    OpposingForceObservation) and the legal actions, and returns the chosen LegalAction or its
    index. It is called only when the seat must decide.
    """

    name: str = ""

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> Choice:
        raise NotImplementedError("a Bot must implement act()")

    def on_match_start(self, match: pb.MatchStart) -> None:
        """A new match begins; the seat and the game are in match."""

    def on_event(self, event: pb.Event) -> None:
        """Something this seat may see happened."""

    def on_match_end(self, end: pb.MatchEnd) -> None:
        """The match is over; end.result has every seat's rank."""


def unwrap(observation: pb.Observation) -> Any:
    """The game's own observation message inside the wire's wrapper."""
    game = observation.WhichOneof("game")
    if game is None:
        raise ValueError("the observation names no game")
    return getattr(observation, game)


UINT32_MAX = 2**32 - 1  # Decision.index is a uint32


def sent_index(choice: Choice, legal_actions: Sequence[pb.LegalAction]) -> tuple[int, str | None]:
    """The index to send for a bot's return value, and what is wrong with it (None when it is
    a legal choice). A wrong one is sent all the same, so that the referee records it as what it
    is (illegal_action, with the index) rather than a crash: the index itself when it fits the
    wire, else the first index past the legal list."""
    try:
        return choice_index(choice, legal_actions), None
    except ValueError as mistake:
        if isinstance(choice, int) and not isinstance(choice, bool) and 0 <= choice <= UINT32_MAX:
            return choice, str(mistake)
        return len(legal_actions), str(mistake)


def choice_index(choice: Choice, legal_actions: Sequence[pb.LegalAction]) -> int:
    """The index a bot's return value stands for; ValueError when it is not among the legal."""
    if isinstance(choice, pb.LegalAction):
        return choice.index
    if isinstance(choice, bool) or not isinstance(choice, int):
        raise ValueError(f"act() returned {choice!r}, not an index or a LegalAction")
    if not 0 <= choice < len(legal_actions):
        raise ValueError(f"act() returned index {choice}, outside 0..{len(legal_actions) - 1}")
    return choice
