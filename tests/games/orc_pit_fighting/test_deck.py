"""Orc Pit Fighting against its rules (docs/games/orc-pit-fighting.md): the deck and its
reshuffles."""

from __future__ import annotations

import pytest
from arena_games.orc_pit_fighting.table import Phase

from tests.games.orc_pit_fighting.scenario import Game, attack, c, cs


def test_an_empty_deck_takes_the_discard_pile_at_the_moment_of_drawing() -> None:
    game = Game("5h 2h", "3h 4h")
    game.empty_deck()
    pile = sorted(game.table.discard)
    events = game.act("draw two 5h")
    assert game.table.deck == [] and game.table.phase == Phase.CANCEL
    events = game.act("decline")
    assert game.table.deck == pile and game.table.discard == []
    reshuffles = [e.message.step for e in events if "become the deck" in e.message.text]
    assert reshuffles == [len(game.state.history) - 1]
    assert game.state.chance_outcomes()[0][1] == pytest.approx(1 / len(pile))


def test_when_the_deck_runs_out_the_discard_pile_is_shuffled_into_a_new_deck_at_once() -> None:
    """Ruling: "When the deck runs out, the discard pile is shuffled into a new deck at once (a
    chance step right after the draw that emptied it), not at the next draw." Seed: "If the
    deck runs out the discard pile is shuffled and becomes the new deck"."""
    game = Game("9c Tc 2h 3h", "8s 5d 3d 4d")
    attack(game, "9c")
    game.acts("pit 8s", "pit Tc", "pass", "pass")
    game.empty_deck(keep="7s")
    pile = sorted(game.table.discard)
    game.act("dirty draw 5d")
    events = game.chance("7s")
    assert game.table.deck == pile and game.table.discard == [], "no draw is pending"
    reshuffles = [e.message.step for e in events if "become the deck" in e.message.text]
    assert reshuffles == [len(game.state.history) - 1]
    assert game.legal() == ["keep drawn", "pit 7s"]
    # With the discard pile empty too, the Out piles but their two topmost go at once.
    game = Game("5h 2h", "3h 4h")
    game.put(game.table.out[1], "5c 6c 7c 8c")
    game.empty_deck(keep="Kc Qc")
    game.table.flair[1] = list(game.table.discard)
    game.table.discard = []
    game.acts("draw two 5h", "decline")
    game.chance("Kc")
    game.chance("Qc")
    assert game.table.deck == cs("5c 6c") and game.table.phase == Phase.KEEP


def test_with_deck_and_discard_empty_the_out_piles_but_two_become_the_deck() -> None:
    game = Game("5h 2h", "3h 4h")
    game.put(game.table.out[0], "2c 3c 4c")
    game.put(game.table.out[1], "5c 6c 7c 8c")
    game.empty_deck()
    game.table.discard = []
    game.table.flair[1] = [x for x in range(52) if x not in game.table.all_cards()]
    game.acts("draw two 5h", "decline")
    assert game.table.deck == cs("2c 3c 5c 6c"), "the heart went to the Out pile first"
    assert game.table.out == [cs("4c 5h"), cs("7c 8c")]


def test_with_no_card_anywhere_a_draw_gives_nothing() -> None:
    game = Game("5h 2h", "3h 4h")
    game.empty_deck(keep="Kc")
    game.table.flair[1] = list(game.table.discard)
    game.table.discard = []
    game.acts("draw two 5h", "decline")
    game.chance("Kc")
    assert game.table.phase == Phase.TURN and c("Kc") in game.table.hands[0]
    assert game.table.two == [] and game.seat() == 1
