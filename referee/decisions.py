"""Turning a state's decision point into what the seat is sent, and its answer back."""

from __future__ import annotations

from arena.v1 import referee_pb2 as pb

from referee.games.base import GameOptions, GameState

# A label and a typed action depend on the action id alone (the GameState contract), so each
# action's LegalAction is encoded once per game and index, and a request's list is joined from
# those bytes and parsed in one call. Building the messages field by field was most of a
# request's cost.
_LEGAL_ACTIONS_TAG = b"\x2a"  # DecisionRequest.legal_actions: field 5, length-delimited
_encoded: dict[type, dict[tuple[int, int], bytes]] = {}


def add_legal_actions(
    state: GameState[GameOptions], seat: int, request: pb.DecisionRequest
) -> None:
    """Append the seat's legal actions to the request, indexed in the engine's stable order,
    labelled and typed."""
    encoded = _encoded.setdefault(type(state), {})
    chunks = []
    for index, action in enumerate(state.legal_actions(seat)):
        chunk = encoded.get((action, index))
        if chunk is None:
            chunk = encoded[(action, index)] = _encode(state, action, index)
        chunks.append(chunk)
    request.MergeFromString(b"".join(chunks))


def _encode(state: GameState[GameOptions], action: int, index: int) -> bytes:
    """The bytes of one legal_actions entry: the same bytes as serializing the message."""
    body = pb.LegalAction(
        index=index, label=state.action_label(action), action=state.action_message(action)
    ).SerializeToString()
    return _LEGAL_ACTIONS_TAG + _varint(len(body)) + body


def _varint(number: int) -> bytes:
    out = bytearray()
    while number >= 0x80:
        out.append(number & 0x7F | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)


def legal_action_messages(state: GameState[GameOptions], seat: int) -> list[pb.LegalAction]:
    """The seat's legal actions as a list (see add_legal_actions)."""
    request = pb.DecisionRequest()
    add_legal_actions(state, seat, request)
    return list(request.legal_actions)


def resolve_decision(state: GameState[GameOptions], seat: int, decision: pb.Decision) -> int | None:
    """The engine action a Decision names, or None when it names no legal action."""
    legal = state.legal_actions(seat)
    if decision.WhichOneof("choice") == "action":
        return state.action_for(decision.action, seat)
    if decision.WhichOneof("choice") == "index" and decision.index < len(legal):
        return legal[decision.index]
    return None
