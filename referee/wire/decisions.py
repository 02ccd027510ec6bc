"""Turning a state's decision point into what the seat is sent, and its answer back.

A decision request is sent as bytes joined from parts each encoded once: the request's own
numbers, the observation, each event (once for every seat that may see it) and each legal
action (once per game and index). Building the request as a message, copying it into the
stream's response and serializing that again was a quarter of the referee's work per decision,
and the serializing happened after the bot's clock had started."""

from __future__ import annotations

from dataclasses import dataclass

from arena.v1 import referee_pb2 as pb

from referee.games.base import GameOptions, GameState
from referee.wire.protowire import field_tag, framed, varint

_OBSERVATION = field_tag(pb.DecisionRequest, "observation")
_EVENT = field_tag(pb.DecisionRequest, "events")
_LEGAL_ACTION = field_tag(pb.DecisionRequest, "legal_actions")
_INDEX = varint(pb.LegalAction.DESCRIPTOR.fields_by_name["index"].number << 3)  # a varint field

# A label and a typed action depend on the action id alone (the GameState contract), so each
# action's label and action are encoded once per game, and each (action, index) entry once.
_bodies: dict[type, dict[int, bytes]] = {}
_entries: dict[type, dict[tuple[int, int], bytes]] = {}


def legal_actions_bytes(state: GameState[GameOptions], seat: int) -> tuple[bytes, int]:
    """The seat's legal actions as DecisionRequest.legal_actions entries, indexed in the
    engine's stable order, labelled and typed; and how many there are."""
    kind = type(state)
    entries = _entries.get(kind) or _entries.setdefault(kind, {})
    chunks = []
    legal = state.legal_actions(seat)
    for index, action in enumerate(legal):
        chunk = entries.get((action, index))
        if chunk is None:
            chunk = entries[(action, index)] = _legal_action_entry(state, action, index)
        chunks.append(chunk)
    return b"".join(chunks), len(legal)


def _legal_action_entry(state: GameState[GameOptions], action: int, index: int) -> bytes:
    bodies = _bodies.setdefault(type(state), {})
    body = bodies.get(action)
    if body is None:
        message = pb.LegalAction(
            label=state.action_label(action), action=state.action_message(action)
        )
        body = bodies[action] = message.SerializeToString()
    # proto3 leaves a zero index out, as serializing the whole message would.
    numbered = _INDEX + varint(index) + body if index else body
    return framed(_LEGAL_ACTION, numbered)


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


def legal_action_messages(state: GameState[GameOptions], seat: int) -> list[pb.LegalAction]:
    """The seat's legal actions as messages (see legal_actions_bytes)."""
    request = pb.DecisionRequest.FromString(legal_actions_bytes(state, seat)[0])
    return list(request.legal_actions)


def resolve_decision(state: GameState[GameOptions], seat: int, decision: pb.Decision) -> int | None:
    """The engine action a Decision names, or None when it names no legal action."""
    legal = state.legal_actions(seat)
    if decision.WhichOneof("choice") == "action":
        return state.action_for(decision.action, seat)
    if decision.WhichOneof("choice") == "index" and decision.index < len(legal):
        return legal[decision.index]
    return None
