"""Turning a state's decision point into what the seat is sent, and its answer back."""

from __future__ import annotations

from arena.v1 import referee_pb2 as pb
from google.protobuf.internal.containers import RepeatedCompositeFieldContainer

from referee.games.base import GameOptions, GameState

# A label and a typed action depend on the action id alone (the GameState contract), so each is
# built once per game and copied into requests: building them anew was most of a request's cost.
_built: dict[type, dict[int, pb.LegalAction]] = {}


def add_legal_actions(
    state: GameState[GameOptions], seat: int, into: RepeatedCompositeFieldContainer[pb.LegalAction]
) -> None:
    """Append the seat's legal actions, indexed in the engine's stable order, labelled and
    typed."""
    built = _built.setdefault(type(state), {})
    for index, action in enumerate(state.legal_actions(seat)):
        template = built.get(action)
        if template is None:
            template = built[action] = pb.LegalAction(
                label=state.action_label(action), action=state.action_message(action)
            )
        item = into.add()
        item.CopyFrom(template)
        item.index = index


def legal_action_messages(state: GameState[GameOptions], seat: int) -> list[pb.LegalAction]:
    """The seat's legal actions as a list (see add_legal_actions)."""
    request = pb.DecisionRequest()
    add_legal_actions(state, seat, request.legal_actions)
    return list(request.legal_actions)


def resolve_decision(state: GameState[GameOptions], seat: int, decision: pb.Decision) -> int | None:
    """The engine action a Decision names, or None when it names no legal action."""
    legal = state.legal_actions(seat)
    if decision.WhichOneof("choice") == "action":
        return state.action_for(decision.action, seat)
    if decision.WhichOneof("choice") == "index" and decision.index < len(legal):
        return legal[decision.index]
    return None
