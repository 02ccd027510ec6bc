"""Orc Pit Fighting against its rules (docs/games/orc-pit-fighting.md): the Result and every one of
its caps, and the aces that change it."""

from __future__ import annotations

from arena_games.orc_pit_fighting.combat import ace_of_diamonds_rolled
from arena_games.orc_pit_fighting.rules import Play, combat_value, d3, lowest_cards
from arena_games.orc_pit_fighting.table import Combat, Phase, Stance, Table

from tests.games.orc_pit_fighting.scenario import Game, attack, c, cs


def test_the_ace_of_clubs_opens_a_combat_that_goes_straight_to_the_result() -> None:
    """Not cancellable; the opponent must play a valid card; +5 against nothing at all."""
    game = Game("Ac 2h 3h 4h 5h", "Qs 9s Js 2d 3d")
    game.act("attack Ac")
    assert game.table.phase == Phase.DECLARE, "the ace of clubs cannot be cancelled"
    game.act("defend")
    assert game.table.phase == Phase.MUST_PLAY
    assert game.legal() == ["pit 9s", "pit Js", "pit Qs"], "a valid card, no pass"
    game.act("pit Qs")
    assert game.table.phase == Phase.RESULT
    game.roll(6)
    events = game.state.apply_chance(2)
    resolved = game.resolved(events)
    assert list(resolved.rolls) == [2, 6] and list(resolved.bonus) == [5, 0]
    assert resolved.winner == 0 and game.table.damage == [0, 1]


def test_the_ace_of_clubs_in_brutality_makes_a_seat_without_cards_in_the_pit_play_one() -> None:
    game = Game("9c Ac 2h 3h 4h", "Qs 9s 2d 3d 4d")
    attack(game, "9c")
    game.act("pass")
    game.act("pit Ac")
    assert game.table.phase == Phase.MUST_PLAY and game.seat() == 1
    game.act("pit 9s")
    assert game.table.phase == Phase.RESULT
    game.roll(6)
    resolved = game.resolved(game.state.apply_chance(2))
    assert list(resolved.bonus) == [5, 0] and resolved.winner == 0


def test_the_ace_of_clubs_needs_no_answer_when_the_opponent_has_played() -> None:
    game = Game("9c 2h 3h 4h 5h", "Ac Qs 2d 3d 4d")
    attack(game, "9c", "counterattack")
    assert "pit Qs" not in game.legal(), "a counterattacker plays no spades"
    game.act("pit Ac")
    assert game.table.phase == Phase.RESULT, "the attacker's nine is already in the Pit"


def test_against_the_ace_of_clubs_the_opponent_must_play_a_valid_card() -> None:
    """Ruling: "If the opponent holds any card that some stance (Defend, Counterattack) would
    let it play, it must take such a stance and play such a card; it may pass only when it
    holds none." Seed: "The opponent must play a valid card"."""
    game = Game("Ac 2h 3h 4h 5h", "Qc 9c 2d 3d 4d")
    game.act("attack Ac")
    assert game.legal() == ["counterattack"], "a Defend holding only clubs would pass"
    game.act("counterattack")
    assert game.legal() == ["pit 9c", "pit Qc"]
    game = Game("Ac 2h 3h 4h 5h", "9s 2d 3d 4d 5d")
    game.act("attack Ac")
    assert game.legal() == ["defend"]
    game = Game("Ac 2h 3h 4h 5h", "9s 9c 3d 4d 5d")
    game.act("attack Ac")
    assert game.legal() == ["defend", "counterattack"]
    # In Brutality the stance is declared already: one without a valid card gives way.
    game = Game("9c Ac 2h 3h 4h", "Qc 2d 3d 4d 5d")
    attack(game, "9c")
    game.act("pass")
    game.act("pit Ac")
    assert game.table.phase == Phase.MUST_PLAY
    assert game.legal() == ["pit Qc"], "the defender holds a club a Counterattack plays"
    game.act("pit Qc")
    assert game.fight.stance[1] == Stance.COUNTERATTACK and game.fight.defender == 1
    assert game.table.phase == Phase.RESULT
    game = Game("9c Ac 2h 3h 4h", "2d 3d 4d 5d 6h")
    game.act("attack 9c")
    game.act("decline")
    game.act("blank 6h")
    game.act("pass")
    game.act("pit Ac")
    assert game.table.phase == Phase.RESULT, "a Blank is in the Pit already"


def test_a_flush_spade_pair_counts_as_a_club_for_every_stance_decision() -> None:
    """Ruling (second audit): attacked with the ace of clubs, a seat whose only clubs and spades
    are two flush spades is offered Counterattack as well as Defend, and plays the pair."""
    game = Game("Ac 2h 3h 4h 5h", "7s 8s 2d 3d 4d")
    game.act("attack Ac")
    assert game.legal() == ["defend", "counterattack"]
    game.act("counterattack")
    assert game.table.phase == Phase.MUST_PLAY
    assert game.legal() == ["pair 7s8s"], "the pair is the valid card, no pass"
    game.act("pair 7s8s")
    assert game.table.phase == Phase.RESULT
    assert game.fight.stance[1] == Stance.COUNTERATTACK


