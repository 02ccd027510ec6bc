"""The Capture the Commander engine against its rules (docs/games/capture-the-commander.md).

Random playouts with the generic invariants for 2, 3 and 4 seats and every option, card
conservation after every step, determinism, the information test, hidden information (no seat
ever gets a card that was not revealed to everyone), scripted scenarios for every rule the seed
names and every ruling, and a golden seeded playthrough.

The golden file tests/games/golden/capture-the-commander.txt is regenerated (after a deliberate
rules change, never to make a failure go away) with:

    ARENA_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/games/test_capture_the_commander.py \
        -k golden
"""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from arena_games import cards, get_game
from arena_games.base import CHANCE, Event, GameState, IllegalActionError, OptionsError
from arena_games.capture_the_commander import (
    ADJACENT,
    CAPTURE_THE_COMMANDER,
    COMMANDER,
    COVERS,
    DEAL_LIMIT,
    DECISION_CAP,
    EMPTY,
    CaptureTheCommanderState,
    attack_action,
    beats,
    commander_distance,
    cover_state,
    decode,
    flip_action,
    fully_uncovered,
    gift_action,
    targetable,
)
from arena_games.capture_the_commander.formation import (
    COVERED,
    FULLY_UNCOVERED,
    PARTIALLY_UNCOVERED,
    new_formation,
)
from arena_games.capture_the_commander.state import DEALING, TURN, WAR
from google.protobuf.message import Message

from tests.games.invariants import (
    check_determinism,
    check_history_round_trip,
    check_information,
    check_step,
    game_rngs,
    play_one,
    random_playouts,
)

GAME = CAPTURE_THE_COMMANDER
GOLDEN = Path(__file__).parent / "golden" / "capture-the-commander.txt"
GOLDEN_SEED = 20240612
ALL_CARDS = list(range(52))

AnyState = GameState[Any]

CONFIGS: list[tuple[int, dict[str, object]]] = [
    (2, {}),
    (3, {}),
    (4, {}),
    (2, {"twos_beat_aces": True}),
    (3, {"one_suit_each": True}),
    (4, {"one_suit_each": True, "twos_beat_aces": True}),
    (2, {"target_score": 15}),
    (3, {"target_score": 12}),
    (4, {"teams": True}),
    (4, {"teams": True, "target_score": 40, "one_suit_each": True}),
]


def of(state: AnyState) -> CaptureTheCommanderState:
    assert isinstance(state, CaptureTheCommanderState)
    return state


def full() -> list[int]:
    """A formation with every slot filled (the card values do not matter for the geometry)."""
    return [EMPTY, *range(1, 14)]


def without(*slots: int) -> list[int]:
    formation = full()
    for slot in slots:
        formation[slot] = EMPTY
    return formation


# -- scripted deals ---------------------------------------------------------------------------
def deal(
    num_seats: int = 2, layout: dict[tuple[int, int], str] | None = None, **options: object
) -> CaptureTheCommanderState:
    """A new game dealt so that (seat, slot) gets the named card; every other slot gets the
    lowest card left that the layout does not name."""
    state = of(GAME.new_state(options, num_seats))
    deal_layout(state, layout or {})
    return state


def deal_layout(state: CaptureTheCommanderState, layout: dict[tuple[int, int], str]) -> None:
    wanted = {where: cards.parse(text) for where, text in layout.items()}
    reserved = set(wanted.values())
    assert len(reserved) == len(wanted), "a card named twice"
    while state.is_chance():
        where = state.receiver()
        outcomes = [c for c, _ in state.chance_outcomes()]
        card = wanted.get(where, next((c for c in outcomes if c not in reserved), -1))
        state.apply_chance(card)


def attack(
    state: CaptureTheCommanderState, seat: int, slot: int, defender: int, target: int
) -> list[Event]:
    return state.apply(seat, attack_action(slot, defender, target))


def card_at(state: CaptureTheCommanderState, seat: int, slot: int) -> str:
    card = state.formations[seat][slot]
    return ".." if card == EMPTY else cards.label(card)


def next_on_path(formation: list[int]) -> int:
    """A targetable slot on a shortest path to the commander: the commander itself if it is
    exposed."""
    exposed = targetable(formation)
    if COMMANDER in exposed:
        return COMMANDER

    def after(slot: int) -> int:
        trial = list(formation)
        trial[slot] = EMPTY
        return commander_distance(trial)

    return min(exposed, key=after)


def march(
    state: CaptureTheCommanderState, weapons: dict[int, int], victim: int, *, until_out: bool
) -> None:
    """Seats in `weapons` attack the victim along its shortest path with the card in their
    weapon slot; every other seat attacks seat 0's weapon with its first fully uncovered card.
    Stops when the victim is out (until_out) or the deal ends."""
    deal_number = state.deal
    while state.deal == deal_number and not state.is_over() and state.in_game[victim]:
        seat = state.current
        if seat in weapons:
            attack(state, seat, weapons[seat], victim, next_on_path(state.formations[victim]))
        else:
            attack(state, seat, fully_uncovered(state.formations[seat])[0], 0, weapons[0])
        assert state.phase != WAR, "a march should see no war"
        if not until_out:
            return


ACES_FOR_SEAT_0 = {(0, 1): "Ac", (0, 2): "Ad", (0, 3): "Ah", (0, 4): "As"}


