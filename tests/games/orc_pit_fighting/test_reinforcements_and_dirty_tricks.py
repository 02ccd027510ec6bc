"""Orc Pit Fighting against its rules (docs/games/orc-pit-fighting.md): Reinforcements, Dirty Tricks
and the Flair limit, the cards a draw brings and the Blank."""

from __future__ import annotations

from arena_games import cards
from arena_games.orc_pit_fighting.table import Phase

from tests.games.orc_pit_fighting.scenario import Game, attack, c, cs, finish_quietly


def test_reinforcements_the_single_highest_heart_gets_one() -> None:
    game = Game("9c Kh 2h 3d", "9s Ah 5h 4d")
    attack(game, "9c")
    game.acts("pit 9s", "pass", "pass")
    assert game.table.phase == Phase.REINFORCEMENTS and game.seat() == 0, "the Attacker first"
    assert game.legal() == ["pass", "pit 2h", "pit Kh"]
    game.acts("pit Kh", "pit 5h", "pass")
    assert game.seat() == 1, "a pass is final: seat 1 goes on alone"
    game.acts("pit Ah", "pass")
    assert game.fight.reinforced == [False, True], "the ace is the highest heart"
    assert game.table.phase == Phase.DIRTY_TRICKS
    assert game.observe(0).combat.sides[1].combat_value == 9 + 1


def test_with_more_flair_only_the_ace_of_diamonds_may_be_played_in_dirty_tricks() -> None:
    game = Game("9c Ad 5d 2h", "Ts 9s 3d 4d")
    game.put(game.table.flair[0], "6h")
    attack(game, "9c")
    game.acts("pit Ts", "pass", "pit 9s", "pass")
    game.act("pass")
    assert game.legal() == ["pass", "pit Ad", "dirty draw Ad"]
    game = Game("9c 5d 2h 3h", "Ts 9s 3d 4d")
    game.put(game.table.flair[0], "6h")
    attack(game, "9c")
    game.acts("pit Ts", "pass", "pit 9s", "pass")
    game.act("pass")
    assert game.legal() == ["pass"]
    game.table.flair[1].append(game.table.deck.pop())
    game.touched()
    assert game.legal() == ["pass", "dirty draw 5d"], "equal Flair: no limit"
    game = Game("5d 2h", "3h 4h")
    game.put(game.table.flair[0], "6h 7h")
    assert "draw two 5d" in game.legal(), "no Flair limit out of combat"


def test_the_ace_of_diamonds_is_exempt_from_the_flair_bar_for_each_of_its_uses() -> None:
    """Ruling: "The ace of diamonds is exempt from the Flair bar for each of its uses (its Pit
    use and its draw use), as its own sentence says." Seed: "May not be played if you have more
    Flair than the opponent (except the ace of diamonds)"."""
    game = Game("9c Ad 5d 2h", "Ts 9s 3d 4d")
    game.put(game.table.flair[0], "6h")
    attack(game, "9c")
    game.acts("pit Ts", "pass", "pit 9s", "pass")
    game.act("pass")
    assert game.legal() == ["pass", "pit Ad", "dirty draw Ad"], "both uses, not the five"
    game.act("dirty draw Ad")
    game.chance("6d")
    assert game.legal() == ["keep drawn"], "drawing again is the six's use: barred"
    assert c("Ad") in game.table.out[0]
    game.act("keep drawn")
    assert game.legal() == ["pass"], "the five stays barred"


def test_a_drawn_ace_of_clubs_must_be_kept() -> None:
    game = Game("9c 5d 2h 3h", "Ts 9s 3d 4d")
    attack(game, "9c")
    game.acts("pit Ts", "pass", "pit 9s", "pass", "pass")
    game.act("dirty draw 5d")
    game.chance("Ac")
    assert game.legal() == ["keep drawn"]


def test_a_drawn_ace_of_spades_may_be_played_by_the_defender() -> None:
    game = Game("9c Tc 2h 3h", "8s 5d 3d 4d")
    attack(game, "9c")
    game.acts("pit 8s", "pit Tc", "pass", "pass")
    game.act("dirty draw 5d")
    game.chance("As")
    assert game.legal() == ["keep drawn", "pit As"]
    game.act("pit As")
    assert game.table.phase == Phase.ACE_ANSWER and game.seat() == 0


def test_a_drawn_diamond_may_draw_again_in_the_same_turn() -> None:
    game = Game("9c Tc 2h 3h", "8s 5d 3d 4d")
    attack(game, "9c")
    game.acts("pit 8s", "pit Tc", "pass", "pass")
    game.act("dirty draw 5d")
    game.chance("6d")
    assert game.legal() == ["keep drawn", "dirty draw 6d"], "a six does not extend the eight"
    game.act("dirty draw 6d")
    game.chance("7s")
    assert game.legal() == ["keep drawn", "pit 7s"]
    assert game.table.out[1] == cs("5d 6d")


def test_the_blank_card_is_hidden_from_the_opponent_until_it_is_discarded() -> None:
    game = Game("Kc 2h 3h 4h", "8h 5h 6h 7d")
    game.act("attack Kc")
    game.act("decline")
    game.act("blank 6h")
    mine = game.observe(1).combat.sides[1].plays[0]
    theirs = game.observe(0).combat.sides[1].plays[0]
    spectator = game.observe(None).combat.sides[1].plays[0]
    assert mine.face_down and [cards.from_message(x) for x in mine.cards] == cs("6h")
    assert theirs.face_down and not theirs.cards and not spectator.cards
    assert theirs.value == -1
    finish_quietly(game, 1, 6)
    assert c("6h") in game.table.discard


def test_unlocked_cards_need_a_drawn_card_in_the_pit_and_were_not_valid_before() -> None:
    """The ten was valid when Dirty Tricks began (the player held it back): it stays
    unplayable; the six only becomes valid through the drawn seven."""
    game = Game("9c 8c 7d 6c Tc", "Ts 9s 8s 2d")
    attack(game, "9c")
    game.acts("pit Ts", "pit 8c", "pit 9s", "pass", "pit 8s", "pass", "pass")
    assert game.legal() == ["pass", "dirty draw 7d"]
    game.act("dirty draw 7d")
    game.chance("7s")
    game.act("pit 7s")
    assert "pit 6c" in game.legal() and "pit Tc" not in game.legal()
