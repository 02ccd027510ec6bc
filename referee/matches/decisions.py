"""Turning a state's decision point into what the seat is sent, and its answer back.

A decision request is sent as bytes joined from parts each encoded once: the request's own
numbers, the observation, each event (once for every seat that may see it) and each legal
action (once per game and index). Building the request as a message, copying it into the
stream's response and serializing that again was a quarter of the referee's work per decision,
and the serializing happened after the bot's clock had started."""

from __future__ import annotations

from dataclasses import dataclass

from arena.v1 import referee_pb2 as pb
from arena_games.base import GameOptions, GameState
from arena_games.legal_actions import legal_actions_bytes
from arena_games.protowire import field_tag, framed

_OBSERVATION = field_tag(pb.DecisionRequest, "observation")
_EVENT = field_tag(pb.DecisionRequest, "events")


@dataclass(frozen=True, slots=True)
class EncodedRequest:
    """A decision request as the seat is sent it, with what the referee checks the answer
    against."""

    match_id: str
    decision_id: int
    legal_count: int  # the answer's index must be below this
    data: bytes  # the serialized pb.DecisionRequest

    def message(self) -> pb.DecisionRequest:
        """The request as a message, for seats in the referee's own process."""
        return pb.DecisionRequest.FromString(self.data)

    @classmethod
    def of(cls, request: pb.DecisionRequest) -> EncodedRequest:
        """A request built as a message (tests, tools): the same as encode_request's."""
        return cls(
            request.match_id,
            request.decision_id,
            len(request.legal_actions),
            request.SerializeToString(),
        )


def encode_request(
    state: GameState[GameOptions], header: pb.DecisionRequest, events: list[bytes]
) -> EncodedRequest:
    """The request for header.seat: header's fields, the seat's observation and legal actions,
    and events, each a serialized pb.Event the seat may see."""
    seat = header.seat
    legal, count = legal_actions_bytes(state, seat)
    observation = state.observation(seat).SerializeToString()
    parts = [header.SerializeToString(), framed(_OBSERVATION, observation)]
    parts += [framed(_EVENT, event) for event in events]
    parts.append(legal)
    return EncodedRequest(header.match_id, header.decision_id, count, b"".join(parts))