# -- the formation ----------------------------------------------------------------------------
def test_cover_sets_and_adjacency_are_as_ruled() -> None:
    assert COVERS == {
        1: (),
        2: (),
        3: (),
        4: (),
        5: (1, 2),
        6: (2, 3),
        7: (3, 4),
        8: (5,),
        9: (6,),
        10: (7,),
        11: (8, 9),
        12: (9, 10),
        13: (11, 12),
    }
    pairs = {frozenset(p) for p in [(1, 2), (2, 3), (3, 4), (5, 6), (6, 7), (8, 9), (9, 10)]}
    pairs |= {frozenset((11, 12))}
    pairs |= {frozenset((c, s)) for s, cover in COVERS.items() for c in cover}
    for slot in range(1, 14):
        expected = sorted(other for p in pairs if slot in p for other in p if other != slot)
        assert list(ADJACENT[slot]) == expected
    assert ADJACENT[1] == (2, 5)
    assert ADJACENT[9] == (6, 8, 10, 11, 12)
    assert ADJACENT[13] == (11, 12)


def test_at_the_start_only_slots_1_to_4_are_uncovered() -> None:
    assert fully_uncovered(full()) == [1, 2, 3, 4]
    assert targetable(full()) == [1, 2, 3, 4]
    assert [cover_state(full(), s) for s in (5, 9, 13)] == [COVERED] * 3


def test_the_uncovering_example_with_cards_3_and_6_removed() -> None:
    """The seed's diagram: with 3 and 6 removed, 1, 2, 4 and 9 are fully uncovered and 7 is
    partially uncovered."""
    formation = without(3, 6)
    assert fully_uncovered(formation) == [1, 2, 4, 9]
    partial = [s for s in range(1, 14) if formation[s] != EMPTY]
    partial = [s for s in partial if cover_state(formation, s) == PARTIALLY_UNCOVERED]
    assert partial == [7]
    assert targetable(formation) == [1, 2, 4, 7, 9]


def test_cards_8_9_10_can_only_be_fully_uncovered() -> None:
    for slot, cover in ((8, 5), (9, 6), (10, 7)):
        assert cover_state(full(), slot) == COVERED
        assert cover_state(without(cover), slot) == FULLY_UNCOVERED


def test_the_eight_shortest_paths_to_the_commander() -> None:
    """Removing one targetable card at a time, the commander becomes open to attack after
    four removals at the least, along exactly the seed's eight paths."""
    found: list[tuple[int, ...]] = []

    def search(formation: list[int], path: tuple[int, ...]) -> None:
        if COMMANDER in targetable(formation):
            found.append(path)
            return
        if len(path) == 4:
            return
        for slot in targetable(formation):
            trial = list(formation)
            trial[slot] = EMPTY
            search(trial, (*path, slot))

    search(full(), ())
    assert min(len(p) for p in found) == 4
    assert sorted(found) == [
        (1, 5, 8, 11),
        (2, 5, 8, 11),
        (2, 6, 9, 11),
        (2, 6, 9, 12),
        (3, 6, 9, 11),
        (3, 6, 9, 12),
        (3, 7, 10, 12),
        (4, 7, 10, 12),
    ]
    assert commander_distance(full()) == 5
    assert commander_distance(without(2, 6, 9, 12)) == 1


# -- the deal ---------------------------------------------------------------------------------
@pytest.mark.parametrize("num_seats", [2, 3, 4])
def test_the_deal_fills_13_slots_each_and_leaves_the_rest_unused(num_seats: int) -> None:
    state = deal(num_seats)
    assert state.phase == TURN and state.to_move() == (0,)
    for seat in range(num_seats):
        assert all(state.formations[seat][s] != EMPTY for s in range(1, 14))
    assert len(state.deck) == 52 - 13 * num_seats
    assert sorted(state.all_cards()) == ALL_CARDS
    legal = state.legal_actions(0)
    assert len(legal) == 4 * 4 * (num_seats - 1)
    assert state.action_label(legal[0]) == "attack 1 s1.1"


def test_deal_events_go_to_the_referee_only() -> None:
    state = of(GAME.new_state({}, 3))
    rng = random.Random(3)
    while state.is_chance():
        outcomes = state.chance_outcomes()
        events = state.apply_chance(outcomes[rng.randrange(len(outcomes))][0])
        dealt = [e for e in events if e.message.capture_the_commander.HasField("card_dealt")]
        assert len(dealt) == 1 and dealt[0].audience == frozenset()
        assert not any(dealt[0].visible_to(s) for s in (0, 1, 2, None))
        assert all(e.public for e in events if e is not dealt[0])
        assert all(card_messages(e.message) == [] for e in events if e.public)


def test_one_suit_each_gives_seat_i_the_whole_of_suit_i() -> None:
    state = deal(3, one_suit_each=True)
    for seat in range(3):
        formation = state.formations[seat][1:]
        assert sorted(formation) == [cards.make(r, seat) for r in range(2, 15)]
    assert state.deck == [cards.make(r, 3) for r in range(2, 15)]


# -- battles ----------------------------------------------------------------------------------
def test_the_battle_example_attacker_wins() -> None:
    """A's 1 beats B's 2: B's 2 is removed, B's 5 and 6 become partially uncovered: open to
    A's attacks, not yet usable by B. A's winning card goes face down again, known to all."""
    state = deal(layout={(0, 1): "Kc", (1, 2): "5d"})
    events = attack(state, 0, 1, 1, 2)
    texts = [e.message.text for e in events]
    assert "seat 0 slot 1 is Kc" in texts and "seat 1 slot 2 is 5d" in texts
    assert all(e.public for e in events)
    assert state.formations[1][2] == EMPTY
    assert state.removed[1] == [cards.parse("5d")]
    assert state.known[0][1] and card_at(state, 0, 1) == "Kc"
    assert state.to_move() == (1,)
    assert fully_uncovered(state.formations[1]) == [1, 3, 4]
    assert targetable(state.formations[1]) == [1, 3, 4, 5, 6]
    slot = state.observation(1).capture_the_commander.formations[0].slots[0]
    assert cards.from_message(slot.card) == cards.parse("Kc")


