"""The rules engines, one module per game, and the registry that names them."""

from __future__ import annotations

from arena_games.base import GameDefinition, GameError, GameOptions
from arena_games.capture_the_commander import CAPTURE_THE_COMMANDER
from arena_games.officers_battle import OFFICERS_BATTLE
from arena_games.opposing_force import OPPOSING_FORCE
from arena_games.orc_pit_fighting import ORC_PIT_FIGHTING
from arena_games.strato_sphere import STRATO_SPHERE

GAMES: dict[str, GameDefinition[GameOptions]] = {
    game.name: game  # type: ignore[misc]
    for game in (
        CAPTURE_THE_COMMANDER,
        OFFICERS_BATTLE,
        OPPOSING_FORCE,
        ORC_PIT_FIGHTING,
        STRATO_SPHERE,
    )
}


def get_game(name: str) -> GameDefinition[GameOptions]:
    """The game called name; a GameError lists the known games otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        known = ", ".join(sorted(GAMES))
        raise GameError(f"unknown game {name!r}; known games: {known}") from None
