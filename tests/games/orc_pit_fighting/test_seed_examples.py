"""Orc Pit Fighting against its rules (docs/games/orc-pit-fighting.md): a scripted scenario for
every example in the seed."""

from __future__ import annotations

from arena_games.orc_pit_fighting.rules import Play, combat_value
from arena_games.orc_pit_fighting.table import Phase

from tests.games.orc_pit_fighting.scenario import Game, attack, c, cs


def test_nine_eight_seven_is_a_combat_value_of_eleven() -> None:
    game = Game("9c 8c 7c 2h 3h", "2s 3d 4d 5d 6d")
    attack(game, "9c")
    assert game.table.phase == Phase.BRUTALITY and game.seat() == 1, "the attacked seat first"
    game.act("pass")
    assert "pit 8c" in game.legal() and "pit 7c" not in game.legal(), "each card must be flush"
    game.acts("pit 8c", "pit 7c")
    assert game.observe(1).combat.sides[0].combat_value == 11
    assert combat_value([Play.single(c("9c")), Play.single(c("8c")), Play.single(c("7c"))]) == 11
    game.act("pass")
    assert game.table.phase == Phase.DIRTY_TRICKS
    game.acts("pass", "pass")
    game.roll(1, 1)
    assert game.table.discard[-3:] == cs("9c 8c 7c"), "the Pit is discarded in its order"


def test_flush_runs_extend_at_either_end_and_pictures_are_worth_twelve() -> None:
    game = Game("Tc 9c Jc Qc 2h", "2s 3d 4d 5d 6d")
    attack(game, "Tc")
    game.act("pass")
    game.acts("pit 9c", "pit Jc", "pit Qc")
    assert game.fight.plays[0][-1] == Play((c("Qc"),), 12, 12)
    assert combat_value(game.fight.plays[0]) == 12 + 3


def test_eight_and_seven_of_spades_play_as_the_seven_of_clubs() -> None:
    game = Game("8c 8s 7s Ks As", "2s 3d 4d 5d 6d")
    attack(game, "8c")
    game.act("pass")
    assert "pair 7s8s" in game.legal()
    assert not [x for x in game.legal() if x.startswith("pair K")], "no pair with an ace"
    game.act("pair 7s8s")
    assert game.fight.plays[0][-1] == Play((c("7s"), c("8s")), 7, 7)
    assert combat_value(game.fight.plays[0]) == 8 + 1, "the pair counts as one card"
    assert game.table.hands[0] == cs("Ks As")


def test_a_pair_must_be_flush_with_the_run_and_a_defender_plays_no_pairs() -> None:
    game = Game("9c 5s 6s 2h 3h", "7s 8s 9s 3d 4d")
    attack(game, "9c")
    assert not [x for x in game.legal() if x.startswith("pair")], "the defender plays spades"
    game.act("pass")
    assert "pair 5s6s" not in game.legal(), "a 5 does not extend a run of 9"


def test_the_dirty_tricks_example_seven_of_diamonds_then_six_of_clubs() -> None:
    """The nine and eight of clubs played, the seven of diamonds and six of clubs in hand: the
    diamond draws the seven of spades, played as the seven of clubs; then the six of clubs."""
    game = Game("9c 8c 7d 6c 2h", "Ts 9s 8s 2d 3h")
    attack(game, "9c")
    game.acts("pit Ts", "pit 8c", "pit 9s")
    assert "pit 6c" not in game.legal()
    game.acts("pass", "pit 8s", "pass")
    assert game.table.phase == Phase.DIRTY_TRICKS and game.seat() == 1, "the attacked first"
    game.act("pass")
    assert game.legal() == ["pass", "dirty draw 7d"], "the six of clubs is not valid yet"
    game.act("dirty draw 7d")
    assert game.table.out[0] == cs("7d")
    game.chance("7s")
    assert game.table.phase == Phase.DRAWN
    assert game.legal() == ["keep drawn", "pit 7s"]
    game.act("pit 7s")
    assert game.fight.plays[0][-1] == Play.single(c("7s"))
    assert "pit 6c" in game.legal(), "the drawn seven made the six valid"
    game.act("pit 6c")
    assert combat_value(game.fight.plays[0]) == 9 + 3
    game.act("pass")
    assert game.table.phase == Phase.RESULT


def test_a_drawn_card_must_be_valid_and_a_hand_card_never_goes_straight_to_the_pit() -> None:
    game = Game("9c Tc 8d 5d 2h", "Ts 9s 8s 2d 3h")
    attack(game, "9c")
    game.acts("pass", "pit Tc", "pass")
    game.act("pass")  # seat 1 in Dirty Tricks
    assert "pit 8d" not in game.legal(), "the eight of diamonds in hand is not drawn"
    game.act("dirty draw 8d")
    game.chance("4h")
    assert game.legal() == ["keep drawn"], "a four does not extend 9-10"
    game.act("keep drawn")
    assert c("4h") in game.table.hands[0]
    game.act("dirty draw 5d")
    game.chance("Jh")
    assert game.legal() == ["keep drawn", "pit Jh"], "a jack of any suit extends 9-10"