def test_the_battle_example_attacker_loses() -> None:
    """If A's 1 loses, it is removed and A's 5 is partially uncovered; B's card goes face down
    again, known."""
    state = deal(layout={(0, 1): "5c", (1, 2): "Kd"})
    attack(state, 0, 1, 1, 2)
    assert state.formations[0][1] == EMPTY and state.removed[0] == [cards.parse("5c")]
    assert state.known[1][2]
    assert targetable(state.formations[0]) == [2, 3, 4, 5]
    legal = state.legal_actions(1)
    assert attack_action(2, 0, 5) in legal
    assert all(decode(a).target != 6 for a in legal)


def test_attacks_use_own_fully_uncovered_and_hit_fully_or_partially_uncovered() -> None:
    state = deal(layout={(0, 1): "Kc", (1, 2): "5d", (1, 1): "2d", (0, 2): "Ks"})
    attack(state, 0, 1, 1, 2)
    attack(state, 1, 1, 0, 2)  # B's 2 loses to Ks: B's 5 is now fully uncovered
    legal = state.legal_actions(0)
    targets = sorted({decode(a).target for a in legal})
    assert targets == sorted(targetable(state.formations[1])) == [3, 4, 5, 6]
    own = sorted({decode(a).slot for a in legal})
    assert own == [1, 2, 3, 4]
    with pytest.raises(IllegalActionError):
        state.apply(0, attack_action(5, 1, 3))
    with pytest.raises(IllegalActionError):
        state.apply(0, attack_action(1, 1, 8))
    assert 5 in fully_uncovered(state.formations[1])


def test_twos_beat_aces_only_with_the_option() -> None:
    two, ace, three = cards.parse("2c"), cards.parse("Ad"), cards.parse("3h")
    assert beats(two, ace, False) == -1 and beats(two, ace, True) == 1
    assert beats(ace, two, True) == -1
    assert beats(two, three, True) == -1 and beats(ace, three, True) == 1
    assert beats(ace, cards.parse("Ac"), True) == 0
    for twos in (False, True):
        state = deal(layout={(0, 1): "2c", (1, 1): "Ad"}, twos_beat_aces=twos)
        attack(state, 0, 1, 1, 1)
        loser = 1 if twos else 0
        assert state.formations[loser][1] == EMPTY
        assert state.formations[1 - loser][1] != EMPTY


# -- wars -------------------------------------------------------------------------------------
def test_a_war_is_a_simultaneous_choice_revealed_when_both_have_answered() -> None:
    state = deal(layout={(0, 1): "9c", (0, 2): "Kc", (1, 1): "9d", (1, 2): "2d"})
    events = attack(state, 0, 1, 1, 1)
    assert state.phase == WAR and state.to_move() == (0, 1)
    assert "a tie: war (seat 0, seat 1 can flip)" in [e.message.text for e in events]
    assert state.legal_actions(0) == [flip_action(2), flip_action(5)]
    assert state.legal_actions(1) == [flip_action(2), flip_action(5)]
    public_before = state.observation(None)
    seen_by_1 = state.observation(1)
    events = state.apply(0, flip_action(2))
    assert state.to_move() == (1,)
    private = [e for e in events if not e.public]
    assert len(private) == 1 and private[0].audience == frozenset([0])
    assert private[0].message.capture_the_commander.war_choice_made.slot == 2
    public = [e for e in events if e.public]
    assert len(public) == 1
    assert not public[0].message.capture_the_commander.war_choice_made.HasField("slot")
    assert all(card_messages(e.message) == [] for e in events)
    assert state.observation(0).capture_the_commander.own_war_choice == 2
    assert not state.observation(1).capture_the_commander.HasField("own_war_choice")
    # Nothing seat 1 or a spectator sees changed but who is still waiting.
    after = state.observation(1).capture_the_commander
    assert list(after.battle.waiting) == [1] and after.decisions == 2
    after.battle.waiting[:] = [0, 1]
    after.decisions = 1
    assert after == seen_by_1.capture_the_commander
    assert list(state.observation(None).capture_the_commander.battle.waiting) == [1]
    assert public_before.capture_the_commander.battle.wars == 1
    events = state.apply(1, flip_action(2))
    texts = [e.message.text for e in events]
    assert "seat 0 slot 2 is Kc" in texts and "seat 1 slot 2 is 2d" in texts
    # Seat 1 lost the war: every card it flipped in the battle goes.
    assert state.formations[1][1] == state.formations[1][2] == EMPTY
    assert state.removed[1] == [cards.parse("9d"), cards.parse("2d")]
    assert state.known[0][1] and state.known[0][2]
    assert state.phase == TURN and state.to_move() == (1,)


def test_a_war_goes_on_while_tied_and_flips_touch_any_card_flipped_so_far() -> None:
    layout = {(0, 1): "9c", (0, 2): "Kc", (0, 5): "4c", (1, 1): "9d", (1, 2): "Kd", (1, 5): "Qh"}
    state = deal(layout=layout)
    attack(state, 0, 1, 1, 1)
    state.apply(0, flip_action(2))
    state.apply(1, flip_action(2))
    assert state.phase == WAR and state.to_move() == (0, 1)
    assert state.battle is not None and state.battle.wars == 2
    # Adjacent to slot 1 or slot 2, not yet flipped.
    assert state.legal_actions(0) == [flip_action(s) for s in (3, 5, 6)]
    state.apply(1, flip_action(5))
    state.apply(0, flip_action(5))
    assert state.removed[0] == [cards.parse(c) for c in ("9c", "Kc", "4c")]
    assert [state.formations[1][s] != EMPTY for s in (1, 2, 5)] == [True] * 3


