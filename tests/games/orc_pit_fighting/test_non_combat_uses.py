"""Orc Pit Fighting against its rules (docs/games/orc-pit-fighting.md): the cards' non-combat uses
and the cancel."""

from __future__ import annotations

import pytest
from arena_games import cards
from arena_games.orc_pit_fighting.table import Phase

from tests.games.orc_pit_fighting.scenario import Game, c, cs


def test_a_spade_digs_one_of_the_top_five_of_the_discard_pile() -> None:
    game = Game("5s 2h", "3h 4h")
    game.put(game.table.discard, "2c 3c 4c 5c 6c 7c 8c")
    game.acts("dig 5s", "decline")
    assert game.table.phase == Phase.DIG
    assert [x for x, _ in game.state.chance_outcomes()] == cs("4c 5c 6c 7c 8c")
    events = game.chance("6c")
    assert game.table.discard == cs("2c 3c 4c 5c 7c 8c"), "the rest go back in their order"
    assert c("6c") in game.table.hands[0] and c("6c") in game.table.exposed[0]
    assert any(e.public and "6c" in e.message.text for e in events), "the pile is face up"
    assert game.table.out[0] == cs("5s")
    assert game.table.phase == Phase.TURN and game.seat() == 1


def test_a_spade_with_an_empty_discard_pile_draws_nothing() -> None:
    game = Game("5s 2h", "3h 4h")
    game.table.discard = []
    game.acts("dig 5s", "decline")
    assert game.table.hands[0] == cs("2h") and game.seat() == 1


@pytest.mark.parametrize("red", ["5h", "5d"])
def test_hearts_and_diamonds_draw_two_and_keep_one(red: str) -> None:
    game = Game(f"{red} 2h", "3h 4h")
    game.acts(f"draw two {red}", "decline")
    first = game.chance("Kc")
    game.chance("9s")
    assert all(e.public or e.audience == frozenset([0]) for e in first)
    assert game.table.phase == Phase.KEEP and game.legal() == ["keep Kc", "keep 9s"]
    assert [cards.label(cards.from_message(x)) for x in game.observe(0).drawn] == ["Kc", "9s"]
    assert not game.observe(1).drawn
    events = game.act("keep Kc")
    assert game.table.discard[-1] == c("9s") and c("Kc") in game.table.hands[0]
    assert c("Kc") not in game.table.exposed[0]
    assert not any(e.visible_to(1) and "Kc" in e.message.text for e in events)
    assert game.table.out[0] == cs(red)


def test_heart_to_own_out_takes_the_top_of_the_opponents_out_and_back() -> None:
    game = Game("5h 6h 2d", "3h 4h")
    game.put(game.table.out[1], "9c Ts")
    game.put(game.table.out[0], "Jc")
    game.acts("take their out 5h", "decline")
    assert c("Ts") in game.table.hands[0] and game.table.out == [cs("Jc 5h"), cs("9c")]
    game.acts("draw two 3h", "decline")
    game.chance("2c")
    game.chance("3c")
    game.act("keep 2c")
    game.acts("take own out 6h", "decline")
    assert c("5h") in game.table.hands[0], "to the opponent's Out pile, the top of one's own"
    assert game.table.out == [cs("Jc"), cs("9c 3h 6h")]


def test_the_ace_of_hearts_heals_one_point_and_never_below_zero() -> None:
    game = Game("Ah 2h", "3h 4h")
    assert "heal Ah" in game.legal()
    game.table.damage = [2, 0]
    game.acts("heal Ah", "decline")
    assert game.table.damage == [1, 0] and game.table.out[0] == cs("Ah")
    game = Game("Ah 2h", "3h 4h")
    game.acts("heal Ah", "decline")
    assert game.table.damage == [0, 0]


def test_a_heart_to_flair_and_a_heart_picture_allows_another_red_card() -> None:
    game = Game("Qh 2d 3c", "3h 4h")
    game.acts("flair Qh", "decline")
    assert game.table.flair[0] == cs("Qh")
    assert game.table.phase == Phase.EXTRA_RED and game.seat() == 0
    assert game.legal() == ["done", "draw two 2d"], "only red cards"
    game.act("draw two 2d")
    assert game.table.phase == Phase.CANCEL, "the extra card may be cancelled too"
    game.act("decline")
    game.chance("5c")
    game.chance("6c")
    game.act("keep 5c")
    assert game.table.phase == Phase.TURN and game.seat() == 1


def test_done_ends_the_extra_play_and_it_is_offered_without_red_cards() -> None:
    game = Game("Kh 3c", "3h 4h")
    game.acts("flair Kh", "decline")
    assert game.legal() == ["done"]
    game.act("done")
    assert game.seat() == 1


def test_a_cancelled_heart_picture_gives_no_extra_card() -> None:
    game = Game("Qh 2d 3c", "Js 4h")
    game.act("flair Qh")
    assert game.legal() == ["decline", "cancel Js"]
    game.act("cancel Js")
    assert game.table.discard[-1] == c("Qh") and game.table.flair[0] == []
    assert game.table.out[1] == cs("Js")
    assert game.table.phase == Phase.TURN and game.seat() == 0, "the same player again"


def test_an_attack_may_be_cancelled_and_the_cancel_is_always_offered() -> None:
    game = Game("9c 2h", "Ks 4h")
    turns = game.table.round_turns
    game.act("attack 9c")
    assert game.table.phase == Phase.CANCEL and game.legal() == ["decline", "cancel Ks"]
    game.act("cancel Ks")
    assert game.table.combat is None and game.table.discard[-1] == c("9c")
    assert game.seat() == 0 and game.table.round_turns == turns + 1
    game = Game("9c 2h", "3s 4h")
    game.act("attack 9c")
    assert game.legal() == ["decline"], "offered even without a spade picture"


def test_the_diamond_picture_swaps_a_face_down_card_for_a_random_one() -> None:
    game = Game("Qd 3c 5h", "7s 8s")
    game.acts("swap Qd", "decline")
    assert game.table.phase == Phase.PUT_DOWN and game.legal() == ["put down 5h"], "no clubs"
    events = game.act("put down 5h")
    assert all(e.public or e.audience == frozenset([0]) for e in events)
    assert not any(e.visible_to(1) and "5h" in e.message.text for e in events)
    assert game.table.phase == Phase.SWAP_DRAW
    assert [x for x, _ in game.state.chance_outcomes()] == cs("7s 8s")
    game.chance("8s")
    assert game.table.hands == [cs("3c 8s"), cs("5h 7s")]
    assert game.table.exposed == [{c("8s")}, {c("5h")}], "both seats know both cards"
    assert game.table.out[0] == cs("Qd")


def test_a_swap_with_only_clubs_left_does_nothing() -> None:
    game = Game("Qd 3c", "7s 8s")
    game.acts("swap Qd", "decline")
    assert game.table.phase == Phase.TURN and game.seat() == 1
    assert game.table.hands == [cs("3c"), cs("7s 8s")]
