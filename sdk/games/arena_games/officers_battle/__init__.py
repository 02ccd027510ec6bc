"""Officers' Battle: two seats, each with its own deck, battle with officers on three positions.

Rules: ../shared/seeds/officers-battle.txt, settled by RULINGS.md; every rule as implemented and
the rulings this engine adds are in docs/games/officers-battle.md.
- rules.py: card ids, the playable-suit test, series, action ids and their labels.
- state.py: the state machine (setup, the four phases of a turn, the end).
- view.py: events with their audience, typed actions and the text picture.
- observe.py: the observation, put together from wire records of its cards.
- unseen_deals.py: deals of a seat's unseen cards that keep a position possible.
- officers_worlds.py: worlds a seat cannot tell from its own, built from its view.
"""

from __future__ import annotations

from arena_games.base import GameDefinition
from arena_games.officers_battle.rules import DECISION_CAP, RULES_VERSION
from arena_games.officers_battle.state import OfficersBattleOptions, OfficersBattleState

OFFICERS_BATTLE: GameDefinition[OfficersBattleOptions] = GameDefinition(
    name="officers-battle",
    title="Officers' Battle",
    seat_counts=(2,),
    rules_version=RULES_VERSION,
    options_model=OfficersBattleOptions,
    state_class=OfficersBattleState,
    decision_cap=DECISION_CAP,
)

__all__ = ["OFFICERS_BATTLE", "OfficersBattleOptions", "OfficersBattleState"]