def _opening(state: CaptureTheCommanderState, seat_1_hits_slot_5: bool) -> None:
    """Seat 1 loses slots 2 and 5 and seat 0 loses slot 2 (and slot 5 if asked)."""
    attack(state, 0, 3, 1, 2)  # Ac beats 3c
    attack(state, 1, 4, 0, 2)  # 5h beats 2c
    attack(state, 0, 3, 1, 5)  # Ac beats 4c
    if seat_1_hits_slot_5:
        attack(state, 1, 4, 0, 5)  # 5h beats 2d
    else:
        attack(state, 1, 4, 0, 4)  # 5h loses to Kc


OPENING = {
    (0, 1): "9c",
    (0, 2): "2c",
    (0, 3): "Ac",
    (0, 4): "Kc",
    (0, 5): "2d",
    (1, 1): "9d",
    (1, 2): "3c",
    (1, 4): "5h",
    (1, 5): "4c",
}


def test_a_war_ends_when_one_side_cannot_flip() -> None:
    """Seat 1's 9 has nothing left beside it; seat 0 still has its 5. Seat 0 alone flips, has
    more cards in the battle, and wins, though it flips a 2."""
    state = deal(layout=OPENING)
    _opening(state, seat_1_hits_slot_5=False)
    events = attack(state, 0, 1, 1, 1)
    assert "a tie: war (seat 0 can flip)" in [e.message.text for e in events]
    assert state.to_move() == (0,)
    assert state.legal_actions(0) == [flip_action(5)]
    assert state.legal_actions(1) == []
    state.apply(0, flip_action(5))
    assert state.formations[1][1] == EMPTY
    assert state.formations[0][5] == cards.parse("2d") and state.known[0][5]
    assert state.to_move() == (1,)


def test_a_war_neither_side_can_go_on_with_is_a_draw_that_ends_the_game() -> None:
    state = deal(layout=OPENING)
    _opening(state, seat_1_hits_slot_5=True)
    events = attack(state, 0, 1, 1, 1)
    assert state.is_over()
    assert any(e.message.capture_the_commander.HasField("war_drawn") for e in events)
    result = state.result()
    assert result.ranks == (0, 0) and result.scores == (0.5, 0.5)
    assert "neither side could go on" in result.reason
    assert sorted(state.all_cards()) == ALL_CARDS


def test_a_drawn_war_in_a_scoring_match_ends_that_deal_with_no_points() -> None:
    """RULINGS: "A drawn war in a scoring match ends that deal with no points; the next deal
    starts." (This engine already did so before rules version 2.)"""
    state = deal(layout=OPENING, target_score=10)
    _opening(state, seat_1_hits_slot_5=True)
    events = attack(state, 0, 1, 1, 1)
    assert not state.is_over()
    ended = [e for e in events if e.message.capture_the_commander.HasField("deal_ended")]
    message = ended[0].message.capture_the_commander.deal_ended
    assert list(message.winners) == [] and list(message.scores) == [0, 0]
    assert state.phase == DEALING and state.deal == 2 and state.first_seat == 1
    assert state.scores == [0, 0]
    deal_layout(state, {})
    assert state.to_move() == (1,)


# -- commanders -------------------------------------------------------------------------------
def test_elimination_in_a_three_player_game() -> None:
    state = deal(3, ACES_FOR_SEAT_0)
    march(state, {0: 1}, victim=1, until_out=True)
    assert not state.in_game[1] and state.out_order == [1]
    assert state.cards_in_play(1) == 0
    assert len(state.unseen_out[1]) > 0, "his never-revealed cards leave play unseen"
    formation = state.observation(2).capture_the_commander.formations[1]
    assert not formation.in_game and formation.left_unseen == len(state.unseen_out[1])
    assert sorted(state.all_cards()) == ALL_CARDS
    # The turn goes on to seat 2, skipping seat 1, and nobody may attack seat 1 any more.
    assert state.to_move() == (2,) and not state.is_over()
    assert {decode(a).defender for a in state.legal_actions(2)} == {0}
    attack(state, 2, fully_uncovered(state.formations[2])[0], 0, 1)
    assert state.to_move() == (0,)
    assert {decode(a).defender for a in state.legal_actions(0)} == {2}
    march(state, {0: 1}, victim=2, until_out=True)
    result = state.result()
    assert result.ranks == (0, 2, 1), "the last in wins; the first out is last"
    assert result.scores == (1.0, 0.0, 0.0)


def test_a_commander_flipped_in_a_lost_war_falls() -> None:
    layout = {(0, 1): "Ac", (0, 2): "Ad", (0, 3): "Ah", (1, 12): "As", (1, 13): "Kd"}
    state = deal(layout=layout)
    for target in (4, 7, 10):
        attack(state, 0, 1, 1, target)
        attack(state, 1, fully_uncovered(state.formations[1])[0], 0, 1)
    attack(state, 0, 1, 1, 12)
    assert state.phase == WAR
    assert flip_action(COMMANDER) in state.legal_actions(1)
    state.apply(0, flip_action(2))
    state.apply(1, flip_action(COMMANDER))
    assert state.is_over() and state.result().ranks == (0, 1)
    assert "seat 1's commander falls to seat 0" in state.result().reason