def test_two_spades_that_are_not_a_flush_pair_only_defend_against_the_ace_of_clubs() -> None:
    """The control: the same hand but for a gap between the spades is no club."""
    game = Game("Ac 2h 3h 4h 5h", "7s 9s 2d 3d 4d")
    game.act("attack Ac")
    assert game.legal() == ["defend"]


def test_the_ace_of_spades_means_nobody_adds_anything() -> None:
    game = Game("9c 8c 7c 2h 3h", "As 2d 3d 4d 5d")
    attack(game, "9c")
    assert game.legal() == ["pass", "pit As", "ace low As"]
    game.act("pit As")
    assert game.table.phase == Phase.ACE_ANSWER and game.seat() == 0
    assert game.legal() == ["decline"], "offered even without the ace of clubs"
    game.act("decline")
    game.roll(2)
    resolved = game.resolved(game.state.apply_chance(5))
    assert list(resolved.bonus) == [0, 0] and resolved.winner == 0
    assert list(resolved.rolls) == [5, 2]


def test_the_ace_of_clubs_answers_the_ace_of_spades() -> None:
    game = Game("9c Ac 2h 3h 4h", "As 2d 3d 4d 5d")
    attack(game, "9c")
    game.act("pit As")
    assert game.legal() == ["decline", "pit Ac"]
    game.act("pit Ac")
    game.roll(6)
    resolved = game.resolved(game.state.apply_chance(1))
    assert list(resolved.bonus) == [5, 0], "the ace of spades has no effect"


def test_the_ace_of_spades_low_is_a_spade_of_rank_one() -> None:
    game = Game("9c 2h 3h 4h 5h", "As 2s 3s 4d 5d")
    attack(game, "9c")
    game.act("pit 2s")
    game.act("pass")
    assert "ace low As" in game.legal()
    game.act("ace low As")
    assert game.fight.plays[1][-1] == Play((c("As"),), 1, 1)
    assert combat_value(game.fight.plays[1]) == 2 + 1


def test_the_difference_is_capped_at_four() -> None:
    game = Game("9c 8c 7c 2h 3h", "2s 3d 4d 5d 6d")
    attack(game, "9c")
    game.acts("pass", "pit 8c", "pit 7c", "pass", "pass")  # Dirty Tricks: seat 1 passes
    game.act("pass")
    game.roll(6)
    resolved = game.resolved(game.state.apply_chance(2))
    assert list(resolved.combat_values) == [11, 0]
    assert list(resolved.bonus) == [4, 0], "11 - 0 counts as 4"
    assert not resolved.HasField("winner"), "2 + 4 against 6 is a draw"
    assert game.table.phase == Phase.DRAW_CHOICE


def test_an_unreplaced_blank_caps_the_difference_at_five() -> None:
    game = Game("Kc Qc Jc 2h 3h", "4h 5h 6h 7d 8d")
    game.act("attack Kc")
    game.act("decline")
    assert game.legal() == ["blank 7d", "blank 8d", "blank 4h", "blank 5h", "blank 6h"]
    game.act("blank 4h")
    assert game.fight.stance[1] == Stance.BLANK
    assert game.legal() == ["pass"], "a Blank has nothing to play in Brutality"
    game.acts("pass", "pit Qc", "pit Jc", "pass")
    assert game.table.phase == Phase.DIRTY_TRICKS
    assert "pit 7d" not in game.legal() and "pit Ad" not in game.legal()
    game.act("pass")
    game.act("pass")
    game.roll(6)
    resolved = game.resolved(game.state.apply_chance(2))
    assert list(resolved.combat_values) == [14, -1]
    assert list(resolved.bonus) == [5, 0] and resolved.winner == 0


def test_a_blank_replaced_by_a_drawn_card_is_discarded_and_the_cap_is_four() -> None:
    game = Game("Kc Qc Jc 2h 3h", "4h 5h 6h 7d 8d")
    game.act("attack Kc")
    game.act("decline")
    game.act("blank 4h")
    game.acts("pass", "pit Qc", "pit Jc", "pass")
    game.act("dirty draw 7d")
    game.chance("2c")
    assert game.legal() == ["keep drawn", "pit 2c"], "after Blank every card but aces is valid"
    events = game.act("pit 2c")
    assert c("4h") == game.table.discard[-1], "the Blank is discarded at once"
    assert any(e.public and "4h" in e.message.text for e in events), "and turned up"
    assert game.fight.plays[1] == [Play.single(c("2c"))]
    assert game.fight.blank_unsubstituted == [False, False]
    game.act("pass")  # seat 0
    game.act("dirty draw 8d")
    game.chance("9h")
    assert "pit 9h" in game.legal(), "not flush with the two, still valid after Blank"
    game.acts("pit 9h", "pass")
    game.roll(1)
    resolved = game.resolved(game.state.apply_chance(1))
    assert list(resolved.combat_values) == [14, 9 + 1]
    assert list(resolved.bonus) == [4, 0]


