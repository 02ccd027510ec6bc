"""A seat's legal actions as the wire carries them (DecisionRequest.legal_actions), and the
engine action that a Decision names: the referee sends these, and a bot's local search maps the
index it was sent to the engine's action id with the same code."""

from __future__ import annotations

from arena.v1 import referee_pb2 as pb

from arena_games.base import GameOptions, GameState
from arena_games.protowire import field_tag, framed, varint

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