def test_scoring_gives_the_capturer_a_point_per_card_the_captured_still_had() -> None:
    for target, over in ((4, True), (5, False)):
        state = deal(layout=ACES_FOR_SEAT_0, target_score=target)
        march(state, {0: 1}, victim=1, until_out=True)
        assert state.scores == [4, 0]
        assert state.is_over() == over
        if over:
            assert state.result().ranks == (0, 1) and state.result().scores == (4.0, 0.0)
        else:
            assert state.phase == DEALING and state.deal == 2 and state.first_seat == 1
            assert state.in_game == [True, True] and sorted(state.all_cards()) == ALL_CARDS


def test_capture_events_carry_the_points() -> None:
    state = deal(layout=ACES_FOR_SEAT_0, target_score=25)
    captured: list[Event] = []
    while not captured:
        seat = state.current
        if seat == 0:
            events = attack(state, 0, 1, 1, next_on_path(state.formations[1]))
        else:
            events = attack(state, 1, fully_uncovered(state.formations[1])[0], 0, 1)
        captured = [
            e for e in events if e.message.capture_the_commander.HasField("commander_captured")
        ]
    message = captured[0].message.capture_the_commander.commander_captured
    assert (message.seat, message.by, message.points) == (1, 0, 4)
    ended = [e for e in events if e.message.capture_the_commander.HasField("deal_ended")]
    assert list(ended[0].message.capture_the_commander.deal_ended.winners) == [0]
    assert list(ended[0].message.capture_the_commander.deal_ended.scores) == [4, 0]


def test_the_match_ends_the_moment_a_player_reaches_the_target_even_mid_deal() -> None:
    """RULINGS: "the match ends the moment a player (a team, with teams) reaches the target,
    even in the middle of a deal, and that player (team) wins. No later capture can overtake
    it." Seat 0 captures seat 1 of three with seat 2 still in: the match ends there."""
    state = deal(3, ACES_FOR_SEAT_0, target_score=4)
    march(state, {0: 1}, victim=1, until_out=True)
    assert state.in_game == [True, False, True] and state.scores[0] >= 4
    assert state.is_over(), "seat 2 still in must not get a capture to overtake seat 0"
    result = state.result()
    assert result.ranks == (0, 1, 1)
    assert result.reason == "seat 1's commander falls to seat 0; target 4 reached"
    assert sorted(state.all_cards()) == ALL_CARDS


def test_a_team_reaching_the_target_mid_deal_wins_at_once() -> None:
    """RULINGS: the match ends the moment "a team, with teams" reaches the target: the 3 points
    of one capture reach a target of 3 while seat 3 is still in."""
    state = deal(4, TEAM_LAYOUT, teams=True, target_score=3)
    events: list[Event] = []
    while state.in_game[1]:
        seat = state.current
        if seat in (0, 2):
            events = attack(state, seat, 1, 1, next_on_path(state.formations[1]))
        else:
            events = attack(state, seat, fully_uncovered(state.formations[seat])[0], 0, 1)
    assert state.in_game[3] and state.scores == [3, 0, 3, 0]
    assert state.is_over() and state.result().ranks == (0, 2, 0, 2)
    ended = [e for e in events if e.message.capture_the_commander.HasField("deal_ended")]
    assert list(ended[0].message.capture_the_commander.deal_ended.winners) == [0, 2]


# -- teams ------------------------------------------------------------------------------------
TEAM_LAYOUT = {**ACES_FOR_SEAT_0, (2, 1): "Kc", (2, 2): "Kd", (2, 3): "Kh", (2, 4): "Ks"}


def test_teams_need_four_seats() -> None:
    for seats in (2, 3):
        with pytest.raises(OptionsError):
            GAME.new_state({"teams": True}, seats)
    with pytest.raises(OptionsError):
        GAME.new_state({"target_score": 0}, 2)
    with pytest.raises(OptionsError):
        GAME.new_state({"no_such_option": True}, 2)


def test_teams_attack_only_the_other_team_and_may_give_instead() -> None:
    layout = {(0, 1): "Kc", (1, 2): "5d", (1, 1): "Qc", (2, 1): "2h", (2, 2): "Qd", (3, 1): "4s"}
    state = deal(4, layout, teams=True)
    assert {decode(a).defender for a in state.legal_actions(0)} == {1, 3}
    assert all(decode(a).kind == "attack" for a in state.legal_actions(0)), "no hole to fill"
    attack(state, 0, 1, 1, 2)
    attack(state, 1, 1, 2, 1)  # Qc beats 2h: seat 2 has a hole in slot 1
    attack(state, 2, 2, 3, 1)  # Qd beats 4s: seat 3 has a hole in slot 1
    legal = state.legal_actions(3)
    gifts = [a for a in legal if decode(a).kind == "gift"]
    # Seat 3 may give any never-revealed card but its commander, into seat 1's empty slot 2.
    assert gifts == [gift_action(s, 2) for s in range(2, 13)]
    assert state.action_label(gift_action(12, 2)) == "give 12 to 2"
    card = state.formations[3][12]
    events = state.apply(3, gift_action(12, 2))
    assert events[0].public and card_messages(events[0].message) == []
    assert state.formations[3][12] == EMPTY and state.formations[1][2] == card
    assert not state.known[1][2]
    assert targetable(state.formations[1]) == [1, 2, 3, 4], "the hole is plugged"
    assert COMMANDER in targetable(state.formations[3])
    assert state.to_move() == (0,)
    legal = state.legal_actions(0)
    gifts = [a for a in legal if decode(a).kind == "gift"]
    # Seat 0's slot 1 was revealed in its attack: it may not be given.
    assert gifts == [gift_action(s, 1) for s in range(2, 13)]
    assert {decode(a).defender for a in legal if decode(a).kind == "attack"} == {1, 3}


