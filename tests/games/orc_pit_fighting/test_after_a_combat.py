"""Orc Pit Fighting against its rules (docs/games/orc-pit-fighting.md): who moves after a combat."""

from __future__ import annotations

from arena_games.orc_pit_fighting.table import Phase

from tests.games.orc_pit_fighting.scenario import (
    Game,
    attack,
    choose,
    draw_procedure_table,
    finish_quietly,
)


def test_the_defender_chooses_the_turn_even_when_he_loses() -> None:
    game = Game("9c 8c 2h 3h", "2s 3d 4d 5d")
    attack(game, "9c")
    resolved = game.resolved(finish_quietly(game, 1, 6))
    assert resolved.winner == 0
    assert game.table.phase == Phase.CHOOSE_TURN and game.seat() == 1
    assert game.legal() == ["take turn", "give turn"]
    game.act("give turn")
    assert game.table.phase == Phase.TURN and game.seat() == 0


def test_holding_a_club_but_no_spade_one_may_still_defend() -> None:
    game = Game("9c 8c 2h 3h", "4c 3d 4d 5d")
    game.acts("attack 9c", "decline")
    assert game.legal() == ["defend", "counterattack"]


def test_a_drawn_card_kept_cannot_go_to_the_pit_later() -> None:
    game = Game("9c Tc 5d 6d 2h", "Ts 3d 4d 3h")
    attack(game, "9c")
    game.acts("pass", "pit Tc", "pass", "pass")
    game.act("dirty draw 5d")
    game.chance("Jh")
    game.act("keep drawn")
    assert "pit Jh" not in game.legal(), "only right after it was drawn"
    assert game.legal() == ["pass", "dirty draw 6d"]


def test_after_a_counterattack_the_winner_chooses() -> None:
    game = Game("9c 8c 2h 3h", "2s 3d 4d 5d")
    attack(game, "9c", "counterattack")
    resolved = game.resolved(finish_quietly(game, 6, 1))
    assert resolved.winner == 1 and game.table.damage == [1, 0]
    assert game.table.phase == Phase.CHOOSE_TURN and game.seat() == 1
    game.act("take turn")
    assert game.seat() == 1


def test_a_blank_seat_does_not_choose_the_winner_does() -> None:
    game = Game("9c 8c 2h 3h", "4h 5h 6h 7d")
    game.act("attack 9c")
    game.act("decline")
    game.act("blank 4h")
    finish_quietly(game, 1, 6)
    assert game.table.damage == [0, 1]
    assert game.table.phase == Phase.CHOOSE_TURN and game.seat() == 0


def test_no_winner_and_no_defender_a_die_decides() -> None:
    game = draw_procedure_table("9c 2d 8c", "9s 7h 8s")
    game.fight.defender = None  # as after a counterattack
    choose(game, "2d", "7h")
    assert game.table.phase == Phase.TURN_ROLL
    game.roll(5)
    assert game.table.phase == Phase.TURN and game.seat() == 1
