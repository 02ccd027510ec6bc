"""Strato-Sphere: random-playout invariants, determinism, information, and a scripted scenario
for every rule of the seed and every ruling in docs/games/strato-sphere.md."""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

import pytest
from arena.v1 import cards_pb2
from arena.v1 import strato_sphere_pb2 as sspb
from arena_games import cards, get_game
from arena_games.base import Event, GameState, IllegalActionError, OptionsError, SeatView
from arena_games.legal_actions import legal_action_messages
from arena_games.match_messages import match_start_message
from arena_games.playout import Policy, play_out, random_policy, sample_chance
from arena_games.strato_sphere import STRATO_SPHERE, StratoSphereState
from arena_games.strato_sphere import rules as strato_rules
from arena_games.strato_sphere.rules import (
    ACTION_COUNT,
    ATTACK_BASE,
    BLACK,
    CLUBS,
    DECLINE,
    DEPLOY_BASE,
    DIAMONDS,
    DRAW,
    HEARTS,
    MOVES_PER_TURN,
    NO_FORCE,
    PASS,
    RED,
    SPADES,
    TURN_CAP,
    action_label,
    attack_action,
    decks,
    deploy_action,
    face,
    prevent_action,
    reveal_action,
    turn_moves,
)
from arena_games.strato_sphere.strato_worlds import HiddenDeal, state_seen
from arena_games.tracking import random_views
from google.protobuf.message import Message

from tests.games.invariants import (
    check_determinism,
    check_history_round_trip,
    check_information,
    check_result,
    check_step,
    game_rngs,
    play_one,
)

GAME = STRATO_SPHERE


# -- helpers ----------------------------------------------------------------------------------
def every_card(state: StratoSphereState) -> list[int]:
    """Every card id wherever it is: pile, node stacks, face-up cards, hands, discard pile."""
    found = list(state.pile)
    found += [c for stack in state.stacks for c in stack]
    found += [c for c in state.face_up if c >= 0]
    found += [c for hand in state.hands for c in hand]
    return found + state.discard


def check_conservation(state: GameState[Any]) -> None:
    assert isinstance(state, StratoSphereState)
    assert sorted(every_card(state)) == list(range(52 * decks(state.num_seats)))
    assert all(len(hand) <= 7 for hand in state.hands)
    assert state.turns <= TURN_CAP


def check_audiences(events: Iterable[Event], num_seats: int) -> None:
    """Audiences well formed; frozenset() (the referee only) is allowed, as base.make_event
    documents, for the face-down node cards."""
    for event in events:
        assert event.message.public == event.public
        if event.audience is None:
            assert not list(event.message.audience)
        else:
            assert all(0 <= s < num_seats for s in event.audience)
            assert list(event.message.audience) == sorted(event.audience)


def card_id(used: set[int], label: str, copies: int) -> int:
    """The lowest unused id of a face."""
    face_ = cards.parse(label)
    for copy in range(copies):
        if face_ + 52 * copy not in used:
            used.add(face_ + 52 * copy)
            return face_ + 52 * copy
    raise AssertionError(f"no copy of {label} left")


def arrange(
    num_seats: int = 2,
    *,
    stacks: dict[int, list[str]] | None = None,
    face_up: dict[int, str] | None = None,
    hands: dict[int, list[str]] | None = None,
    forces: list[int] | None = None,
    current: int = 0,
    pile: int | None = None,
    turns: int | None = None,
) -> StratoSphereState:
    """A state after the deal with the named cards placed; nodes not named get three filler
    cards, hands not named are empty, the rest is the pile (cut to `pile` cards, the others
    discarded, when given). Unless `turns` says otherwise, the first round (of short turns) is
    over and the seat to move has a turn of three moves."""
    state = GAME.new_state(None, num_seats)
    assert isinstance(state, StratoSphereState)
    copies = decks(num_seats)
    used: set[int] = set()
    for node, label in (face_up or {}).items():
        state.face_up[node] = card_id(used, label, copies)
    for node, labels in (stacks or {}).items():
        state.stacks[node] = [card_id(used, label, copies) for label in labels]
    for seat, labels in (hands or {}).items():
        state.hands[seat] = sorted(card_id(used, label, copies) for label in labels)
    rest = [c for c in range(52 * copies) if c not in used]
    for node in range(state.num_nodes):
        if node not in (stacks or {}):
            state.stacks[node] = [rest.pop(), rest.pop(), rest.pop()]
    if pile is not None:
        state.discard = rest[pile:]
        rest = rest[:pile]
    state.pile = sorted(rest)
    state.forces = list(forces) if forces is not None else [NO_FORCE] * num_seats
    state.dealt = num_seats * 15
    state.current = current
    state.turns = num_seats if turns is None else turns
    state.moves_left = turn_moves(state.turns, num_seats)
    check_conservation(state)
    return state


def act(state: StratoSphereState, action: int, seat: int | None = None) -> list[Event]:
    mover = state.to_move()[0] if seat is None else seat
    return state.apply(mover, action)


def kinds(events: list[Event]) -> list[str]:
    return [str(e.message.strato_sphere.WhichOneof("kind")) for e in events]


def labels(state: StratoSphereState, seat: int) -> list[str]:
    return [action_label(a) for a in state.legal_actions(seat)]


def cid(label: str, copy: int = 0) -> int:
    return cards.parse(label) + 52 * copy


# -- generic invariants -----------------------------------------------------------------------
@pytest.mark.parametrize(("num_seats", "games", "thorough"), [(2, 150, 10), (4, 80, 5)])
def test_random_playouts_keep_every_invariant(num_seats: int, games: int, thorough: int) -> None:
    """check_step after every step (thorough for the first games), cards conserved at every
    step, audiences well formed, the history rebuilds the final state, the cap holds, and no
    game is decided on the first turn (the reach ruling)."""
    seen: dict[int, str] = {}
    endings = {"zone": 0, "cap": 0, "dead": 0}
    for index in range(games):
        deep = index < thorough

        def after(state: GameState[Any], events: list[Event], deep: bool = deep) -> None:
            check_step(state, thorough=deep, labels=seen)
            check_conservation(state)
            check_audiences(events, state.num_seats)

        chance_rng, policy_rng = game_rngs(1234, index)
        final = play_one(GAME, chance_rng, policy_rng, num_seats, None, after)
        check_result(final)
        check_history_round_trip(GAME, final)
        assert sum(1 for s in final.history if s.seat >= 0) <= GAME.decision_cap
        assert isinstance(final, StratoSphereState)
        reason = final.result().reason
        endings["cap" if "cap" in reason else "dead" if "dead" in reason else "zone"] += 1
        assert final.turns > 0, "decided on the first turn"
    # Random play never reaches the cap any more: it freezes first, and that ends the game.
    assert endings["zone"] > 0 and endings["dead"] > 0, endings