def test_a_team_wins_when_both_opponents_are_out_and_scores_3_per_capture_and_its_cards() -> None:
    for target, over in ((32, True), (33, False)):
        state = deal(4, TEAM_LAYOUT, teams=True, target_score=target)
        march(state, {0: 1, 2: 1}, victim=1, until_out=True)
        assert state.scores == [3, 0, 3, 0] and not state.is_over()
        assert state.phase == TURN
        assert state.gifts(3) == [], "no gift to an ally who is out"
        march(state, {0: 1, 2: 1}, victim=3, until_out=True)
        # 3 + 3 for the captures, 13 + 13 for the cards seat 0 and seat 2 still have.
        assert state.scores == [32, 0, 32, 0]
        assert state.is_over() == over
        if over:
            assert state.result().ranks == (0, 2, 0, 2)
        else:
            assert state.deal == 2 and state.phase == DEALING


def test_a_team_game_without_scoring_ranks_the_team_together() -> None:
    state = deal(4, TEAM_LAYOUT, teams=True)
    march(state, {0: 1, 2: 1}, victim=3, until_out=True)
    assert state.out_order == [3] and not state.is_over()
    march(state, {0: 1, 2: 1}, victim=1, until_out=True)
    result = state.result()
    assert result.ranks == (0, 2, 0, 2) and result.scores == (1.0, 0.0, 1.0, 0.0)


def give_until_the_deal_ends(state: CaptureTheCommanderState, seed: int) -> None:
    """Deal at random, then every seat gives whenever it can (attacking at random otherwise)
    until this deal ends: gifts can go on for ever."""
    deal_number = state.deal
    chance_rng, policy_rng = game_rngs(4, seed)
    while state.deal == deal_number and not state.is_over():
        if state.is_chance():
            outcomes = state.chance_outcomes()
            state.apply_chance(outcomes[int(chance_rng.random() * len(outcomes))][0])
            continue
        seat = state.to_move()[0]
        legal = state.legal_actions(seat)
        gifts = [a for a in legal if decode(a).kind == "gift"]
        state.apply(seat, gifts[0] if gifts else legal[int(policy_rng.random() * len(legal))])


def test_the_decision_cap_ends_an_endless_exchange_of_gifts_as_a_draw() -> None:
    state = of(GAME.new_state({"teams": True}, 4))
    give_until_the_deal_ends(state, 0)
    assert state.decisions == DECISION_CAP
    result = state.result()
    assert result.reason == f"decision cap of {DECISION_CAP} reached"
    assert result.ranks == (0, 0, 0, 0) and result.scores == (0.5,) * 4


def test_the_decision_guard_counts_decisions_within_one_deal() -> None:
    """RULINGS: "The 1000-decision guard counts decisions within one deal." In a scoring match
    the cap ends that deal only, with no points (as a drawn war does), and the count starts
    again: two deals of endless gifts take 2000 decisions, and the match goes on."""
    state = of(GAME.new_state({"teams": True, "target_score": 99}, 4))
    for deal_number in (1, 2):
        give_until_the_deal_ends(state, deal_number)
        assert not state.is_over(), "the cap ends the deal, not the match"
        assert state.deal == deal_number + 1 and state.phase == DEALING
        assert state.decisions == 0 and state.scores == [0, 0, 0, 0]
    assert sum(1 for step in state.history if step.seat != CHANCE) == 2 * DECISION_CAP


def test_a_scoring_match_also_ends_after_100_deals_ranked_by_score() -> None:
    """RULINGS: "a scoring match also ends after 100 deals, ranked by score." Seat 0 holds the
    four aces in every deal and takes seat 1's commander; 100 deals score far below the
    target."""
    state = deal(layout=ACES_FOR_SEAT_0, target_score=10_000)
    while not state.is_over():
        if state.is_chance():
            deal_layout(state, ACES_FOR_SEAT_0)
        march(state, {0: 1}, victim=1, until_out=True)
    assert state.deal == DEAL_LIMIT == 100
    assert 0 < state.scores[0] < 10_000 and state.scores[1] == 0
    result = state.result()
    assert result.ranks == (0, 1) and result.scores == (float(state.scores[0]), 0.0)
    assert result.reason == "seat 1's commander falls to seat 0; 100 deals played"


# -- actions ----------------------------------------------------------------------------------
def test_action_ids_labels_and_typed_forms() -> None:
    ids = [attack_action(s, d, t) for s in range(1, 14) for d in range(4) for t in range(1, 14)]
    ids += [gift_action(s, h) for s in range(1, 14) for h in range(1, 14)]
    ids += [flip_action(s) for s in range(1, 14)]
    assert ids == list(range(len(ids)))
    state = deal()
    labels = [state.action_label(a) for a in ids]
    assert len(set(labels)) == len(labels)
    assert state.action_label(attack_action(1, 1, 2)) == "attack 1 s1.2"
    assert state.action_label(flip_action(6)) == "flip 6"
    message = state.action_message(attack_action(3, 1, 7)).capture_the_commander.attack
    assert (message.slot, message.defender, message.target_slot) == (3, 1, 7)
    for action in ids:
        d = decode(action)
        if d.kind == "attack":
            assert attack_action(d.slot, d.defender, d.target) == action
        elif d.kind == "gift":
            assert gift_action(d.slot, d.target) == action
        else:
            assert flip_action(d.slot) == action
    with pytest.raises(ValueError):
        decode(len(ids))