def test_the_ace_of_diamonds_discards_the_d3_lowest_and_nothing_left_counts_zero() -> None:
    game = Game("5c Ad 2h 3h 4h", "Ts 9s 2d 3d 4d")
    attack(game, "5c")
    game.acts("pit Ts", "pass", "pit 9s", "pass")
    assert game.table.phase == Phase.DIRTY_TRICKS and game.seat() == 1
    game.act("pass")
    game.act("pit Ad")
    assert game.table.phase == Phase.ACE_OF_DIAMONDS
    game.roll(6)
    assert game.fight.plays[1] == [], "a D3 of 3 takes both spades"
    assert game.table.discard[-2:] == cs("9s Ts"), "lowest first"
    game.act("pass")
    game.roll(1)
    resolved = game.resolved(game.state.apply_chance(1))
    assert list(resolved.combat_values) == [5, 0]
    assert list(resolved.bonus) == [4, 0], "still capped at four"


def test_the_ace_of_diamonds_discards_the_lowest_of_all_cards_in_the_pit() -> None:
    """Ruling: "it discards the D3 lowest of all cards the opponent has put into the Pit in this
    combat round, hearts from Reinforcements included; two flush spades played as one club
    count as two cards. A player left with no cards in the Pit has a Combat Value of zero and
    loses any Reinforcements bonus." """
    plays = [Play.single(c("9c")), Play.pair(c("7s")), Play.single(c("Tc"))]
    assert lowest_cards(plays, [], d3(1)) == cs("7s")
    assert lowest_cards(plays, cs("2h"), d3(4)) == cs("2h 7s")
    assert lowest_cards(plays, cs("Kh"), d3(6)) == cs("7s 8s 9c")
    assert [d3(face) for face in range(1, 7)] == [1, 1, 2, 2, 3, 3]
    # A heart of Reinforcements goes too, and with it the bonus.
    game = Game("9c Kh 2d 3d 4d", "9s Qh Ad 3h 4h")
    attack(game, "9c")
    game.acts("pit 9s", "pass", "pass")
    game.acts("pit Kh", "pit Qh", "pass", "pass")
    assert game.fight.reinforced == [True, False]
    game.act("pit Ad")
    game.roll(4)
    assert game.table.discard[-2:] == cs("9c Kh")
    assert game.fight.plays[0] == [] and game.fight.hearts[0] == []
    assert game.fight.reinforced == [False, False], "no cards left: no bonus"
    assert game.observe(1).combat.sides[0].combat_value == 0
    # One spade of a pair goes alone; the other stays as the club it stood for.
    game = Game("9c 8s 9s 2d 3d", "Ts 4h Ad 3h 5d")
    attack(game, "9c")
    game.acts("pit Ts", "pair 8s9s", "pass", "pass", "pass", "pass")
    assert game.table.phase == Phase.DIRTY_TRICKS
    game.act("pit Ad")
    game.roll(1)
    assert game.table.discard[-1] == c("8s")
    assert game.fight.plays[0] == [Play.single(c("9c")), Play((c("9s"),), 8, 8)]
    assert game.observe(1).combat.sides[0].combat_value == 9 + 1


def test_the_ace_of_diamonds_has_no_effect_against_the_ace_of_clubs() -> None:
    """The ace of clubs goes straight to the Result, so the ace of diamonds never meets it in
    play; the rule is kept all the same."""
    game = Game("9c Ac 2h 3h 4h", "Ts 8s Ad 3d 4d")
    attack(game, "9c", "counterattack")
    game.act("pass")
    game.act("pit Ac")
    assert game.table.phase == Phase.MUST_PLAY
    game.act("pit 8s")
    assert game.table.phase == Phase.RESULT
    table = Table()
    fight = table.combat = Combat(0)
    fight.ace_of_clubs = 0
    fight.plays[0] = [Play.single(c("9c"))]
    table.actor = 1
    ace_of_diamonds_rolled(table, 6)
    assert fight.plays[0] == [Play.single(c("9c"))]


def test_a_blank_seat_may_not_play_the_ace_of_diamonds_to_the_pit() -> None:
    game = Game("Kc 2h 3h 4h 5h", "Ad 5d 6h 7d 8d")
    game.act("attack Kc")
    game.act("decline")
    game.act("blank 6h")
    game.acts("pass", "pass")
    draws = ["dirty draw 5d", "dirty draw 7d", "dirty draw 8d", "dirty draw Ad"]
    assert game.legal() == ["pass", *draws]
