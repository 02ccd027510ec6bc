"""Strato-Sphere: war-game action on a ring of face-down nodes, for two or four seats.

Rules: ../shared/seeds/strato-sphere.txt (its list of moves is in RULINGS.md); every rule as
implemented and the rulings this engine adds are in docs/games/strato-sphere.md.
- rules.py: cards and forces, the ring of nodes, action ids and their labels.
- state.py: the state machine (deal, turns of three moves (fewer in the first round), attacks,
  preventions, the end).
- messages.py: events with their audience, observations and the text picture.
- strato_worlds.py: worlds a seat cannot tell from its own, from its view or a state (search).
"""

from __future__ import annotations

from arena_games.base import GameDefinition
from arena_games.strato_sphere.rules import DECISION_BOUND, RULES_VERSION
from arena_games.strato_sphere.state import StratoSphereOptions, StratoSphereState

STRATO_SPHERE: GameDefinition[StratoSphereOptions] = GameDefinition(
    name="strato-sphere",
    title="Strato-Sphere",
    seat_counts=(2, 4),
    rules_version=RULES_VERSION,
    options_model=StratoSphereOptions,
    state_class=StratoSphereState,
    decision_cap=DECISION_BOUND,
)

__all__ = ["STRATO_SPHERE", "StratoSphereOptions", "StratoSphereState"]