def test_registered() -> None:
    assert get_game("capture-the-commander") is GAME
    assert GAME.seat_counts == (2, 3, 4) and DECISION_CAP == 1000 and DEAL_LIMIT == 100
    assert GAME.decision_cap == DECISION_CAP * DEAL_LIMIT, "the most a scoring match can take"


# -- random playouts --------------------------------------------------------------------------
class Checks:
    """Per-step checks of a random game: cards conserved; nobody may hold an unrevealed card
    in an observation or event; war seats both move; turn order skips the seats out."""

    def __init__(self) -> None:
        self.tally: Counter[str] = Counter()
        self.revealed: set[int] = set()
        self.attacker = 0

    def __call__(self, generic: AnyState, events: list[Event]) -> None:
        state = of(generic)
        assert sorted(state.all_cards()) == ALL_CARDS, "cards not conserved"
        self._hidden_information(state, events)
        if state.phase == WAR:
            assert state.battle is not None
            self.tally["war"] += 1
        if state.phase == TURN:
            assert state.in_game[state.current]
        for event in events:
            typed = event.message.capture_the_commander
            self.tally[str(typed.WhichOneof("kind"))] += 1
            if typed.HasField("attack_declared"):
                self.attacker = typed.attack_declared.attacker
            if typed.HasField("war_declared") and state.phase == WAR and len(events) > 1:
                # Every seat of the war that can flip must choose, at the same time.
                assert state.to_move() == tuple(sorted(typed.war_declared.seats))
                self.tally[f"war for {len(typed.war_declared.seats)}"] += 1
        ended = any(e.message.capture_the_commander.HasField("deal_ended") for e in events)
        won = any(e.message.capture_the_commander.HasField("battle_won") for e in events)
        if won and not ended and state.phase == TURN:
            seats = state.num_seats
            after = [(self.attacker + k) % seats for k in range(1, seats + 1)]
            assert state.current == next(s for s in after if state.in_game[s])
            self.tally["turn passed"] += 1
        if state.is_over():
            self.tally[state.result().reason.split(";")[0][:24]] += 1
            self._final(state)

    def _hidden_information(self, state: CaptureTheCommanderState, events: list[Event]) -> None:
        for event in events:
            kind = event.message.capture_the_commander.WhichOneof("kind")
            if kind == "card_dealt":
                assert event.audience == frozenset()
                continue
            if kind == "card_revealed":
                revealed = event.message.capture_the_commander.card_revealed.card
                self.revealed.add(cards.from_message(revealed))
            assert set(card_messages(event.message)) <= self.revealed
        if state.phase == DEALING:
            self.revealed = set()  # a new deal: nothing of it has been seen
        if len(state.history) % 5 == 0 or state.is_over():
            for seat in [None, *range(state.num_seats)]:
                seen = set(card_messages(state.observation(seat)))
                assert seen <= self.revealed, f"seat {seat} sees a card never revealed"

    def _final(self, state: CaptureTheCommanderState) -> None:
        result = state.result()
        if state.options.teams:
            assert result.ranks[0] == result.ranks[2] and result.ranks[1] == result.ranks[3]
        if state.options.target_score is None and result.ranks.count(0) == 1:
            winner = result.ranks.index(0)
            assert state.in_game[winner] and sum(state.in_game) == 1


@pytest.mark.parametrize(("num_seats", "options"), CONFIGS)
def test_random_playouts_keep_every_invariant(num_seats: int, options: dict[str, object]) -> None:
    checks = Checks()
    labels: dict[int, str] = {}
    count = 24 if options.get("target_score") else 100
    for index in range(count):
        thorough = index < 6

        def after_step(state: AnyState, events: list[Event], deep: bool = thorough) -> None:
            if deep or len(state.history) % 4 == 0:
                check_step(state, thorough=deep, labels=labels)
            checks(state, events)

        final = play_one(GAME, *game_rngs(num_seats * 100, index), num_seats, options, after_step)
        if thorough:
            check_history_round_trip(GAME, final)
    tally = checks.tally
    assert tally["battle_won"] > 0 and tally["commander_captured"] > 0
    assert tally["war_declared"] > 0 and tally["war for 2"] > 0 and tally["turn passed"] > 0
    if options.get("teams"):
        assert tally["gift_given"] > 0
    if options.get("target_score"):
        assert tally["deal_ended"] > count


def test_random_playouts_with_the_generic_harness() -> None:
    for num_seats, options in CONFIGS[:3] + CONFIGS[8:9]:
        random_playouts(GAME, 8, seed=num_seats, num_seats=num_seats, options=options)


def test_same_seed_same_game_even_with_global_random_disturbed() -> None:
    hashes = [check_determinism(GAME, 7, n, o) for n, o in CONFIGS]
    # The options change nothing until they matter, so some configurations may share a game.
    assert len(set(hashes)) >= len(CONFIGS) // 2
    assert check_determinism(GAME, 8) != hashes[0]