@pytest.mark.parametrize("num_seats", [2, 4])
def test_same_seed_same_game(num_seats: int) -> None:
    first = check_determinism(GAME, 7, num_seats)
    assert first == check_determinism(GAME, 7, num_seats)
    assert first != check_determinism(GAME, 8, num_seats)


def sample_states(num_seats: int, seed: int, every: int) -> list[StratoSphereState]:
    """Snapshots of one random game: during the deal, mid-game, during attacks, at the end."""
    periodic: list[StratoSphereState] = []
    attacks: list[StratoSphereState] = []

    def keep(state: GameState[Any], _events: list[Event]) -> None:
        assert isinstance(state, StratoSphereState)
        if state.attack is not None:
            attacks.append(state.clone())
        elif len(state.history) % every == 0:
            periodic.append(state.clone())

    chance_rng, policy_rng = game_rngs(seed, 0)
    final = play_one(GAME, chance_rng, policy_rng, num_seats, None, keep)
    assert isinstance(final, StratoSphereState)
    return [*periodic[:: max(1, len(periodic) // 5)], *attacks[:2], final]


@pytest.mark.parametrize(("num_seats", "seed"), [(2, 0), (4, 2)])
def test_resampling_what_a_seat_cannot_see_changes_nothing_it_sees(
    num_seats: int, seed: int
) -> None:
    rng = random.Random(5)
    states = sample_states(num_seats, seed, 17)
    assert any(s.attack is not None for s in states)
    for state in states:
        # A world is dealt, not replayed: its history is empty and it plays on instead.
        check_information(GAME, state, rng, tries=2, replays=False)


def test_resample_redeals_hidden_cards_and_keeps_seen_ones() -> None:
    state = sample_states(2, 0, 40)[2]
    world = state.resample(0, random.Random(1))
    assert world.hands[0] == state.hands[0]
    assert world.face_up == state.face_up and world.discard == state.discard
    hidden = state.pile + state.hands[1] + [c for s in state.stacks for c in s]
    redealt = world.pile + world.hands[1] + [c for s in world.stacks for c in s]
    assert sorted(hidden) == sorted(redealt)
    assert (world.pile, world.hands[1], world.stacks) != (state.pile, state.hands[1], state.stacks)


def every_card_once(state: StratoSphereState) -> bool:
    return sorted(every_card(state)) == list(range(52 * decks(state.num_seats)))


@pytest.mark.parametrize("announced", [True, False], ids=["guarded", "control"])
def test_a_state_changed_by_hand_is_resampled_afresh(announced: bool) -> None:
    """resample keeps a position's deals (the unseen cards, a base to clone) for its next call
    there. A change by hand at the same history length, announced by forget_legal_actions as
    the contract asks, must drop them: here seat 0 swaps a hand card for one of the pile, so a
    world dealt from the old deals would hold that card twice and lose the other. The control
    makes the same change unannounced: the kept deals are used, and the world is wrong."""
    state = sample_states(2, 0, 40)[2]
    rng = random.Random(4)
    assert every_card_once(state.resample(0, rng))
    held, undrawn = state.hands[0][0], state.pile[0]
    state.hands[0] = sorted([*state.hands[0][1:], undrawn])
    state.pile = sorted([*state.pile[1:], held])
    if announced:
        state.forget_legal_actions()
    worlds = [state.resample(0, rng) for _ in range(20)]
    assert all(every_card_once(w) and w.hands[0] == state.hands[0] for w in worlds) == announced


def test_four_player_resample_survives_swapped_copies() -> None:
    """Two copies of a face are interchangeable: a resample may deal a seat the other copy, and
    the world shows every seat what it saw and plays on by the rules."""
    rng = random.Random(9)
    for seed in (2, 3):
        for state in sample_states(4, seed, 60)[-3:]:
            for seat in range(4):
                world = state.resample(seat, rng)
                assert world.observation(seat) == state.observation(seat)
                assert world.history == []
                play_out(world, rng, random_policy(rng), lambda s: check_step(s, thorough=False))


# -- hidden information -----------------------------------------------------------------------
def cards_in(message: Message) -> list[cards_pb2.Card]:
    """Every Card anywhere inside a message."""
    found: list[cards_pb2.Card] = []
    for _descriptor, value in message.ListFields():
        values = [value] if isinstance(value, Message | str | bytes | int | float) else value
        for item in values:
            if isinstance(item, cards_pb2.Card):
                found.append(item)
            elif isinstance(item, Message):
                found += cards_in(item)
    return found


@pytest.mark.parametrize(("num_seats", "seed"), [(2, 0), (2, 1), (4, 2), (4, 4)])
def test_no_seat_is_told_a_card_it_may_not_know(num_seats: int, seed: int) -> None:
    """Face-down node cards reach the referee only, a drawn card only its drawer, and every
    other card in an event or an observation is face up or in the seat's own hand."""

    def check(state: GameState[Any], events: list[Event]) -> None:
        assert isinstance(state, StratoSphereState)
        public = {face(c) for c in state.face_up if c >= 0} | {face(c) for c in state.discard}
        for event in events:
            typed = event.message.strato_sphere
            kind = typed.WhichOneof("kind")
            shown = {cards.from_message(c) for c in cards_in(typed)}
            if kind == "node_card_dealt" and typed.node_card_dealt.HasField("card"):
                assert event.audience == frozenset()
            elif kind == "card_drawn" and typed.card_drawn.HasField("card"):
                assert event.audience == frozenset([typed.card_drawn.seat])
            else:
                assert event.audience is None
                assert shown <= public, (event.message.text, shown - public)
        for seat in [None, *range(state.num_seats)]:
            obs = state.observation(seat).strato_sphere
            own = {face(c) for c in state.hands[seat]} if seat is not None else set()
            assert {cards.from_message(c) for c in cards_in(obs)} <= public | own
            assert len(obs.hand) == (len(state.hands[seat]) if seat is not None else 0)

    chance_rng, policy_rng = game_rngs(seed, 0)
    play_one(GAME, chance_rng, policy_rng, num_seats, None, check)


# -- the deal ---------------------------------------------------------------------------------
def test_deal_nodes_layer_by_layer_then_hands_one_card_at_a_time() -> None:
    state = GAME.new_state(None, 2)
    assert isinstance(state, StratoSphereState)
    node_events: list[Event] = []
    while state.is_chance():
        lowest = state.chance_outcomes()[0][0]
        events = state.apply_chance(lowest)
        if len(state.history) <= 18:
            node_events += events
        else:
            private, public = events
            seat = (len(state.history) - 19) % 2
            assert private.audience == frozenset([seat])
            assert private.message.strato_sphere.card_drawn.card.rank > 0
            assert public.audience is None
            assert not public.message.strato_sphere.card_drawn.HasField("card")
    assert state.stacks[0] == [0, 6, 12] and state.stacks[5] == [5, 11, 17]
    assert state.hands[0] == list(range(18, 30, 2)) and state.hands[1] == list(range(19, 30, 2))
    assert len(state.pile) == 52 - 18 - 12 and state.to_move() == (0,)
    secret, shown = node_events[0], node_events[1]
    assert secret.audience == frozenset() and secret.message.strato_sphere.node_card_dealt.card
    assert shown.audience is None
    assert not shown.message.strato_sphere.node_card_dealt.HasField("card")


def test_four_players_deal_two_decks_with_card_ids_up_to_103() -> None:
    state = GAME.new_state(None, 4)
    assert isinstance(state, StratoSphereState)
    assert len(state.chance_outcomes()) == 104
    while state.is_chance():
        state.apply_chance(state.chance_outcomes()[-1][0])
    assert [len(s) for s in state.stacks] == [3] * 12
    assert [len(h) for h in state.hands] == [6] * 4 and len(state.pile) == 104 - 36 - 24
    assert state.stacks[0] == [103, 91, 79]


def test_seat_counts_and_registration() -> None:
    assert get_game("strato-sphere") is GAME
    assert GAME.seat_counts == (2, 4)
    with pytest.raises(Exception, match="played by 2, 4 seats"):
        GAME.new_state(None, 3)


def test_action_labels_are_unique_and_decode() -> None:
    names = [action_label(a) for a in range(ACTION_COUNT)]
    assert len(set(names)) == ACTION_COUNT
    assert names[PASS] == "pass" and names[DRAW] == "draw" and names[DECLINE] == "decline"
    assert action_label(deploy_action(cards.parse("Ks"), 4)) == "deploy Ks 4"
    assert action_label(attack_action(5, 0)) == "attack 5>0"
    assert action_label(prevent_action(cards.parse("Td"))) == "prevent Td"
    assert action_label(reveal_action(11)) == "reveal 11"


# -- forces -----------------------------------------------------------------------------------
def test_first_reveal_gives_its_colour_and_the_other_player_the_other_at_once() -> None:
    state = arrange(stacks={2: ["2c", "Qh"]})
    events = act(state, reveal_action(2))
    assert state.forces == [RED, BLACK]
    assert kinds(events) == ["card_revealed", "force_assigned", "force_assigned"]
    assert state.controller(2) == 0 and state.stacks[2] == [cid("2c")]
    assert state.moves_left == 2


def test_first_reveal_of_a_black_card_by_the_second_player() -> None:
    state = arrange(stacks={3: ["2c", "5s"]}, current=1)
    act(state, reveal_action(3))
    assert state.forces == [RED, BLACK] and state.controller(3) == 1


def test_revealing_the_other_force_hands_the_node_to_its_owner() -> None:
    state = arrange(stacks={1: ["2c", "9s"]}, forces=[RED, BLACK])
    act(state, reveal_action(1))
    assert state.controller(1) == 1 and state.forces == [RED, BLACK]


def test_four_player_forces_go_to_revealers_and_the_last_player_gets_the_one_left() -> None:
    state = arrange(
        4,
        stacks={0: ["Kh"], 1: ["Ks"], 3: ["Qh"], 4: ["2c"], 6: ["3d"], 7: ["4s"]},
    )
    act(state, reveal_action(0))  # seat 0: hearts
    assert state.forces == [HEARTS, NO_FORCE, NO_FORCE, NO_FORCE]
    act(state, reveal_action(1))  # seat 0 already has a force: spades stays free
    assert state.forces[0] == HEARTS and state.controller(1) is None
    act(state, PASS)
    act(state, reveal_action(3))  # hearts is seat 0's: seat 1 gets nothing
    assert state.forces[1] == NO_FORCE and state.controller(3) == 0
    act(state, reveal_action(4))  # seat 1: clubs
    assert state.forces[1] == CLUBS
    act(state, PASS)
    events = act(state, reveal_action(6))  # seat 2: diamonds, so seat 3 has spades at once
    assert state.forces == [HEARTS, CLUBS, DIAMONDS, SPADES]
    assert kinds(events) == ["card_revealed", "force_assigned", "force_assigned"]
    assert state.controller(1) == 3, "the face-up spade became the last player's"


def test_reveal_and_deploy_discard_an_uncontrolled_face_up_card() -> None:
    state = arrange(
        4,
        face_up={0: "5h", 1: "6h"},
        stacks={0: ["2c", "3c"], 1: ["4c"]},
        hands={0: ["Kc"]},
        forces=[CLUBS, DIAMONDS, NO_FORCE, NO_FORCE],
    )
    assert state.controller(0) is None, "nobody has hearts yet"
    events = act(state, deploy_action(cards.parse("Kc"), 0))
    assert state.discard == [cid("5h")] and state.controller(0) == 0
    assert events[0].message.strato_sphere.card_deployed.discarded.rank == 5
    act(state, reveal_action(1))
    assert state.discard == [cid("5h"), cid("6h")] and state.face_up[1] == cid("4c")


# -- the moves --------------------------------------------------------------------------------
def test_a_turn_is_three_moves_and_pass_ends_it_early() -> None:
    state = arrange(hands={0: ["2h", "3h", "4h"]}, forces=[RED, BLACK])
    for node in (0, 1):
        act(state, deploy_action(state.hands[0][0], node))
    assert state.current == 0 and state.moves_left == 1
    turns = state.turns
    events = act(state, deploy_action(state.hands[0][0], 2))
    assert state.current == 1 and state.moves_left == 3 and state.turns == turns + 1
    assert kinds(events)[-1] == "turn_ended"
    events = act(state, PASS)
    assert state.current == 0 and state.turns == turns + 2
    assert events[-1].message.strato_sphere.turn_ended.passed


def test_draw_only_under_the_hand_limit_and_from_a_pile_with_cards() -> None:
    full = arrange(hands={0: ["2h", "3h", "4h", "5h", "6h", "7h", "8h"]}, forces=[RED, BLACK])
    assert DRAW not in full.legal_actions(0)
    empty = arrange(hands={0: ["2h"]}, forces=[RED, BLACK], pile=0)
    assert DRAW not in empty.legal_actions(0) and PASS in empty.legal_actions(0)
    state = arrange(hands={0: ["2h"] * 1}, forces=[RED, BLACK], pile=3)
    assert DRAW in state.legal_actions(0)
    assert act(state, DRAW) == [] and state.is_chance() and state.drawing == 0
    drawn = state.chance_outcomes()[1][0]
    events = state.apply_chance(drawn)
    assert drawn in state.hands[0] and state.moves_left == 2 and not state.is_chance()
    assert events[0].audience == frozenset([0]) and events[1].audience is None


def test_a_third_move_draw_passes_the_turn_only_after_the_card_arrives() -> None:
    state = arrange(hands={0: ["2h"]}, forces=[RED, BLACK], pile=5)
    act(state, DRAW)
    state.apply_chance(state.chance_outcomes()[0][0])
    act(state, DRAW)
    state.apply_chance(state.chance_outcomes()[0][0])
    act(state, DRAW)
    assert state.is_chance() and state.current == 0
    events = state.apply_chance(state.chance_outcomes()[0][0])
    assert len(state.hands[0]) == 4 and state.current == 1
    assert kinds(events) == ["card_drawn", "card_drawn", "turn_ended"]


def test_reveal_needs_an_uncontrolled_node_with_a_face_down_card() -> None:
    state = arrange(
        face_up={0: "Kh", 1: "Ks"},
        stacks={0: ["2c"], 1: ["3c"], 2: []},
        forces=[RED, BLACK],
    )
    legal = state.legal_actions(0)
    assert reveal_action(0) not in legal and reveal_action(1) not in legal
    assert reveal_action(2) not in legal, "node 2 has no face-down card"
    assert reveal_action(5) in legal


def test_deploy_own_force_onto_any_uncontrolled_node_within_reach_even_an_empty_one() -> None:
    state = arrange(
        face_up={0: "Kh", 4: "Ks"},
        stacks={2: []},
        hands={0: ["2h", "9d", "Jc", "As"]},
        forces=[RED, BLACK],
    )
    deploys = [x for x in labels(state, 0) if x.startswith("deploy")]
    assert deploys == [f"deploy {c} {n}" for c in ("9d", "2h") for n in (1, 2, 5)]
    act(state, deploy_action(cards.parse("2h"), 2))
    assert state.controller(2) == 0 and state.stacks[2] == []


def test_no_force_no_deploy_and_no_attack() -> None:
    state = arrange(
        4, hands={0: ["2h", "3c", "4d", "5s"]}, forces=[NO_FORCE, CLUBS, NO_FORCE, HEARTS]
    )
    assert not [x for x in labels(state, 0) if x.startswith(("deploy", "attack"))]
    with pytest.raises(IllegalActionError):
        act(state, deploy_action(cards.parse("3c"), 0))


def test_duplicate_copies_give_one_action_and_the_lower_id_is_played() -> None:
    state = arrange(4, hands={0: ["Kc", "Kc", "2c"]}, forces=[CLUBS, DIAMONDS, HEARTS, SPADES])
    names = labels(state, 0)
    assert names.count("deploy Kc 0") == 1 and len(names) == len(set(names))
    act(state, deploy_action(cards.parse("Kc"), 0))
    assert state.face_up[0] == cid("Kc") and state.hands[0] == [cid("2c"), cid("Kc", 1)]


# -- attacks ----------------------------------------------------------------------------------
def attack_table(**overrides: object) -> StratoSphereState:
    """Seat 0 (red) holds node 2 with Th, seat 1 (black) holds node 3 with Ts: adjacent across
    the zone border, one face-down card under each."""
    setup: dict[str, object] = {
        "face_up": {2: "Th", 3: "Ts", 5: "9c", 0: "9h"},
        "stacks": {2: ["2c"], 3: ["3c"], 5: ["4c"], 0: ["5c"]},
        "forces": [RED, BLACK],
    }
    setup.update(overrides)
    return arrange(**setup)  # type: ignore[arg-type]


def test_attack_needs_equal_or_lower_value_on_an_adjacent_opponent_node() -> None:
    state = attack_table()
    attacks = [x for x in labels(state, 0) if x.startswith("attack")]
    assert attacks == ["attack 0>5", "attack 2>3"], "equal value and the ring's wrap both count"
    higher = attack_table(face_up={2: "Th", 3: "Js", 5: "9c", 0: "9h"})
    assert "attack 2>3" not in labels(higher, 0)


def test_attack_needs_a_face_down_card_left_at_both_nodes() -> None:
    no_source = attack_table(stacks={2: [], 3: ["3c"], 5: ["4c"], 0: ["5c"]})
    assert "attack 2>3" not in labels(no_source, 0)
    no_target = attack_table(stacks={2: ["2c"], 3: [], 5: ["4c"], 0: ["5c"]})
    assert "attack 2>3" not in labels(no_target, 0)


def test_attack_targets_only_an_opponent_node() -> None:
    own = attack_table(face_up={2: "Th", 3: "5h", 5: "9c", 0: "9h"})
    assert not [x for x in labels(own, 0) if x.startswith("attack 2")]
    with pytest.raises(IllegalActionError):
        act(own, attack_action(2, 3))
    far = attack_table(face_up={1: "Th", 4: "2s", 5: "9c", 0: "9h"}, stacks={1: ["2c"], 4: ["3c"]})
    assert "attack 1>4" not in labels(far, 0)


def test_an_attack_nobody_prevents_destroys_both_controlling_cards() -> None:
    state = attack_table(hands={1: ["8h", "Ks"]})
    events = act(state, attack_action(2, 3))
    assert state.to_move() == (1,) and state.legal_actions(1) == [DECLINE]
    assert kinds(events) == ["attack_declared"]
    events = act(state, DECLINE)
    assert state.discard == [cid("Th"), cid("Ts")]
    assert state.face_up[2] == state.face_up[3] == -1
    assert state.controller(2) is None and state.controller(3) is None
    assert state.stacks[2] == [cid("2c")] and state.stacks[3] == [cid("3c")]
    assert state.to_move() == (0,) and state.moves_left == 2
    assert kinds(events) == ["prevention_declined", "attack_resolved"]


def test_prevention_needs_the_attackers_force_equal_or_higher() -> None:
    state = attack_table(hands={1: ["8h", "Td", "Qh", "Ks"]})
    act(state, attack_action(2, 3))
    assert labels(state, 1) == ["decline", "prevent Td", "prevent Qh"]
    events = act(state, prevent_action(cards.parse("Td")))
    assert kinds(events) == ["attack_prevented"]
    assert state.discard == [cid("Th"), cid("Td")]
    assert state.face_up[2] == -1 and state.face_up[3] == cid("Ts") and state.controller(3) == 1
    assert state.to_move() == (0,) and state.moves_left == 2
    assert state.hands[1] == sorted([cid("8h"), cid("Qh"), cid("Ks")])


def test_prevention_goes_around_from_the_defender_and_the_first_to_play_stops_it() -> None:
    # Seat 1 (clubs) attacks seat 2's node 6 from node 5: seats 2, 3, 0 are asked, in order.
    state = arrange(
        4,
        face_up={5: "Qc", 6: "Jd"},
        stacks={5: ["2h"], 6: ["3h"]},
        hands={2: ["Kd"], 3: ["2c"], 0: ["Ac", "Kc"]},
        forces=[HEARTS, CLUBS, DIAMONDS, SPADES],
        current=1,
    )
    act(state, attack_action(5, 6))
    assert state.to_move() == (2,) and labels(state, 2) == ["decline"]
    act(state, DECLINE)
    assert state.to_move() == (3,) and labels(state, 3) == ["decline"]
    act(state, DECLINE)
    assert state.to_move() == (0,) and labels(state, 0) == ["decline", "prevent Kc", "prevent Ac"]
    assert state.observation(1).strato_sphere.attack.declined == [2, 3]
    act(state, prevent_action(cards.parse("Kc")))
    assert state.face_up[6] == cid("Jd") and state.face_up[5] == -1 and state.current == 1


def test_every_other_seat_declining_lets_a_four_player_attack_through() -> None:
    state = arrange(
        4,
        face_up={5: "Qc", 6: "Jd"},
        stacks={5: ["2h"], 6: ["3h"]},
        forces=[HEARTS, CLUBS, DIAMONDS, SPADES],
        current=1,
    )
    act(state, attack_action(5, 6))
    for seat in (2, 3, 0):
        assert state.to_move() == (seat,)
        act(state, DECLINE)
    assert state.face_up[5] == state.face_up[6] == -1 and state.to_move() == (1,)


# -- reach (rulings added after the first audit) ----------------------------------------------
def test_reach_reveal_and_deploy_only_in_ones_own_zone_or_next_to_a_node_one_controls() -> None:
    """The ruling: "Reveal and Deploy may target only a node in one's own zone, or a node
    adjacent to a node one controls." Seat 0 holds node 3 in seat 1's zone: its reach is its
    zone, 2 and 4; node 5 is out of reach however open it is."""
    state = arrange(face_up={3: "9h"}, hands={0: ["2h"]}, forces=[RED, BLACK])
    reveals = [x for x in labels(state, 0) if x.startswith("reveal")]
    deploys = [x for x in labels(state, 0) if x.startswith("deploy")]
    assert reveals == ["reveal 0", "reveal 1", "reveal 2", "reveal 4"]
    assert deploys == ["deploy 2h 0", "deploy 2h 1", "deploy 2h 2", "deploy 2h 4"]
    for action in (reveal_action(5), deploy_action(cards.parse("2h"), 5)):
        with pytest.raises(IllegalActionError):
            act(state, action)


def test_reach_without_a_node_is_ones_own_zone() -> None:
    """A seat that controls nothing (no force yet, or none of its cards face up) reaches only
    its own zone; with four seats, no other zone at all."""
    state = arrange(4, hands={2: ["2h"]}, forces=[CLUBS, DIAMONDS, HEARTS, SPADES], current=2)
    reveals = [x for x in labels(state, 2) if x.startswith("reveal")]
    deploys = [x for x in labels(state, 2) if x.startswith("deploy")]
    assert reveals == ["reveal 6", "reveal 7", "reveal 8"]
    assert deploys == ["deploy 2h 6", "deploy 2h 7", "deploy 2h 8"]


def test_reach_grows_with_each_node_taken_within_a_turn() -> None:
    """Reach is judged at each move: a deploy next to a controlled node extends it, so a turn
    can walk along the ring one node per move, but never further."""
    state = arrange(hands={0: ["2h", "3h", "4h"]}, forces=[RED, BLACK])
    act(state, deploy_action(cards.parse("2h"), 2))
    assert deploy_action(cards.parse("3h"), 3) in state.legal_actions(0)
    assert deploy_action(cards.parse("3h"), 4) not in state.legal_actions(0)
    act(state, deploy_action(cards.parse("3h"), 3))
    assert deploy_action(cards.parse("4h"), 4) in state.legal_actions(0)


def test_no_seat_can_take_a_zone_on_the_first_turn() -> None:
    """The reason for reach: as first ruled, seat 0 won on its first turn by revealing a node in
    the opponent's zone and deploying twice. Now the first move can only be in its own zone,
    and the best three moves take two of the opponent's nodes, not three."""
    state = arrange(stacks={0: ["5h"]}, hands={0: ["2h", "3h", "4h"]})
    act(state, reveal_action(0))
    act(state, deploy_action(cards.parse("2h"), 5))
    act(state, deploy_action(cards.parse("3h"), 4))
    assert not state.is_over() and state.current == 1
    assert [state.controller(n) for n in (3, 4, 5)] == [None, 0, 0]


# -- the end ----------------------------------------------------------------------------------
def test_controlling_a_whole_opponent_zone_wins_at_once() -> None:
    state = arrange(face_up={3: "2h", 4: "3h"}, hands={0: ["4h", "5h"]}, forces=[RED, BLACK])
    events = act(state, deploy_action(cards.parse("4h"), 5))
    assert state.is_over() and state.to_move() == ()
    assert state.result().ranks == (0, 1) and kinds(events)[-1] == "zone_taken"


def test_controlling_ones_own_zone_does_not_win() -> None:
    state = arrange(face_up={0: "2h", 1: "3h"}, hands={0: ["4h"]}, forces=[RED, BLACK])
    act(state, deploy_action(cards.parse("4h"), 2))
    assert not state.is_over()


def test_a_reveal_can_make_the_other_player_win() -> None:
    state = arrange(face_up={0: "2s", 1: "3s"}, stacks={2: ["Ks"]}, forces=[RED, BLACK])
    act(state, reveal_action(2))
    assert state.is_over() and state.result().ranks == (1, 0)


def test_the_last_players_force_can_hand_it_a_zone_and_the_win() -> None:
    state = arrange(
        4,
        face_up={0: "2s", 1: "3s", 2: "4s"},
        stacks={8: ["5d"]},
        forces=[HEARTS, CLUBS, NO_FORCE, NO_FORCE],
        current=2,
    )
    act(state, reveal_action(8))
    assert state.forces == [HEARTS, CLUBS, DIAMONDS, SPADES]
    assert state.is_over() and state.winner == 3
    assert state.result().ranks == (1, 1, 1, 0)


def test_when_two_seats_take_a_zone_at_once_the_mover_wins() -> None:
    state = arrange(
        4,
        face_up={0: "2s", 1: "3s", 2: "4s", 9: "2d", 10: "3d", 11: "4d"},
        stacks={8: ["5d"]},
        forces=[HEARTS, CLUBS, NO_FORCE, NO_FORCE],
        current=2,
    )
    act(state, reveal_action(8))
    assert state.is_over() and state.winner == 2, "seat 3 took zone 0 too, but seat 2 moved"


def test_turn_cap_most_nodes_controlled_wins() -> None:
    state = arrange(face_up={0: "2h", 1: "3h", 4: "2s"}, forces=[RED, BLACK])
    state.turns = TURN_CAP - 1
    act(state, PASS)
    assert state.is_over() and state.result().ranks == (0, 1)
    assert state.result().scores == (1.0, 0.0)
    assert state.result().reason == "turn cap of 600 reached; nodes controlled 2-1"


def test_turn_cap_equal_nodes_is_a_draw() -> None:
    state = arrange(face_up={0: "2h", 4: "2s"}, hands={1: ["3c"]}, forces=[RED, BLACK], current=1)
    state.turns = TURN_CAP - 1
    act(state, deploy_action(cards.parse("3c"), 5))
    act(state, PASS)
    assert state.result().ranks == (1, 0)
    even = arrange(face_up={0: "2h", 4: "2s"}, forces=[RED, BLACK])
    even.turns = TURN_CAP - 1
    act(even, PASS)
    assert even.result().ranks == (0, 0) and even.result().scores == (0.5, 0.5)


def test_turn_cap_ranks_four_players_by_nodes() -> None:
    state = arrange(
        4, face_up={0: "2h", 1: "3h", 4: "2c"}, forces=[HEARTS, CLUBS, DIAMONDS, SPADES]
    )
    state.turns = TURN_CAP - 1
    act(state, PASS)
    assert state.result().ranks == (0, 1, 2, 2)
    assert state.result().scores == (1.0, 2 / 3, 1 / 6, 1 / 6)
    assert state.result().reason.endswith("nodes controlled 2-1-0-0")


# -- dead position (rulings added after the first audit) --------------------------------------
def frozen(num_seats: int = 2, **placed: Any) -> StratoSphereState:
    """A board on which nothing can ever change: no face-down card left anywhere (no reveal,
    no attack) and an empty pile (no draw). Deploys stay possible for hands given."""
    stacks = {node: [] for node in range(3 * num_seats)}
    forces = [RED, BLACK] if num_seats == 2 else [CLUBS, DIAMONDS, HEARTS, SPADES]
    return arrange(num_seats, stacks=stacks, pile=0, forces=forces, **placed)


def test_dead_position_a_full_round_of_only_pass_ends_the_game_scored_as_at_the_cap() -> None:
    """The ruling: "When every seat in turn, for one full round, had no legal move but Pass,
    the game ends at once and is scored as at the cap." """
    state = frozen(face_up={0: "2h", 1: "3h", 4: "2s"})
    assert state.legal_actions(0) == [PASS]
    turns = state.turns
    act(state, PASS)
    assert not state.is_over() and state.legal_actions(1) == [PASS]
    act(state, PASS)
    assert state.is_over() and state.turns == turns + 2
    result = state.result()
    assert result.ranks == (0, 1) and result.scores == (1.0, 0.0)
    assert result.reason == (
        "dead position: for a full round every seat could only pass; nodes controlled 2-1"
    )


def test_dead_position_needs_every_seat_and_a_pass_by_choice_does_not_count() -> None:
    """Only a turn that had nothing legal but Pass counts: a seat that could deploy and passed
    anyway keeps the game going, and a move starts the count again."""
    state = frozen(face_up={0: "2h", 4: "2s"}, hands={1: ["3c"]})
    for _ in range(3):
        act(state, PASS)  # seat 0: nothing else is legal
        act(state, PASS)  # seat 1: it could have deployed
    assert not state.is_over()
    act(state, PASS)
    act(state, deploy_action(cards.parse("3c"), 5))
    act(state, PASS)  # nothing else is legal now, but the turn was not all passes
    assert not state.is_over()
    act(state, PASS)
    assert not state.is_over()
    act(state, PASS)
    assert state.is_over() and state.result().ranks == (1, 0)
    assert state.result().reason.endswith("nodes controlled 1-2")


def test_dead_position_with_four_seats_takes_four_turns_of_only_pass() -> None:
    state = frozen(4, face_up={0: "2h", 1: "3h", 4: "2c"})
    for seat in range(3):
        act(state, PASS)
        assert not state.is_over(), seat
    act(state, PASS)
    assert state.is_over() and state.result().ranks == (1, 2, 0, 2)
    assert state.result().reason.endswith("nodes controlled 1-0-2-0")


def test_results_are_ranks_with_the_node_counts_in_the_text() -> None:
    """The ruling: "Results are ranks like every other game": a zone taken ranks its taker
    first and every other seat second; scores follow the ranks (1, 1/2, 0 per seat beaten,
    tied, beaten by, over the other seats), never node counts, which go in the text."""
    state = arrange(face_up={0: "2s", 1: "3s"}, stacks={2: ["Ks"]}, forces=[RED, BLACK])
    act(state, reveal_action(2))
    result = state.result()
    assert result.ranks == (1, 0) and result.scores == (0.0, 1.0)
    assert result.reason == "seat 1 controls all three nodes of seat 0's zone; nodes controlled 0-3"


# -- what seats see ---------------------------------------------------------------------------
def test_observation_shows_counts_not_cards_and_only_the_own_hand() -> None:
    state = attack_table(hands={0: ["4h"], 1: ["Ks", "Qs"]})
    mine = state.observation(0).strato_sphere
    spectator = state.observation(None).strato_sphere
    assert [cards.label(cards.from_message(c)) for c in mine.hand] == ["4h"]
    assert not spectator.hand and not spectator.HasField("seat")
    assert list(mine.hand_sizes) == [1, 2] and list(mine.forces) == [RED, BLACK]
    node = mine.nodes[3]
    assert node.face_down == 1 and node.controller == 1 and node.face_up.rank == 10
    assert not mine.nodes[1].HasField("face_up") and not mine.nodes[1].HasField("controller")
    assert mine.nodes[4].zone == 1 and mine.turn_cap == TURN_CAP and mine.hand_limit == 7
    assert isinstance(mine, sspb.StratoSphereObservation)
    text = state.render(0)
    assert "seat 0 holds: 4h" in text and "Ts" in text


# -- worlds from a seat's view (strato_worlds.py) -------------------------------------------
def view_of(state: StratoSphereState, seat: int, events: list[Event]) -> SeatView:
    """What a Match would have told the seat: the events visible to it, its observation and its
    legal actions (an arranged state has no deal events; none are needed)."""
    start = match_start_message(GAME, state.options, seat, ["a", "b", "c", "d"][:4], "worlds")
    start.num_seats = state.num_seats
    seen = tuple(event.message for event in events if event.visible_to(seat))
    legal = tuple(legal_action_messages(state, seat))
    return SeatView(start, seen, state.observation(seat), legal)


def held_up_board(seat1_hand: list[str]) -> StratoSphereState:
    """Two seats, nothing to reveal, attack or draw: seat 0 (red, no cards) can only pass, and
    seat 1 (black) can deploy whatever black card it holds on node 3 or 5. The only cards
    hidden from seat 0 are seat 1's hand and six red cards face down on nodes 0 and 4."""
    stacks: dict[int, list[str]] = {node: [] for node in range(6)}
    stacks |= {0: ["7h", "8h", "9h"], 4: ["7d", "8d", "9d"]}
    face_up = {0: "2h", 4: "2s"}
    return arrange(
        stacks=stacks, face_up=face_up, hands={1: seat1_hand}, pile=0, forces=[RED, BLACK]
    )


def holds_black(state: StratoSphereState, seat: int) -> bool:
    return any(state.card_force[c] == BLACK for c in state.hands[seat])


def test_worlds_read_the_run_of_passes_from_the_events() -> None:
    """The turns passed in a row at their first move, read from the events a seat received,
    are the state's own count, at every decision of random games (runs of a full round too)."""
    longest = {2: 0, 4: 0}
    for num_seats in (2, 4):
        for seed in range(12):
            for truth, view in random_views(get_game("strato-sphere"), num_seats, seed):
                assert isinstance(truth, StratoSphereState)
                seen = state_seen(truth.options, view)
                assert seen.passed_turns == truth.passed_turns
                longest[num_seats] = max(longest[num_seats], truth.passed_turns)
    assert longest[2] >= 2 and longest[4] >= 4, longest


def test_after_a_round_of_passes_a_seat_that_could_deploy_kept_a_card_of_its_force() -> None:
    """Seat 0 could only pass; seat 1 passed too, and the game went on after a full round, so
    seat 1 could have deployed: it holds a black card. The only black card seat 0 has not seen
    is the 3 of clubs, so every world puts it in seat 1's hand (a shuffle alone would in 4 of
    10), and no world has counted a forced pass yet."""
    state = held_up_board(["3c", "4h", "5h", "6d"])
    events: list[Event] = []
    for _ in range(2):
        events += act(state, PASS) + act(state, PASS)
    assert not state.is_over() and state.to_move() == (0,) and state.passed_turns == 4
    sampler = GAME.world_sampler(view_of(state, 0, events))
    rng = random.Random(3)
    worlds = [sampler.sample(rng) for _ in range(200)] + [
        state.resample(0, rng) for _ in range(200)
    ]
    assert all(cid("3c") in world.hands[1] for world in worlds)
    assert all(world.forced_passes == 0 and not world.is_over() for world in worlds)
    assert len({tuple(world.hands[1]) for world in worlds}) > 10


def test_a_world_counts_the_forced_passes_its_hands_imply() -> None:
    """Seat 1 passed at the start of its turn; seat 0 cannot tell whether it had to. A world
    where seat 1 holds a black card counts no forced pass, one where it holds none counts one,
    and there seat 0's forced pass ends the game in a dead position, as it would have."""
    state = held_up_board(["3c", "4h", "5h", "6d"])
    state.current = 1
    events = act(state, PASS)
    sampler = GAME.world_sampler(view_of(state, 0, events))
    rng = random.Random(4)
    counted = set()
    for _ in range(100):
        world = sampler.sample(rng)
        could_deploy = holds_black(world, 1)
        assert world.forced_passes == (0 if could_deploy else 1)
        counted.add(world.forced_passes)
        act(world, PASS)
        assert world.is_over() == (not could_deploy)
    assert counted == {0, 1}


def test_a_game_over_in_a_dead_position_stays_dead_in_every_world() -> None:
    """A dead position tells every seat that the others could only pass: no resample of it
    gives seat 1 a black card, though seat 0 has not seen the 7 of spades on node 4."""
    state = held_up_board(["4h", "5h", "6d"])
    state.stacks[4][0] = cid("7s")
    state.discard.remove(cid("7s"))
    state.discard.append(cid("7d"))
    act(state, PASS)
    act(state, PASS)
    assert state.is_over() and state.result().reason.startswith("dead position")
    rng = random.Random(5)
    worlds = [state.resample(0, rng) for _ in range(200)]
    assert all(world.is_over() and world.forced_passes == 2 for world in worlds)
    assert not any(holds_black(world, 1) for world in worlds)
    assert any(cid("7s") in world.stacks[0] for world in worlds)


def hoarder(rng: random.Random) -> Policy:
    """Draws whenever it can, never deploys, and otherwise plays at random: hands fill up, and
    seats pass holding cards they could deploy."""

    def choose(_state: GameState[Any], _seat: int, legal: list[int]) -> int:
        if DRAW in legal:
            return DRAW
        return rng.choice([a for a in legal if not DEPLOY_BASE <= a < ATTACK_BASE])

    return choose


def test_resample_never_deals_a_world_that_would_already_have_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A real four-seat game (seeded hoarders, rules v3): at step 136 seat 2 (no force yet) is
    to move after five turns passed in a row; seats 2 and 3 could only pass, so seat 0 or seat
    1 could have moved. No resample deals them both stuck, or the game would have ended a turn
    ago. Control: with the worlds' check of forced passes off, some worlds do."""
    state = GAME.new_state(None, 4)
    assert isinstance(state, StratoSphereState)
    rng = random.Random(1191)
    policy = hoarder(rng)
    while len(state.history) < 136:
        if state.is_chance():
            state.apply_chance(sample_chance(state.chance_outcomes(), rng))
        else:
            seat = state.to_move()[0]
            state.apply(seat, policy(state, seat, state.legal_actions(seat)))
    assert state.to_move() == (2,) and state.passed_turns == 5
    assert state.could_only_pass(2) and state.could_only_pass(3)

    def stuck(world: StratoSphereState) -> bool:
        return world.could_only_pass(0) and world.could_only_pass(1)

    worlds = [state.resample(2, random.Random(k)) for k in range(1000)]
    assert not any(world.is_over() for world in worlds)
    assert not any(stuck(world) for world in worlds)
    monkeypatch.setattr(HiddenDeal, "_settle_forced_passes", lambda _self, _world: True)
    unchecked = [state.resample(2, random.Random(k)) for k in range(1000)]
    assert any(stuck(world) for world in unchecked)


def test_a_four_seat_hand_that_shows_a_face_before_a_lower_one_gets_the_second_copy() -> None:
    """A hand is kept in id order and the wire shows faces: a hand of the 9 of clubs (id 7) and
    the second 2 of clubs (id 52) shows 9c then 2c, so a world built from the view must give
    it the second copy of the 2 to show the same."""
    state = arrange(4, hands={0: ["9c"]}, forces=[CLUBS, DIAMONDS, HEARTS, SPADES])
    second_two = cid("2c", 1)
    place = next(p for p in [state.pile, *state.stacks] if second_two in p)
    place.remove(second_two)
    state.hands[0] = [cid("9c"), second_two]
    view = view_of(state, 0, [])
    world = GAME.world_sampler(view).sample(random.Random(6))
    assert world.hands[0] == [cid("9c"), second_two]
    assert world.observation(0) == state.observation(0)


# -- rules version 3: the first round -----------------------------------------------------------
def dealt(num_seats: int, seed: int) -> tuple[StratoSphereState, list[Event]]:
    """A real game after its deal (chance from a seeded generator), with the deal's events."""
    state = GAME.new_state(None, num_seats)
    assert isinstance(state, StratoSphereState)
    rng, events = random.Random(seed), []
    while state.is_chance():
        events += state.apply_chance(sample_chance(state.chance_outcomes(), rng))
    return state, events


def moves_per_turn(num_seats: int, turns: int, seed: int = 1) -> list[int]:
    """The moves of each of the first turns of a real game in which no seat passes: a draw
    when the hand has room, else a reveal, a deploy or an attack (declined by every other
    seat), so a turn ends only when its moves run out."""
    state, _ = dealt(num_seats, seed)
    rng = random.Random(seed)
    counts = [0] * turns
    while state.turns < turns:
        assert not state.is_over()
        if state.is_chance():
            state.apply_chance(sample_chance(state.chance_outcomes(), rng))
            continue
        seat = state.to_move()[0]
        if state.attack is not None:
            state.apply(seat, DECLINE)  # a reaction, not a move of the turn
            continue
        legal = state.legal_actions(seat)
        counts[state.turns] += 1
        state.apply(seat, DRAW if DRAW in legal else rng.choice([a for a in legal if a != PASS]))
    return counts


@pytest.mark.parametrize(
    ("num_seats", "expected"),
    [(2, [1, 3, 3, 3, 3]), (4, [1, 2, 3, 3, 3, 3, 3, 3])],
)
def test_first_round_turns_have_one_two_three_three_moves(
    num_seats: int, expected: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ruling (rules v3): in the first round the seats' first turns have 1, 2, 3 and 3
    moves in seat order (two seats: 1, then 3); every later turn has three. Counted on a real
    dealt game. Control: with the first round's table emptied, as under v2, every turn has 3."""
    assert GAME.rules_version == "strato-sphere/3"
    assert moves_per_turn(num_seats, len(expected)) == expected
    monkeypatch.setattr(strato_rules, "FIRST_ROUND_MOVES", {})
    assert moves_per_turn(num_seats, len(expected)) == [3] * len(expected)


def test_three_seats_are_refused_in_one_line() -> None:
    """Strato-Sphere has no three-seat game (no first round is ruled for it): refused, named."""
    with pytest.raises(OptionsError, match=r"^strato-sphere is played by 2, 4 seats, not 3$"):
        GAME.new_state(None, 3)


def test_a_short_first_turn_ends_after_its_moves_and_shows_them_left() -> None:
    """Seat 0's single move ends its turn; seat 1 of four is shown two moves left, and its
    observation says so (what the strategy bot plans its turn with)."""
    state, _ = dealt(4, 3)
    assert state.moves_left == 1 and state.observation(0).strato_sphere.moves_left == 1
    act(state, reveal_action(0))
    assert state.current == 1 and state.turns == 1 and state.moves_left == 2
    assert state.observation(1).strato_sphere.moves_left == 2
    act(state, reveal_action(3))
    assert state.current == 1 and state.moves_left == 1


def v2_turn_unmoved(state: StratoSphereState) -> bool:
    """The v2 test of a turn with no move made yet, blind to the short first round."""
    return state.moves_left == MOVES_PER_TURN


def test_worlds_at_a_short_first_turn_count_the_pass_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Four seats, a real deal: seat 0 passes its one-move turn; seat 1 is to open its turn of
    two moves. Its view's worlds count the run of one pass (the dead-position rule reads it)
    and stand where the game stands. Control: the v2 test (three moves left means unmoved)
    reads the same view as a turn under way, and loses the pass."""
    state, events = dealt(4, 11)
    events += act(state, PASS)
    assert state.to_move() == (1,) and state.moves_left == 2 and state.passed_turns == 1
    view = view_of(state, 1, events)
    seen = state_seen(state.options, view)
    assert seen.passed_turns == 1 and seen.moves_left == 2 and seen.turn_unmoved()
    world = GAME.world_sampler(view).sample(random.Random(2))
    assert isinstance(world, StratoSphereState)
    assert (world.current, world.moves_left, world.turns) == (1, 2, 1)
    assert world.passed_turns == 1 and world.legal_actions(1) == state.legal_actions(1)
    monkeypatch.setattr(StratoSphereState, "turn_unmoved", v2_turn_unmoved)
    assert state_seen(state.options, view).passed_turns == 0
