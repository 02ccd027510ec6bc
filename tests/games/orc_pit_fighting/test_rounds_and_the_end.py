"""Orc Pit Fighting against its rules (docs/games/orc-pit-fighting.md): rounds, the favorite, and
the end of the game."""

from __future__ import annotations

from arena_games.orc_pit_fighting.rules import DECISION_CAP, ROUND_TURN_CAP
from arena_games.orc_pit_fighting.table import Phase

from tests.games.orc_pit_fighting.scenario import GAME, Game, attack, cs, finish_quietly, of


def test_discarding_the_last_card_ends_the_round_and_the_next_is_dealt() -> None:
    game = Game("2h", "3h 4h")
    uses = ["flair", "draw two", "take their out", "take own out", "discard"]
    assert game.legal() == [f"{use} 2h" for use in uses]
    events = game.act("discard 2h")
    assert game.table.phase == Phase.DECK_DRAW, "not cancellable: the next round is dealt"
    assert any("round 1 ends" in e.message.text for e in events)
    assert game.table.round == 2 and game.table.discard[-3:] == cs("2h 3h 4h")
    assert game.table.hands == [[], []]


def test_holding_only_clubs_a_player_must_attack() -> None:
    game = Game("3c 9c", "2h 3h")
    assert game.legal() == ["attack 3c", "attack 9c"]
    game = Game("3c", "2h 3h")
    assert game.legal() == ["attack 3c"], "a single club may not be discarded"


def test_a_seat_without_cards_at_a_turn_ends_the_round() -> None:
    game = Game("2h", "3h 4h")
    game.act("flair 2h")
    events = game.act("decline")
    assert any("seat 0 has no cards left" in e.message.text for e in events)
    assert game.table.round == 2 and game.table.flair[0] == cs("2h")
    assert game.table.discard[-2:] == cs("3h 4h"), "the other seat discards its hand"


def test_running_out_of_cards_in_combat_ends_the_round() -> None:
    game = Game("9c 8c 2h", "2s")
    attack(game, "9c")
    game.act("pit 2s")
    resolved = game.resolved(finish_quietly(game, 1, 6))
    assert resolved.winner == 0
    assert game.table.round == 2, "the attacked seat has no cards left"


def test_the_round_turn_cap_ends_a_round_without_combat() -> None:
    game = Game("2h 3h", "4h 5h")
    game.table.round_turns = ROUND_TURN_CAP - 1
    game.acts("draw two 2h", "decline")
    game.chance("7d")
    game.chance("8d")
    game.act("keep 7d")
    assert game.table.phase == Phase.TURN and game.table.round_turns == ROUND_TURN_CAP
    game.acts("draw two 4h", "decline")
    game.chance("7s")
    events = game.chance("8s")
    events = game.act("keep 8s")
    assert any(f"{ROUND_TURN_CAP} non-combat turns" in e.message.text for e in events)
    assert game.table.round == 2


def test_the_least_wounded_then_the_highest_flair_is_the_favorite() -> None:
    game = Game("2h", "3h 4h")
    game.table.damage = [2, 1]
    game.act("discard 2h")
    assert game.table.favorite == 1 and game.table.deal_queue == [0, 1] * 5 + [1]
    game = Game("2h", "3h 4h")
    game.put(game.table.flair[0], "5h 6h")
    game.act("discard 2h")
    assert game.table.favorite == 0
    while game.table.phase == Phase.DECK_DRAW:
        game.chance(game.table.deck[0])
    assert [len(h) for h in game.table.hands] == [6, 5]
    assert game.table.phase == Phase.TURN and game.seat() == 0, "the favorite starts"


def test_first_round_favorite_has_the_longer_fangs_else_a_die() -> None:
    state = of(GAME.new_state())
    state.apply_chance(3)  # D3 = 2
    state.apply_chance(4)  # D3 = 2: no favorite
    assert state.table.fangs == [2, 2] and state.table.favorite is None
    while state.table.phase == Phase.DECK_DRAW:
        state.apply_chance(state.chance_outcomes()[0][0])
    assert [len(h) for h in state.table.hands] == [5, 5]
    assert state.table.phase == Phase.FIRST_ROLL
    state.apply_chance(4)
    assert state.to_move() == (1,)
    state = of(GAME.new_state())
    state.apply_chance(2)
    state.apply_chance(6)
    assert state.table.favorite == 1 and state.table.deal_queue.count(1) == 6


def test_five_damage_ends_the_game_at_once() -> None:
    game = Game("9c 8c Ah 3h", "2s 3d 4d 5d")
    game.table.damage = [0, 4]
    attack(game, "9c")
    finish_quietly(game, 1, 6)
    assert game.state.is_over() and game.table.damage == [0, 5]
    result = game.state.result()
    assert result.ranks == (0, 1) and result.scores == (1.0, 0.0)
    assert "seat 1 is knocked out" in result.reason
    assert game.state.to_move() == ()


def test_the_decision_cap_is_a_draw() -> None:
    game = Game("2h 3h", "4h 5h")
    game.table.decisions = DECISION_CAP - 1
    game.act("flair 2h")
    assert game.state.is_over()
    assert game.state.result().scores == (0.5, 0.5)