# -- information ------------------------------------------------------------------------------
def test_resampling_changes_nothing_a_seat_can_see() -> None:
    """check_information at many points of random games (some in the middle of a war with one
    choice made); and resample really re-deals: the hidden cards and the other seat's pending
    war choice move."""
    rng = random.Random(5)
    tally: Counter[str] = Counter()
    for num_seats, options in CONFIGS:
        for index in range(2):

            def after_step(generic: AnyState, events: list[Event]) -> None:
                state = of(generic)
                seats = state.num_seats
                pending = state.battle is not None and bool(state.battle.choices)
                if not pending and len(state.history) % 23:
                    return
                check_information(GAME, state, rng, 1)
                seat = rng.randrange(seats)
                world = state.resample(seat, rng)
                tally["hidden moved"] += state.formations != world.formations
                tally["points"] += 1
                if pending:
                    assert state.battle is not None and world.battle is not None
                    tally["pending"] += 1
                    tally["choice moved"] += state.battle.choices != world.battle.choices

            play_one(GAME, *game_rngs(77, index), num_seats, options, after_step)
    assert tally["hidden moved"] > tally["points"] * 0.9
    assert tally["pending"] > 5 and tally["choice moved"] > 0


def test_resample_keeps_one_suit_each_and_revealed_cards() -> None:
    state = deal(3, one_suit_each=True)
    attack(state, 0, 1, 1, 2)
    for seed in range(10):
        world = of(state.resample(seed % 3, random.Random(seed)))
        for seat in range(3):
            for slot in range(1, 14):
                card = world.formations[seat][slot]
                assert card == EMPTY or cards.suit(card) == seat
                if state.known[seat][slot]:
                    assert card == state.formations[seat][slot]
        check_history_round_trip(GAME, world)


def card_messages(message: Message) -> list[int]:
    """Every card anywhere in a message, however deeply nested."""
    found: list[int] = []
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        values = list(value) if field.is_repeated else [value]
        for item in values:
            if field.message_type.full_name == "arena.v1.Card":
                found.append(cards.from_message(item))
            else:
                found.extend(card_messages(item))
    return found


def test_no_seat_ever_sees_a_card_nobody_has_revealed() -> None:
    """At every step of random games, for every seat and a spectator: the observation, the
    text picture and every event the seat may see hold only cards revealed to everyone in
    this deal; hidden cards never show, not even to their owner."""
    checked = 0
    for num_seats, options in CONFIGS:
        revealed: set[int] = set()

        def after_step(generic: AnyState, events: list[Event]) -> None:
            nonlocal checked, revealed
            state = of(generic)
            seats = [None, *range(state.num_seats)]
            for event in events:
                typed = event.message.capture_the_commander
                if typed.WhichOneof("kind") == "card_revealed":
                    revealed.add(cards.from_message(typed.card_revealed.card))
            hidden = set(state.hidden_cards())
            for seat in seats:
                for event in events:
                    if event.visible_to(seat):
                        assert set(card_messages(event.message)) <= revealed
                        assert not set(event.message.text.split()) & {
                            cards.label(c) for c in hidden - revealed
                        }
            if state.phase == DEALING:
                revealed = set()  # a new deal: nothing of it has been seen
            assert not hidden & revealed
            labels = {cards.label(c) for c in hidden}
            for seat in seats:
                assert set(card_messages(state.observation(seat))) <= revealed
                tokens = state.render(seat).replace("[", " ").replace("]", " ").split()
                assert not set(tokens) & labels
            checked += 1

        play_one(GAME, *game_rngs(21, 0), num_seats, options, after_step)
    assert checked > 500


# -- golden playthrough -----------------------------------------------------------------------
def golden_text(seed: int) -> str:
    lines = [
        f"# Capture the Commander, 3 seats, one seeded random game: game_rngs({seed}, 0) of "
        "tests/games/invariants.py",
        "# Regenerate: ARENA_UPDATE_GOLDEN=1 .venv/bin/python -m pytest "
        "tests/games/test_capture_the_commander.py -k golden",
    ]

    def after_step(generic: AnyState, events: list[Event]) -> None:
        step = generic.history[-1]
        number = len(generic.history) - 1
        if step.seat == CHANCE:
            lines.append(f"{number:4d} chance {cards.label(step.action)}")
        else:
            lines.append(f"{number:4d} seat {step.seat} {generic.action_label(step.action)}")
        for event in events:
            audience = "all" if event.audience is None else ",".join(map(str, event.audience))
            lines.append(f"       [{audience or 'referee'}] {event.message.text}")

    final = play_one(GAME, *game_rngs(seed, 0), 3, {}, after_step=after_step)
    result = final.result()
    lines += ["final", *final.render(None).splitlines()]
    lines.append(f"result ranks={list(result.ranks)} scores={list(result.scores)}")
    lines.append(f"reason {result.reason}")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def test_golden_playthrough() -> None:
    text = golden_text(GOLDEN_SEED)
    if os.environ.get("ARENA_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text)
    assert GOLDEN.exists(), "no golden file: run with ARENA_UPDATE_GOLDEN=1"
    expected = GOLDEN.read_text()
    if text != expected:
        import difflib

        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True), text.splitlines(keepends=True), n=2
            )
        )
        pytest.fail(f"the seeded playthrough changed:\n{diff[:4000]}")


def test_new_formation_is_empty() -> None:
    assert new_formation() == [EMPTY] * 14


def test_the_scoring_option_defaults_to_the_seeds_target_of_25() -> None:
    """RULINGS: the scoring option plays to 25 unless a target is given; off, one deal."""
    assert CAPTURE_THE_COMMANDER.options({}).target is None
    assert CAPTURE_THE_COMMANDER.options({"scoring": True}).target == 25
    assert CAPTURE_THE_COMMANDER.options({"target_score": 12}).target == 12
    assert CAPTURE_THE_COMMANDER.options({"scoring": True, "target_score": 30}).target == 30
    state = CAPTURE_THE_COMMANDER.new_state({"scoring": True}, 2)
    assert state.observation(0).capture_the_commander.target_score == 25
