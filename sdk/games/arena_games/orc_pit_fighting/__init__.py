"""Orc Pit Fighting: two orcs, one deck, a D6, damage to five.

Rules: ../shared/seeds/orc-pit-fighting.txt, settled by RULINGS.md; every card use, the rulings
this engine adds and what each seat sees are in docs/games/orc-pit-fighting.md. Modules, one
purpose each: rules (card values, runs), actions (ids, labels, wire forms), table (the data),
events, rounds (deal, turns, reshuffles, the end), turns (non-combat uses and the cancel),
combat (Brutality, Reinforcements, Dirty Tricks), result (the Result, the Draw procedure, who
moves next), view (observations), knowledge (what a seat's events tell of the hidden cards),
worlds (states dealt from a seat's view), resample (worlds of a true state's seat), state (the
engine contract).
"""

from __future__ import annotations

from arena_games.base import GameDefinition
from arena_games.orc_pit_fighting.rules import DECISION_CAP
from arena_games.orc_pit_fighting.state import OrcPitFightingOptions, OrcPitFightingState

RULES_VERSION = "orc-pit-fighting/3"

ORC_PIT_FIGHTING: GameDefinition[OrcPitFightingOptions] = GameDefinition(
    name="orc-pit-fighting",
    title="Orc Pit Fighting",
    seat_counts=(2,),
    rules_version=RULES_VERSION,
    options_model=OrcPitFightingOptions,
    state_class=OrcPitFightingState,
    decision_cap=DECISION_CAP,
)

__all__ = ["ORC_PIT_FIGHTING", "RULES_VERSION", "OrcPitFightingOptions", "OrcPitFightingState"]
