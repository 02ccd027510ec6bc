"""Turning a state's decision point into what the seat is sent, and its answer back."""

from __future__ import annotations

from arena.v1 import referee_pb2 as pb

from referee.games.base import GameOptions, GameState


def legal_action_messages(state: GameState[GameOptions], seat: int) -> list[pb.LegalAction]:
    """The seat's legal actions, indexed in the engine's stable order, labelled and typed."""
    return [
        pb.LegalAction(index=i, label=state.action_label(a), action=state.action_message(a))
        for i, a in enumerate(state.legal_actions(seat))
    ]


def resolve_decision(state: GameState[GameOptions], seat: int, decision: pb.Decision) -> int | None:
    """The engine action a Decision names, or None when it names no legal action."""
    legal = state.legal_actions(seat)
    if decision.WhichOneof("choice") == "action":
        return state.action_for(decision.action, seat)
    if decision.WhichOneof("choice") == "index" and decision.index < len(legal):
        return legal[decision.index]
    return None
