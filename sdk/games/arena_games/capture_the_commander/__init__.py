"""Capture the Commander: 2-4 players, 13 face-down cards each in a fixed formation; attack the
other formations card against card until a commander (slot 13) falls.

Rules: ../shared/seeds/capture-the-commander.txt, settled by RULINGS.md; the rules as
implemented, the action labels and this engine's own rulings are in
docs/games/capture-the-commander.md.
"""

from __future__ import annotations

from arena_games.base import GameDefinition
from arena_games.capture_the_commander.actions import (
    attack_action,
    decode,
    flip_action,
    gift_action,
)
from arena_games.capture_the_commander.formation import (
    ADJACENT,
    COMMANDER,
    COVERS,
    DEAL_LIMIT,
    DECISION_CAP,
    EMPTY,
    beats,
    commander_distance,
    cover_state,
    fully_uncovered,
    removals_to_expose,
    targetable,
)
from arena_games.capture_the_commander.state import (
    CaptureTheCommanderOptions,
    CaptureTheCommanderState,
)

RULES_VERSION = "capture-the-commander/2"

CAPTURE_THE_COMMANDER: GameDefinition[CaptureTheCommanderOptions] = GameDefinition(
    name="capture-the-commander",
    title="Capture the Commander",
    seat_counts=(2, 3, 4),
    rules_version=RULES_VERSION,
    options_model=CaptureTheCommanderOptions,
    state_class=CaptureTheCommanderState,
    # The most decisions a match can take: the cap in each of the scoring option's deals.
    decision_cap=DECISION_CAP * DEAL_LIMIT,
)

__all__ = [
    "ADJACENT",
    "CAPTURE_THE_COMMANDER",
    "COMMANDER",
    "COVERS",
    "DEAL_LIMIT",
    "DECISION_CAP",
    "EMPTY",
    "CaptureTheCommanderOptions",
    "CaptureTheCommanderState",
    "attack_action",
    "beats",
    "commander_distance",
    "cover_state",
    "decode",
    "flip_action",
    "fully_uncovered",
    "gift_action",
    "removals_to_expose",
    "targetable",
]
