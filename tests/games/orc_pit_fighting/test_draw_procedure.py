"""Orc Pit Fighting against its rules (docs/games/orc-pit-fighting.md): every pairing of the Draw
procedure."""

from __future__ import annotations

import pytest
from arena_games.orc_pit_fighting.rules import Play
from arena_games.orc_pit_fighting.table import Phase, Stance

from tests.games.orc_pit_fighting.scenario import c, choose, draw_procedure_table

NO_WINNER = "no winner"


@pytest.mark.parametrize(
    ("hand0", "hand1", "first", "second"),
    [
        ("9c 2d 8c", "9s 7h 8s", "2d", "7h"),  # diamonds: sneaks away
        ("9c 2h 8c", "9s 7d 8s", "8c", "7d"),  # anything against diamonds
        ("9c 2h 8c", "9s 7h 8s", "2h", "7h"),  # hearts against hearts
        ("9c 3s 8c", "9s 7h 8s", "3s", "8s"),  # spades against spades
        ("9c 2h 8c", "9s", "2h", None),  # hearts against nothing (nothing counts as hearts)
    ],
)
def test_draw_pairings_that_end_the_combat_with_no_winner(
    hand0: str, hand1: str, first: str, second: str | None
) -> None:
    game = draw_procedure_table(hand0, hand1)
    events = choose(game, first, second)
    assert any(NO_WINNER in e.message.text for e in events)
    assert game.table.damage == [0, 0]
    assert game.table.combat is None
    if second is not None:
        assert game.table.phase == Phase.CHOOSE_TURN and game.seat() == 1, "the Defender"
    else:
        assert game.table.round == 2, "a seat out of cards ends the round"


@pytest.mark.parametrize(
    ("hand0", "hand1", "first", "second", "bonus"),
    [
        ("9c 2h 8c", "9s 7h 8s", "8c", "7h", (3, 0)),  # clubs against hearts
        ("9c 8c", "9s", "8c", None, (4, 0)),  # clubs against nothing
        ("9c Ac 8c", "9s 7h 8s", "Ac", "7h", (5, 0)),  # the ace of clubs against hearts
        ("9c 3s 8c", "9s 7h 8s", "3s", "7h", (1, 0)),  # spades against hearts
        ("9c 3s", "9s", "3s", None, (2, 0)),  # spades against nothing
        ("9c 2h 8c", "9s As 8s", "2h", "As", (0, 0)),  # the ace of spades against hearts
        ("9c 2h 8c", "9s Kc 8s", "2h", "Kc", (0, 3)),  # the defender's club against hearts
    ],
)
def test_draw_pairings_that_roll_again_with_fixed_additions(
    hand0: str, hand1: str, first: str, second: str | None, bonus: tuple[int, int]
) -> None:
    game = draw_procedure_table(hand0, hand1)
    events = choose(game, first, second)
    assert any("roll again" in e.message.text for e in events)
    assert game.table.phase == Phase.RESULT
    assert game.fight.reroll == bonus
    game.roll(3)
    resolved = game.resolved(game.state.apply_chance(3))
    assert tuple(resolved.bonus) == bonus
    if bonus == (0, 0):
        assert game.table.phase == Phase.DRAW_CHOICE or game.table.combat is None
    else:
        assert resolved.HasField("winner")
        assert game.table.damage[1 - resolved.winner] == 1, "a loser takes one point only"


@pytest.mark.parametrize(
    ("first", "second", "stances"),
    [
        ("8c", "Tc", (Stance.ATTACK, Stance.COUNTERATTACK)),  # clubs against clubs
        ("8c", "4s", (Stance.ATTACK, Stance.DEFEND)),  # clubs against spades
        ("3s", "Tc", (Stance.DEFEND, Stance.COUNTERATTACK)),  # spades against clubs
    ],
)
def test_clubs_against_clubs_or_spades_start_a_new_brutality(
    first: str, second: str, stances: tuple[Stance, Stance]
) -> None:
    game = draw_procedure_table("9c 8c 3s 2h", "9s Tc 4s 7h")
    events = choose(game, first, second)
    assert any("combat again" in e.message.text for e in events)
    fight = game.fight
    assert fight.combat_round == 2
    assert tuple(fight.stance) == stances
    assert fight.plays == [[Play.single(c(first))], [Play.single(c(second))]]
    assert game.table.phase == Phase.BRUTALITY and game.seat() == 1, "the attacked seat first"
    assert fight.defender == 1, "the original Defender keeps the choice"


def test_a_turned_up_ace_of_clubs_goes_straight_to_the_result() -> None:
    game = draw_procedure_table("9c Ac 2h", "9s Tc 7h")
    choose(game, "Ac", "Tc")
    assert game.table.phase == Phase.RESULT and game.fight.ace_of_clubs == 0


def test_a_turned_up_ace_of_spades_may_be_answered_with_the_ace_of_clubs() -> None:
    game = draw_procedure_table("9c 8c Ac", "9s As 7h")
    choose(game, "8c", "As")
    assert game.table.phase == Phase.ACE_ANSWER and game.seat() == 0
    assert game.legal() == ["decline", "pit Ac"]


def test_no_cards_at_all_after_a_draw_ends_the_combat_and_the_round() -> None:
    game = draw_procedure_table("9c", "9s")
    assert game.table.round == 2 and game.table.damage == [0, 0]
