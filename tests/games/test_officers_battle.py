"""The Officers' Battle engine against its rules (docs/games/officers-battle.md).

Random playouts with the generic invariants and card conservation at every step, determinism,
the information tests (observations and every event a seat receives), the seed's example as
assertions, series validity, and scripted scenarios for every named rule and every ruling.

The golden file tests/games/golden/officers-battle.txt is regenerated (after a deliberate rules
change, never to make a failure go away) with:

    ARENA_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/games/test_officers_battle.py -k golden
"""

from __future__ import annotations

import difflib
import os
import random
from collections import Counter
from itertools import combinations
from pathlib import Path

import pytest
from arena.v1 import officers_battle_pb2 as obpb
from arena_games import cards
from arena_games.base import CHANCE, Event, GameError, GameState, IllegalActionError, SeatView
from arena_games.legal_actions import legal_action_messages
from arena_games.match_messages import match_start_message
from arena_games.officers_battle import OFFICERS_BATTLE, OfficersBattleOptions, rules
from arena_games.officers_battle import state as st
from arena_games.officers_battle import view as ob_view
from arena_games.officers_battle.rules import NONE
from arena_games.officers_battle.state import OfficersBattleState
from arena_games.playout import sample_chance
from arena_games.tracking import random_views

from tests.games.invariants import (
    check_action_round_trip,
    check_determinism,
    check_history_round_trip,
    check_information,
    game_rngs,
    play_one,
    position_at,
    random_playouts,
)

GAME = OFFICERS_BATTLE
GOLDEN = Path(__file__).parent / "golden" / "officers-battle.txt"
GOLDEN_SEED = 20260311
NORTH, SOUTH = 0, 1
CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
WEST, CENTRE, EAST = 0, 1, 2

AnyState = GameState[OfficersBattleOptions]


def ob(state: AnyState) -> OfficersBattleState:
    assert isinstance(state, OfficersBattleState)
    return state


# -- building tables by hand ------------------------------------------------------------------


def cid(seat: int, token: str) -> int:
    """A card id: 'Kc' from the seat's own deck, 'Kc*' from the other seat's deck."""
    owner = 1 - seat if token.endswith("*") else seat
    return rules.card_id(owner, cards.parse(token.rstrip("*")))


def ids(seat: int, text: str) -> list[int]:
    return [cid(seat, t) for t in text.split()]


def one(seat: int, token: str) -> int:
    return NONE if token == "-" else cid(seat, token)


def table(
    north: dict[str, object],
    south: dict[str, object],
    *,
    current: int = NORTH,
    phase: int = st.ACTION,
    discard: str = "",
) -> OfficersBattleState:
    """A state arranged by hand, past the setup. Each side: front ('Kc Jd Qh', '-' for none),
    support, hand, piles (three strings), retreats (two strings, bottom first), and optionally
    deck and officer_deck (default: every own card not placed elsewhere)."""
    state = ob(GAME.new_state())
    used: set[int] = set()
    for seat, spec in ((NORTH, north), (SOUTH, south)):
        state.front[seat] = [one(seat, t) for t in str(spec.get("front", "- - -")).split()]
        state.support[seat] = one(seat, str(spec.get("support", "-")))
        state.hand[seat] = sorted(ids(seat, str(spec.get("hand", ""))))
        state.secret[seat] = {c for c in state.hand[seat] if c // 52 == seat}
        piles = spec.get("piles", ("", "", ""))
        state.piles[seat] = [ids(seat, p) for p in piles]  # type: ignore[attr-defined]
        retreats = spec.get("retreats", ("", ""))
        state.retreats[seat] = [ids(seat, r) for r in retreats]  # type: ignore[attr-defined]
        used |= {c for c in state.front[seat] + [state.support[seat]] if c != NONE}
        used |= set(state.hand[seat])
        used |= {c for pile in state.piles[seat] for c in pile}
        used |= {c for stack in state.retreats[seat] for c in stack}
    state.discard = [cid(NORTH, t) for t in discard.split()]
    used |= set(state.discard)
    for seat, spec in ((NORTH, north), (SOUTH, south)):
        state.deck[seat] = (
            sorted(ids(seat, str(spec["deck"])))
            if "deck" in spec
            else [c for c in rules.number_cards_of(seat) if c not in used]
        )
        state.officer_deck[seat] = (
            sorted(ids(seat, str(spec["officer_deck"])))
            if "officer_deck" in spec
            else [c for c in rules.officers_of(seat) if c not in used]
        )
    state.chance = st.NO_CHANCE
    state.phase = phase
    state.current = current
    state.turn_number = 1
    state.settle()
    return state


def labels(state: OfficersBattleState) -> list[str]:
    return [state.action_label(a) for a in state.legal_actions(state.current)]


def do(state: OfficersBattleState, label: str) -> list[Event]:
    """Apply the current seat's legal action with this label."""
    for action in state.legal_actions(state.current):
        if state.action_label(action) == label:
            return state.apply(state.current, action)
    raise AssertionError(f"{label!r} not legal; legal: {labels(state)}")


def deal(state: OfficersBattleState, token: str, seat: int | None = None) -> list[Event]:
    """Resolve the pending chance step with a named card of the drawing seat's deck."""
    owner = state.current if seat is None else seat
    return state.apply_chance(cid(owner, token))


def kinds(events: list[Event]) -> list[str]:
    return [str(e.message.officers_battle.WhichOneof("kind")) for e in events]


# The seed's example picture, rebuilt from its eight statements (see the rules page).
EXAMPLE_NORTH = {"front": "Kc Jd Qh", "support": "Qs"}
EXAMPLE_SOUTH = {"front": "Jc Ks Jh", "support": "Qc"}


# -- conservation and the generic invariants --------------------------------------------------


def check_conservation(state: OfficersBattleState) -> None:
    """Each seat's 52 cards are somewhere, exactly once."""
    places: list[int] = [*state.discard, *state.series_cards]
    for seat in range(2):
        places += state.deck[seat] + state.officer_deck[seat] + state.hand[seat]
        places += [o for o in state.front[seat] if o != NONE]
        places += [c for pile in state.piles[seat] for c in pile]
        places += [state.support[seat]] if state.support[seat] != NONE else []
        places += [o for stack in state.retreats[seat] for o in stack]
        places += [c for pair in state.fallen[seat] for c in pair]
        fallen = state.casualty[seat]
        if fallen is not None:
            places += [fallen[1], *fallen[2]]
    counts = Counter(places)
    assert sorted(counts) == list(range(104)), "a card is missing"
    assert max(counts.values()) == 1, f"cards in two places: {counts.most_common(3)}"
    assert state.secret[0] <= set(state.hand[0]) and state.secret[1] <= set(state.hand[1])
    assert all(c // 52 == seat for seat in range(2) for c in state.secret[seat])


def per_step(generic: AnyState) -> None:
    state = ob(generic)
    check_conservation(state)
    if state.to_move():
        assert len(state.legal_actions(state.current)) < 200


def test_random_playouts_keep_every_invariant() -> None:
    finals = random_playouts(GAME, 30, seed=11, per_step=per_step, thorough_games=4)
    reasons = Counter(ob(f).over_reason.split(";")[0] for f in finals)
    assert sum(reasons.values()) == 30


def test_action_messages_map_back_on_sampled_states() -> None:
    seen = 0

    def after(generic: AnyState, _events: list[Event]) -> None:
        nonlocal seen
        seen += 1
        if seen % 11 == 0 and generic.to_move():
            check_action_round_trip(generic, generic.to_move()[0])

    play_one(GAME, *game_rngs(3, 0), after_step=after)


def test_same_seed_same_game_even_with_global_random_disturbed() -> None:
    assert check_determinism(GAME, 5) == check_determinism(GAME, 5)
    assert check_determinism(GAME, 6) != check_determinism(GAME, 5)


def test_options_and_seats() -> None:
    with pytest.raises(Exception, match="officers-battle"):
        GAME.new_state(None, 3)
    with pytest.raises(Exception, match="bad options"):
        GAME.options({"variant": 1})
    assert GAME.decision_cap == rules.DECISION_CAP == 3000


# -- information ------------------------------------------------------------------------------


def test_resampling_changes_nothing_a_seat_can_see() -> None:
    rng = random.Random(8)
    steps = 0

    def after(generic: AnyState, _events: list[Event]) -> None:
        nonlocal steps
        steps += 1
        if steps % 29 == 0:
            check_information(GAME, generic, rng, 2)

    for index in range(2):
        play_one(GAME, *game_rngs(21, index), after_step=after)


def _mid_series_state() -> OfficersBattleState:
    """A seeded random game stopped while a seat is laying a series."""
    for index in range(40):
        chance_rng, policy_rng = game_rngs(77, index)
        state = ob(GAME.new_state())
        while not state.is_over():
            if state.is_chance():
                state.apply_chance(sample_chance(state.chance_outcomes(), chance_rng))
                continue
            legal = state.legal_actions(state.current)
            state.apply(state.current, legal[int(policy_rng.random() * len(legal))])
            if state.phase == st.SERIES and state.secret[state.current]:
                return state
    raise AssertionError("no series in 40 games")


def test_resampling_mid_series_keeps_the_series_finishable() -> None:
    state = _mid_series_state()
    check_information(GAME, state, random.Random(4), 5)
    builder = state.current
    for seed in range(10):
        world = ob(state.resample(1 - builder, random.Random(seed)))
        assert world.legal_actions(builder), "a re-dealt hand cannot finish the series"


def _visible(events: list[Event], seat: int) -> list[bytes]:
    return [e.message.SerializeToString(deterministic=True) for e in events if e.visible_to(seat)]


def play_steps(seed: int, index: int, steps: int) -> OfficersBattleState:
    """A seeded random game stopped after a number of steps (or at its end)."""
    chance_rng, policy_rng = game_rngs(seed, index)
    state = ob(GAME.new_state())
    while not state.is_over() and len(state.history) < steps:
        if state.is_chance():
            state.apply_chance(sample_chance(state.chance_outcomes(), chance_rng))
        else:
            legal = state.legal_actions(state.current)
            state.apply(state.current, legal[int(policy_rng.random() * len(legal))])
    return state


def test_every_event_and_observation_a_seat_gets_survives_resampling() -> None:
    """Replay the real history and a re-dealt one (what the seat cannot see changed): at every
    step the seat receives the same events and the same observation."""
    for index, steps in enumerate((150, 400, 700)):
        stopped = play_steps(31, index, steps)
        for seat in (NORTH, SOUTH):
            world = stopped.resample(seat, random.Random(index))
            if stopped.secret[1 - seat] - set(world.hand[1 - seat]):
                assert world.history != stopped.history, "the re-deal rewrote no draw"
            real, other = GAME.new_state(), GAME.new_state()
            for mine, theirs in zip(stopped.history, world.history, strict=True):
                ours = _visible(real.apply_step(mine), seat)
                assert ours == _visible(other.apply_step(theirs), seat)
                assert real.observation(seat) == other.observation(seat)
                assert real.observation(None) == other.observation(None)
            assert other == world


def test_observations_hide_the_other_hand_and_own_draws_reach_only_the_drawer() -> None:
    def after(generic: AnyState, events: list[Event]) -> None:
        state = ob(generic)
        spectator = state.observation(None).officers_battle
        assert not spectator.hand and not spectator.HasField("seat")
        for seat in (NORTH, SOUTH):
            mine = state.observation(seat).officers_battle
            assert sorted(cards.from_message(c) for c in mine.hand) == sorted(
                rules.standard(c) for c in state.hand[seat]
            )
            other = mine.sides[1 - seat]
            seen = [c for c in state.hand[1 - seat] if c not in state.secret[1 - seat]]
            assert sorted(cards.from_message(c) for c in other.known_hand) == sorted(
                rules.standard(c) for c in seen
            )
            assert other.hand_size == len(state.hand[1 - seat])
        for event in events:
            message = event.message.officers_battle
            if message.WhichOneof("kind") != "card_drawn":
                continue
            drawn = message.card_drawn
            from_deck = drawn.source == obpb.OFFICERS_BATTLE_SOURCE_OWN_DECK
            if from_deck and drawn.HasField("card"):
                assert event.audience == frozenset([drawn.seat])
            else:
                assert event.public

    play_one(GAME, *game_rngs(41, 0), after_step=after)


# -- worlds from a seat's view, and resample ---------------------------------------------------


def view_of(state: OfficersBattleState, seat: int) -> SeatView:
    """What a seat at a table arranged by hand was told: its MatchStart, an event to it alone
    for each own card out of its deck (it drew them all), its observation and legal actions."""
    start = match_start_message(GAME, state.options, seat, ["north", "south"], "table")
    drawn = [c for c in rules.number_cards_of(seat) if c not in state.deck[seat]]
    events = tuple(ob_view.drawn_privately_event(0, seat, False, c) for c in drawn)
    legal = tuple(legal_action_messages(state, seat))
    return SeatView(start, events, state.observation(seat), legal)


def worlds(state: OfficersBattleState, seat: int, count: int) -> list[OfficersBattleState]:
    sampler = GAME.world_sampler(view_of(state, seat))
    rng = random.Random(3)
    return [ob(sampler.sample(rng)) for _ in range(count)]


def test_a_card_on_view_belongs_to_the_deck_the_seat_did_not_draw_it_from() -> None:
    """The wire names a card by rank and suit only: a 7h on North's pile is North's own copy
    when North drew its 7h (so South's 7h is unseen and may be in South's hand), and South's
    copy when North never drew its own (so no world gives South a 7h, and North's 7h is still
    in North's deck)."""
    south = {**EXAMPLE_SOUTH, "hand": "2c 3c 4c"}
    drawn = table({**EXAMPLE_NORTH, "piles": ("7h", "", "")}, dict(south))
    not_drawn = table({**EXAMPLE_NORTH, "piles": ("7h*", "", "")}, dict(south))
    seven = rules.standard(cid(SOUTH, "7h"))
    held = [seven in map(rules.standard, w.hand[SOUTH]) for w in worlds(drawn, NORTH, 300)]
    assert any(held), "South's unseen 7h is never dealt to its hand"
    for world in worlds(not_drawn, NORTH, 300):
        assert cid(SOUTH, "7h") not in world.hand[SOUTH]
        assert cid(NORTH, "7h") in world.deck[NORTH]
        assert world.piles[NORTH][WEST] == [cid(SOUTH, "7h")]


def test_worlds_keep_every_card_of_the_view_where_the_truth_has_it() -> None:
    """Over every decision of three random games: each world has both officer decks, the
    seat's own deck and the other seat's cards nobody has seen (its unseen hand and deck
    together) exactly as the truth, and the same turn (the pass of the action phase, which
    the observation shows only through phase 4 with nothing played and no regroup)."""
    for seed in range(3):
        for truth, seen in random_views(GAME, 2, 500 + seed):
            state, seat = ob(truth), seen.seat
            other = 1 - seat
            world = ob(GAME.world_sampler(seen).sample(random.Random(seed)))
            assert world.officer_deck == state.officer_deck
            assert world.deck[seat] == state.deck[seat]
            assert sorted(world.secret[seat]) == sorted(state.secret[seat])
            unseen = set(world.deck[other]) | world.secret[other]
            assert unseen == set(state.deck[other]) | state.secret[other]
            assert [getattr(world, n) for n in st._SCALARS] == [
                getattr(state, n) for n in st._SCALARS
            ]


def test_the_pass_of_the_action_phase_is_read_from_the_turn() -> None:
    """With the own deck empty and the previous turn idle, North draws nothing and passes:
    in every world, bringing the retreated officer back in phase 4 ends the game (two idle
    turns). After a battle instead, the same phase 4 does not end it."""
    north = {**EXAMPLE_NORTH, "support": "-", "deck": "", "retreats": ("Ks", ""), "hand": "2c"}
    discard = elsewhere(NORTH, "2c")
    passed = table(north, dict(EXAMPLE_SOUTH), phase=st.DRAW, discard=discard)
    fought = table(north, dict(EXAMPLE_SOUTH), phase=st.DRAW, discard=discard)
    for state in (passed, fought):
        state.previous_idle = True
        do(state, "no draw")
    do(passed, "pass")
    for label in ("play 2c W", "end battle", "no draw"):
        do(fought, label)
    for state, ends in ((passed, True), (fought, False)):
        assert state.phase == st.SPECIAL_SUPPORT
        for world in [*worlds(state, NORTH, 5), state]:
            do(world, "support from retreat 1")
            assert world.is_over() == ends


def test_a_view_is_read_at_the_seats_own_decision() -> None:
    """A world is built from an observation sent with a request to the seat: South's view
    while North decides is refused with a clear error."""
    state = table(dict(EXAMPLE_NORTH), dict(EXAMPLE_SOUTH))
    with pytest.raises(GameError, match="own decisions"):
        GAME.world_sampler(view_of(state, SOUTH))


def elsewhere(seat: int, text: str) -> str:
    """The seat's own number cards not in text, as a discard pile: where a table puts them
    so that every card of a view is somewhere."""
    out = set(ids(seat, text))
    return " ".join(rules.label(c) for c in rules.number_cards_of(seat) if c not in out)


def _laying_from_two(hand: str, deck: str) -> OfficersBattleState:
    """North lays a heart series from 2h at West; its number cards not in its hand, its deck
    or the series are on the discard pile."""
    north = {**EXAMPLE_NORTH, "hand": hand, "deck": deck}
    discard = elsewhere(NORTH, f"{hand} {deck} 2h")
    state = table(north, dict(EXAMPLE_SOUTH), discard=discard)
    state.phase, state.series_position, state.series_suit = st.SERIES, WEST, HEARTS
    state.series_cards = [cid(NORTH, "2h")]
    state.played[WEST], state.kill_position = st.PLAYED_KILL, WEST
    state.settle()
    return state


def test_resampling_mid_series_never_returns_the_true_hand_for_want_of_a_deal() -> None:
    """North's series from 2h needs 3h 4h 5h in its hand of five: one deal in 650 of its 35
    unseen cards has them. Every resample holds them, and the true hand (one of 496 such
    hands) comes back about as rarely as any other: the old resample gave up after 200
    tries and returned the true hand, three times in four here."""
    hand = "3h 4h 5h 9c 9d"
    deck = elsewhere(NORTH, f"{hand} 2h Ac Ad Ah As")
    state = _laying_from_two(hand, deck)
    assert len(state.deck[NORTH]) == 30
    rng = random.Random(6)
    hands = [tuple(ob(state.resample(SOUTH, rng)).hand[NORTH]) for _ in range(300)]
    assert all(set(ids(NORTH, "3h 4h 5h")) <= set(hand) for hand in hands)
    assert hands.count(tuple(state.hand[NORTH])) < 10
    assert len(set(hands)) > 150


def test_resampling_mid_series_is_uniform_over_the_hands_that_can_finish_it() -> None:
    """Against full enumeration: North's four unseen cards come from nine (3h..7h, an ace,
    9c 9d 2d); every set of four with which the series from 2h can be finished is dealt
    equally often (a chi-square bound), and no other set ever."""
    state = _laying_from_two("3h 4h 5h 9c", "6h 7h Ah 9d 2d")
    pool = sorted(state.secret[NORTH] | set(state.deck[NORTH]))
    assert len(pool) == 9
    finishing = []
    for hand in combinations(pool, 4):
        trial = state.clone()
        trial.hand[NORTH], trial.secret[NORTH] = list(hand), set(hand)
        trial.hand_bits[NORTH] = rules.card_mask(list(hand))
        if trial._series_choices():
            finishing.append(hand)
    rng = random.Random(2)
    draws = 100 * len(finishing)
    counts = Counter(tuple(ob(state.resample(SOUTH, rng)).hand[NORTH]) for _ in range(draws))
    assert set(counts) == set(finishing)
    chi2 = sum((counts[hand] - 100) ** 2 / 100 for hand in finishing)
    df = len(finishing) - 1
    assert chi2 < df + 5 * df**0.5, (chi2, df)


# -- the seed's example -----------------------------------------------------------------------


def test_the_seed_example_as_playable_suits() -> None:
    kc, jd, qh, qs = ids(NORTH, "Kc Jd Qh Qs")
    jc, ks, jh, qc = ids(SOUTH, "Jc Ks Jh Qc")
    suits = rules.playable_suits
    # North may play Clubs on the West flank (K outranks J).
    assert CLUBS in suits(kc, qs, jc, False)
    # North may play Diamonds in the centre (the opposing K is of a different suit).
    assert DIAMONDS in suits(jd, qs, ks, False)
    # North may play Hearts on the East flank (Q outranks J).
    assert HEARTS in suits(qh, qs, jh, False)
    # North may play Spades on the West or East flank with the support officer, not the centre.
    assert SPADES in suits(kc, qs, jc, True) and SPADES not in suits(kc, qs, jc, False)
    assert SPADES in suits(qh, qs, jh, True) and SPADES not in suits(qh, qs, jh, False)
    assert SPADES not in suits(jd, qs, ks, True)
    # South may play Clubs on the West flank only with the support officer (the pair).
    assert CLUBS not in suits(jc, qc, kc, False) and CLUBS in suits(jc, qc, kc, True)
    # South may play Spades in the centre (the opposing officer is of a different suit).
    assert SPADES in suits(ks, qc, jd, False)
    # South may not play Hearts on the East flank (J is outranked by the Q).
    assert HEARTS not in suits(jh, qc, qh, True)
    # South may play Clubs in the centre or on the East flank with the support officer.
    assert CLUBS in suits(ks, qc, jd, True) and CLUBS in suits(jh, qc, qh, True)


def _plays(state: OfficersBattleState) -> set[str]:
    return {label for label in labels(state) if label.startswith("play ")}


def test_the_seed_example_on_the_table() -> None:
    north = table({**EXAMPLE_NORTH, "hand": "5c 5d 5h 5s"}, dict(EXAMPLE_SOUTH), current=NORTH)
    assert _plays(north) == {"play 5c W", "play 5d C", "play 5h E", "play 5s W", "play 5s E"}
    south = table(dict(EXAMPLE_NORTH), {**EXAMPLE_SOUTH, "hand": "5c 6c 5s 5h 5d"}, current=SOUTH)
    assert _plays(south) == {
        "play 5c W",
        "play 6c W",
        "play 5c C",
        "play 6c C",
        "play 5c E",
        "play 6c E",
        "play 5s C",
    }
    # The support plays at one position a turn: clubs at West uses it up for the others.
    do(south, "play 5c W")
    assert _plays(south) == {"play 5s C"}


# -- the playable-suit test and the play rules ------------------------------------------------


def test_the_support_never_defends_and_identical_officers_both_play() -> None:
    state = table(
        {"front": "Jc Qd Qh", "support": "Kc", "hand": "5c"},
        {"front": "Qc Qd Kh", "support": "Ks", "hand": "5c 5d"},
        current=SOUTH,
    )
    # North's support Kc does not defend West: South's Qc outranks North's Jc.
    assert _plays(state) == {"play 5c W", "play 5d C"}
    assert rules.playable_suits(cid(NORTH, "Qd"), cid(NORTH, "Kc"), cid(SOUTH, "Qd"), False) == {
        DIAMONDS
    }


def test_empty_positions_cannot_be_played_by_either_side() -> None:
    north = table({"front": "Kc - Qh", "hand": "5c 5h 5d"}, {"front": "Jc Qd Jh"})
    assert _plays(north) == {"play 5c W", "play 5h E"}
    south = table({"front": "Kc - Qh"}, {"front": "Jc Qd Jh", "hand": "5d"}, current=SOUTH)
    assert _plays(south) == set()
    assert labels(south) == ["pass"], "the lone answer of the action phase is still asked"


def test_singles_go_on_equal_or_higher_and_the_two_goes_both_ways() -> None:
    state = table(
        {"front": "Kc Jd Qh", "hand": "2c 5c 9c Tc Ac", "piles": ("9c*", "", "")},
        {"front": "Jc Ks Jh"},
    )
    assert {p for p in _plays(state) if p.endswith("W")} == {
        "play 2c W",
        "play 9c W",
        "play Tc W",
        "play Ac W",
    }
    on_two = table(
        {"front": "Kc Jd Qh", "hand": "3c 5c", "piles": ("Ac 2c", "", "")}, {"front": "Jc Ks Jh"}
    )
    assert _plays(on_two) == {"play 3c W", "play 5c W"}
    assert rules.can_play_on(2, 14) and rules.can_play_on(3, 2) and not rules.can_play_on(9, 14)


def test_one_play_per_position_and_end_battle() -> None:
    state = table({"front": "Kc Jd Qh", "hand": "3c 4c 5d"}, {"front": "Jc Ks Jh"})
    do(state, "play 3c W")
    assert "play 4c W" not in labels(state)
    assert labels(state)[0] == "end battle" and "pass" not in labels(state)
    assert not any(label.startswith("retreat") for label in labels(state))
    do(state, "play 5d C")
    assert labels(state) == ["end battle"], "asked even with one answer: it depends on the hand"


def test_ace_kills_alone_but_not_an_officer_of_its_own_suit() -> None:
    state = table({**EXAMPLE_NORTH, "hand": "Ac Ad Ah As"}, dict(EXAMPLE_SOUTH), current=NORTH)
    kills = {label for label in labels(state) if label.startswith("kill")}
    # West Jc (clubs): Ac may not kill it, As (with the support) may. Centre Ks: Ad kills;
    # As is blocked there. East Jh: Ah may not kill it, As may.
    assert kills == {"kill Ad C", "kill As W", "kill As E"}
    assert "play Ac W" in labels(state), "an ace may also be played as a plain single"


def test_a_kill_moves_the_officer_under_the_cards_and_allows_one_kill_a_turn() -> None:
    state = table(
        {**EXAMPLE_NORTH, "hand": "Ad 5h 6h 7h 8h 9s"}, dict(EXAMPLE_SOUTH), current=NORTH
    )
    events = do(state, "kill Ad C")
    assert kinds(events) == ["officer_killed"]
    assert state.front[SOUTH][CENTRE] == NONE
    assert state.casualty[SOUTH] == (CENTRE, cid(SOUTH, "Ks"), ids(NORTH, "Ad"))
    assert not any(label.startswith(("kill", "series")) for label in labels(state))
    assert "play 5h E" in labels(state)


# -- series -----------------------------------------------------------------------------------


def _mask(ranks: list[int]) -> int:
    return rules.rank_mask(ranks)


def test_series_validity_with_jokers_and_the_two_rule() -> None:
    done = rules.completable
    assert done(_mask([5]), 0, _mask([5, 6, 7, 8]), 0, 0)  # 5-6-7-8
    assert not done(_mask([5]), 0, _mask([5, 6, 7]), 0, 0)  # three is too few
    assert done(_mask([8]), 0, _mask([8, 9, 10]), 0, 0)  # 8-9-10 as three
    assert done(_mask([9]), 0, _mask([9, 10]), 1, 0)  # A-9-10 stands for 8-9-10
    assert not done(_mask([7]), 0, _mask([7, 8, 9]), 0, 0)  # 7-8-9 is not a series
    assert done(_mask([5]), 0, _mask([5, 7]), 2, 0)  # 5 A 7 A: the aces fill 6 and 8 (or 4)
    assert not done(_mask([2]), 0, _mask([2, 10]), 2, 0)  # no wrap: 10-A-2 is not a series
    assert not done(_mask([5]), 0, _mask([5, 6, 7, 8]), 0, 9)  # starts below the pile's 9
    assert done(_mask([3]), 0, _mask([2, 3, 4, 5]), 0, 9)  # a series from a 2 goes on anything
    assert done(_mask([6]), 0, _mask([6, 7, 8, 9]), 0, 2)  # anything goes on a 2
    assert not done(_mask([9]), 0, _mask([9, 10]), 2, 14)  # nothing but a 2 goes on an ace
    assert done(_mask([3]), 0, _mask([2, 3, 4, 5]), 0, 14)  # a series from a 2 does
    assert rules.finish_lows([], 4, None) == [], "a series needs a natural card"
    assert rules.finish_lows([5, 6, 7], 4, None) == [4, 5]
    assert rules.finish_lows([5, 6, 7], 4, 5) == [5]
    assert rules.finish_lows([9, 10], 3, None) == [8]
    assert rules.finish_lows([2, 3, 4, 5], 4, 9) == [2]


def test_series_validity_on_the_table() -> None:
    def starts(hand: str, pile: str = "") -> set[str]:
        state = table(
            {"front": "Kc Jd Qh", "hand": hand, "piles": (pile, "", "")}, {"front": "Jc Ks Jh"}
        )
        return {label for label in labels(state) if label.startswith("series") and "W" in label}

    assert starts("5c 6c 7c 8c") == {"series 5c W", "series 6c W", "series 7c W", "series 8c W"}
    assert starts("5c 6c 7c 8c", pile="9c") == set()
    assert starts("2c 3c 4c 5c", pile="9c") == {
        "series 2c W",
        "series 3c W",
        "series 4c W",
        "series 5c W",
    }
    assert starts("7c 8c 9c") == set()
    assert starts("9c Tc Ah") == {"series 9c W", "series Tc W"}, "an ace of another suit"
    assert starts("Ac Ad Ah As") == set(), "aces alone make no series"


def test_laying_a_series_card_by_card_and_the_aces_order() -> None:
    state = table({"front": "Kc Jd Qh", "hand": "6c 8c Ad As 3h"}, {"front": "Jc Ks Jh"})
    do(state, "series 6c W")
    assert state.phase == st.SERIES and state.series_cards == ids(NORTH, "6c")
    assert labels(state) == ["add 8c", "add Ad", "add As"]
    do(state, "add Ad")
    do(state, "add 8c")
    assert labels(state) == ["add As"], "three cards are too few: the series must go on"
    do(state, "add As")
    assert labels(state) == ["finish from 5", "finish from 6"]
    events = do(state, "finish from 6")
    # 6 7 8 9: the aces fill 7 then 9 in the order they were added; the last ace is on top.
    assert state.casualty[SOUTH] == (WEST, cid(SOUTH, "Jc"), ids(NORTH, "6c Ad 8c As"))
    killed = events[-1].message.officers_battle.officer_killed
    assert [cards.label(cards.from_message(c)) for c in killed.cards] == ["6c", "Ad", "8c", "As"]
    assert state.played[WEST] == st.PLAYED_KILL and state.kill_position == WEST


def test_series_and_the_support_officer() -> None:
    state = table({**EXAMPLE_NORTH, "hand": "5s 6s 7s 8s 9h"}, dict(EXAMPLE_SOUTH))
    assert {"series 5s W", "series 5s E"} <= set(labels(state))
    assert "series 5s C" not in labels(state)
    do(state, "series 5s E")
    assert state.support_used_at == EAST


# -- after the battle: bonus cards and the choice after a kill --------------------------------


def test_bonus_cards_per_single_position_from_deck_or_discard() -> None:
    state = table({"front": "Kc Jd Qh", "hand": "3c 5d 9h"}, {"front": "Jc Ks Jh"}, discard="7s 8s")
    do(state, "play 3c W")
    do(state, "play 5d C")
    do(state, "end battle")
    assert state.phase == st.BONUS and state.bonus_due == 2
    assert labels(state) == ["draw deck", "draw discard"]
    do(state, "draw discard")
    assert cid(NORTH, "8s") in state.hand[NORTH] and state.discard == ids(NORTH, "7s")
    do(state, "draw deck")
    assert state.is_chance()
    deal(state, "4h")
    assert state.current == SOUTH, "two bonus cards, then the turn ends"


def test_the_choice_after_a_kill_take_the_pile() -> None:
    state = table(
        {**EXAMPLE_NORTH, "hand": "Ad 4h", "piles": ("", "3d 4d", "")},
        dict(EXAMPLE_SOUTH),
        discard="7s",
    )
    do(state, "kill Ad C")
    do(state, "play 4h E")
    do(state, "end battle")
    do(state, "draw discard")  # the bonus for East comes first
    assert labels(state) == ["take pile", "bonus card"]
    events = do(state, "take pile")
    assert "pile_moved" in kinds(events)
    assert set(ids(NORTH, "3d 4d 7s")) <= set(state.hand[NORTH])
    assert state.piles[NORTH][CENTRE] == []


def test_the_choice_after_a_kill_bonus_card_then_the_pile_to_the_discard() -> None:
    state = table(
        {**EXAMPLE_NORTH, "hand": "Ad", "piles": ("", "3d 4d", "")},
        dict(EXAMPLE_SOUTH),
        discard="7s",
    )
    do(state, "kill Ad C")
    do(state, "end battle")
    do(state, "bonus card")
    do(state, "draw discard")
    # The bonus card is drawn before the pile goes onto the discard pile.
    assert cid(NORTH, "7s") in state.hand[NORTH]
    assert state.discard == ids(NORTH, "3d 4d") and state.piles[NORTH][CENTRE] == []


def test_the_kill_choice_is_offered_with_an_empty_pile() -> None:
    state = table({**EXAMPLE_NORTH, "hand": "Ad"}, dict(EXAMPLE_SOUTH))
    do(state, "kill Ad C")
    do(state, "end battle")
    assert labels(state) == ["take pile", "bonus card"]


# -- reform, regroup, phase 4 -----------------------------------------------------------------


def test_reform_after_a_series_kill() -> None:
    state = table(
        {**EXAMPLE_NORTH, "hand": "5h 6h 7h 8h"},
        {**EXAMPLE_SOUTH, "piles": ("", "", "9d"), "officer_deck": "Kd Qd"},
    )
    do(state, "series 5h E")
    for label in ("add 6h", "add 7h", "add 8h", "finish from 5"):
        do(state, label)
    do(state, "end battle")
    do(state, "bonus card")
    do(state, "draw deck")
    deal(state, "2c")
    assert state.current == SOUTH and state.is_chance(), "South's new support is drawn"
    assert state.fallen[SOUTH] == [(cid(SOUTH, "Jh"), cid(NORTH, "8h"))]
    assert state.discard == ids(NORTH, "5h 6h 7h"), "the rest of the series, top card on top"
    assert state.front[SOUTH] == ids(SOUTH, "Jc Ks Qc"), "the support moved to the gap"
    assert state.piles[SOUTH][EAST] == ids(SOUTH, "9d"), "the victim's pile stays"
    assert [o for o, _ in state.chance_outcomes()] == ids(SOUTH, "Qd Kd")
    events = deal(state, "Kd")
    assert state.support[SOUTH] == cid(SOUTH, "Kd") and state.phase == st.DRAW
    assert "officer_placed" in kinds(events)


def test_reform_with_an_empty_officer_deck_leaves_no_support() -> None:
    state = table(
        {**EXAMPLE_NORTH, "hand": "Ad"}, {**EXAMPLE_SOUTH, "officer_deck": ""}, discard="9s"
    )
    do(state, "kill Ad C")
    do(state, "end battle")
    do(state, "take pile")
    assert state.current == SOUTH and not state.is_chance()
    assert state.front[SOUTH] == ids(SOUTH, "Jc Qc Jh") and state.support[SOUTH] == NONE


def test_reform_fills_only_the_position_just_emptied() -> None:
    state = table(
        {**EXAMPLE_NORTH, "hand": "Ad"},
        {"front": "- Ks Jh", "support": "Qc", "officer_deck": ""},
        discard="9s",
    )
    do(state, "kill Ad C")
    do(state, "end battle")
    do(state, "take pile")
    assert state.current == SOUTH
    assert state.front[SOUTH] == [NONE, cid(SOUTH, "Qc"), cid(SOUTH, "Jh")]
    assert state.support[SOUTH] == NONE


def test_regroup_retreats_takes_the_pile_and_brings_a_new_support() -> None:
    state = table(
        dict(EXAMPLE_NORTH),
        {**EXAMPLE_SOUTH, "piles": ("4c 6c", "", ""), "retreats": ("", "Kh")},
        current=SOUTH,
    )
    assert {"retreat W to 1", "retreat W to 2"} <= set(labels(state))
    assert not any(label.startswith("retreat C") for label in labels(state)), "no pile at C"
    do(state, "retreat W to 1")
    assert state.retreats[SOUTH] == [ids(SOUTH, "Jc"), ids(SOUTH, "Kh")]
    assert set(ids(SOUTH, "4c 6c")) <= set(state.hand[SOUTH])
    assert state.front[SOUTH][WEST] == cid(SOUTH, "Qc")
    # The officer just retreated cannot come back as support at once.
    assert labels(state) == ["support from deck", "support from retreat 2"]
    do(state, "support from retreat 2")
    assert state.support[SOUTH] == cid(SOUTH, "Kh") and state.current == NORTH


def test_regroup_needs_a_support_and_four_living_officers() -> None:
    no_support = table(
        dict(EXAMPLE_NORTH),
        {"front": "Jc Ks Jh", "piles": ("4c", "", ""), "hand": "2d"},
        current=SOUTH,
    )
    assert not any(label.startswith("retreat") for label in labels(no_support))
    three = table(
        dict(EXAMPLE_NORTH),
        {"front": "Jc Ks -", "support": "Qc", "officer_deck": "", "piles": ("4c", "", "")},
        current=SOUTH,
    )
    assert three.living(SOUTH) == 3
    assert not any(label.startswith("retreat") for label in labels(three))


def test_regroup_with_four_officers_returns_the_retreated_one_in_phase_four() -> None:
    state = table(
        dict(EXAMPLE_NORTH),
        {**EXAMPLE_SOUTH, "officer_deck": "", "piles": ("4c", "", "")},
        current=SOUTH,
    )
    events = do(state, "retreat W to 2")
    # No officer deck and no other retreated officer: phase 4 brings Jc back as support.
    assert state.front[SOUTH][WEST] == cid(SOUTH, "Qc")
    assert labels(state) == ["support from retreat 2"], "a lone answer is still asked"
    events += do(state, "support from retreat 2")
    assert state.support[SOUTH] == cid(SOUTH, "Jc") and state.retreats[SOUTH] == [[], []]
    assert kinds(events).count("officer_moved") == 3
    assert state.current == NORTH


def test_phase_four_lets_the_player_pick_the_retreated_officer() -> None:
    state = table(
        {"front": "Kc Jd Qh", "support": "-", "officer_deck": "", "retreats": ("Qs", "Kd Ks")},
        dict(EXAMPLE_SOUTH),
        phase=st.ACTION,
    )
    do(state, "pass")
    assert labels(state) == ["support from retreat 1", "support from retreat 2"]
    do(state, "support from retreat 2")
    assert state.support[NORTH] == cid(NORTH, "Ks") and state.retreats[NORTH][1] == ids(NORTH, "Kd")


# -- drawing ----------------------------------------------------------------------------------


def test_the_draw_must_be_taken_while_the_own_deck_lasts() -> None:
    state = table(dict(EXAMPLE_NORTH), dict(EXAMPLE_SOUTH), phase=st.DRAW, discard="9h")
    assert labels(state) == ["draw deck", "draw discard"]
    empty = table({**EXAMPLE_NORTH, "deck": ""}, dict(EXAMPLE_SOUTH), phase=st.DRAW, discard="9h")
    assert labels(empty) == ["draw discard", "no draw"]
    do(empty, "no draw")
    assert empty.passed_draw and empty.phase == st.ACTION


def test_forced_decisions_are_still_asked() -> None:
    """Forced decisions are still asked. A decision with a single legal action goes to the bot
    like any other: answering for it at once would tell the other seats, through timing, what
    that seat could not do.

    Rules version officers-battle/2 drew from the deck (empty discard pile) and drew the lone
    bonus card itself; now both are decisions of the seat, in the history."""
    state = table(dict(EXAMPLE_NORTH), dict(EXAMPLE_SOUTH), phase=st.DRAW)
    assert not state.is_chance() and state.to_move() == (NORTH,)
    assert labels(state) == ["draw deck"]
    do(state, "draw deck")
    assert state.history[-1].seat == NORTH and state.is_chance()
    state = table({**EXAMPLE_NORTH, "hand": "2c"}, dict(EXAMPLE_SOUTH))
    do(state, "play 2c W")
    do(state, "end battle")
    assert state.to_move() == (NORTH,) and labels(state) == ["draw deck"], "the bonus draw"
    do(state, "draw deck")
    assert state.is_chance()


def test_the_seen_copy_leaves_the_hand_first() -> None:
    state = table({**EXAMPLE_NORTH, "hand": "7h 7h*"}, dict(EXAMPLE_SOUTH))
    assert state.secret[NORTH] == {cid(NORTH, "7h")}
    do(state, "play 7h E")
    assert state.piles[NORTH][EAST] == [cid(NORTH, "7h*")]
    assert state.hand[NORTH] == [cid(NORTH, "7h")]


# -- setup ------------------------------------------------------------------------------------


def test_setup_reshuffles_when_three_officers_share_a_rank() -> None:
    state = ob(GAME.new_state())
    assert [o for o, _ in state.chance_outcomes()] == rules.officers_of(NORTH)
    for token in ("Kc", "Qd", "Kh"):
        deal(state, token, NORTH)
    events = deal(state, "Ks", NORTH)
    assert kinds(events) == ["officer_placed", "reshuffled"]
    assert state.officer_deck[NORTH] == rules.officers_of(NORTH)
    assert state.front[NORTH] == [NONE] * 3 and state.support[NORTH] == NONE
    for token in ("Kc", "Kd", "Qc", "Qd"):  # two pairs are fine
        deal(state, token, NORTH)
    assert state.front[NORTH] == ids(NORTH, "Qc Kd Kc") and state.support[NORTH] == cid(NORTH, "Qd")
    assert [o for o, _ in state.chance_outcomes()] == rules.officers_of(SOUTH)
    for token in ("Jc", "Jd", "Jh", "Js"):
        deal(state, token, SOUTH)
    assert state.setup_seat == SOUTH and state.front[SOUTH] == [NONE] * 3
    for token in ("Jc", "Qd", "Kh", "Js"):
        deal(state, token, SOUTH)
    for seat in (NORTH, SOUTH):
        for token in ("2c", "3c", "4c", "5c", "6c"):
            deal(state, token, seat)
    assert state.phase == st.DRAW and state.current == NORTH and state.turn_number == 1
    assert len(state.officer_deck[NORTH]) == len(state.officer_deck[SOUTH]) == 8
    assert rules.needs_reshuffle(ids(NORTH, "Kc Kd Kh Ks"))
    assert not rules.needs_reshuffle(ids(NORTH, "Kc Kd Qh Qs"))


def test_setup_order_follows_the_seed_east_centre_west_then_support() -> None:
    """Setup order follows the seed: officers are placed East, Centre, West, then Support.

    ("Place the officers from East to West, then support.") For both seats, each placement's
    event names the slot, and the table ends up with the first officer at East."""
    state = ob(GAME.new_state())
    slots: list[int] = []
    for seat, tokens in ((NORTH, ("Jc", "Qd", "Kh", "Js")), (SOUTH, ("Kc", "Jd", "Qh", "Ks"))):
        for token in tokens:
            (event,) = deal(state, token, seat)
            slots.append(event.message.officers_battle.officer_placed.slot)
        west, centre, east, support = tokens[2], tokens[1], tokens[0], tokens[3]
        assert state.front[seat] == ids(seat, f"{west} {centre} {east}")
        assert state.support[seat] == cid(seat, support)
    order = [
        obpb.OFFICERS_BATTLE_SLOT_EAST,
        obpb.OFFICERS_BATTLE_SLOT_CENTRE,
        obpb.OFFICERS_BATTLE_SLOT_WEST,
        obpb.OFFICERS_BATTLE_SLOT_SUPPORT,
    ]
    assert slots == order * 2
    assert rules.RULES_VERSION == "officers-battle/3"


def test_a_game_with_reshuffles_replays_from_its_history() -> None:
    reshuffles = 0

    def count(_state: AnyState, events: list[Event]) -> None:
        nonlocal reshuffles
        reshuffles += kinds(events).count("reshuffled")

    for index in range(30):
        final = play_one(GAME, *game_rngs(5, index), after_step=count)
        if reshuffles:
            officers = [s for s in final.history if s.seat == CHANCE and rules.is_officer(s.action)]
            assert len(officers) > 8, "the returned officers were dealt again"
            check_history_round_trip(GAME, final)
            return
    raise AssertionError("no reshuffle in 30 games")


# -- the end and the score --------------------------------------------------------------------


def test_a_player_who_loses_all_officers_ends_the_game_at_the_end_of_the_turn() -> None:
    state = table(
        {**EXAMPLE_NORTH, "hand": "Ad 5h"},
        {"front": "- Ks -", "officer_deck": "", "hand": "2c 3c"},
    )
    do(state, "kill Ad C")
    assert not state.is_over(), "the battle goes on to its end"
    do(state, "end battle")
    do(state, "bonus card")
    do(state, "draw deck")
    deal(state, "9c")
    assert state.is_over()
    result = state.result()
    assert "seat 1 has lost all its officers" in result.reason
    # North: four officers on the table and eight in the officer deck; South's hand holds 2.
    assert result.scores == (5 * 12 + 2, 0 + 2)
    assert result.ranks == (0, 1)


def test_two_idle_turns_in_a_row_end_the_game() -> None:
    state = table(
        {**EXAMPLE_NORTH, "deck": "", "hand": "9d"},
        {**EXAMPLE_SOUTH, "deck": "", "hand": "2h 3h"},
        phase=st.DRAW,
    )
    # No deck and no discard: North's only answer is no draw, still asked.
    assert labels(state) == ["no draw"]
    do(state, "no draw")
    assert state.passed_draw and labels(state) == ["pass", "play 9d C"]
    do(state, "pass")
    assert state.current == SOUTH and state.previous_idle
    do(state, "no draw")
    assert labels(state) == ["pass"]
    do(state, "pass")
    assert state.is_over()
    assert "both players passed" in state.result().reason
    assert state.result().scores == (5 * 12 + 2, 5 * 12 + 1)


def test_a_turn_with_a_play_breaks_the_run_of_idle_turns() -> None:
    state = table(
        {**EXAMPLE_NORTH, "deck": "", "hand": "9d"},
        {**EXAMPLE_SOUTH, "deck": "", "hand": "2c"},
        phase=st.DRAW,
    )
    do(state, "no draw")
    do(state, "pass")
    do(state, "no draw")
    do(state, "play 2c C")
    do(state, "end battle")
    do(state, "no draw")  # no bonus card: no deck, no discard
    assert not state.is_over() and not state.previous_idle and state.current == NORTH


def test_the_decision_cap_scores_the_game() -> None:
    state = table({**EXAMPLE_NORTH, "hand": "5c"}, {**EXAMPLE_SOUTH, "hand": "2d 3d 4d"})
    state.decisions = rules.DECISION_CAP - 1
    do(state, "pass")
    assert state.is_over() and "decision cap" in state.result().reason
    assert state.result().scores == (60 + 3, 60 + 1)


def test_scores_count_every_living_officer() -> None:
    state = table(
        {"front": "Kc - Qh", "support": "-", "retreats": ("Qs", ""), "officer_deck": "Jd"},
        {**EXAMPLE_SOUTH, "officer_deck": "", "hand": "2c 3c 4c"},
    )
    assert state.living(NORTH) == 4 and state.living(SOUTH) == 4
    assert state.scores() == (5 * 4 + 3, 5 * 4 + 0)


# -- labels and the golden playthrough --------------------------------------------------------


def test_action_ids_and_labels() -> None:
    assert rules.action_label(rules.single_action(cards.parse("7h"), EAST)) == "play 7h E"
    assert rules.action_label(rules.start_action(cards.parse("Tc"), WEST)) == "series Tc W"
    assert rules.action_label(rules.ace_kill_action(cards.parse("As"), CENTRE)) == "kill As C"
    assert rules.action_label(rules.add_action(cards.parse("Ad"))) == "add Ad"
    assert rules.action_label(rules.finish_action(8)) == "finish from 8"
    assert rules.action_label(rules.retreat_action(CENTRE, 1)) == "retreat C to 2"
    every = list(_every_action())
    assert len({rules.action_label(a) for a in every}) == len(every)
    state = ob(GAME.new_state())
    assert all(state.action_message(a).WhichOneof("game") == "officers_battle" for a in every)
    with pytest.raises(IllegalActionError):
        state.apply(NORTH, rules.PASS)


def _every_action() -> list[int]:
    fixed = list(range(rules.DRAW_DECK, rules.SUPPORT_FROM_RETREAT + 2))
    retreats = [rules.retreat_action(p, r) for p in range(3) for r in range(2)]
    finishes = [rules.finish_action(low) for low in range(2, 11)]
    numbers = [c for c in cards.DECK if cards.rank(c) not in (11, 12, 13)]
    per_card = [
        make(c, p)
        for c in numbers
        for p in range(3)
        for make in (rules.single_action, rules.start_action, rules.ace_kill_action)
    ]
    return fixed + retreats + finishes + per_card + [rules.add_action(c) for c in numbers]


def golden_text(seed: int) -> str:
    lines = [
        f"# Officers' Battle, one seeded random game: game_rngs({seed}, 0) of tests/games/"
        "invariants.py",
        "# Regenerate: ARENA_UPDATE_GOLDEN=1 .venv/bin/python -m pytest "
        "tests/games/test_officers_battle.py -k golden",
    ]

    def after_step(generic: AnyState, events: list[Event]) -> None:
        step = generic.history[-1]
        number = len(generic.history) - 1
        if step.seat == CHANCE:
            lines.append(f"{number:4d} chance {rules.label(step.action)}")
        else:
            lines.append(f"{number:4d} seat {step.seat} {generic.action_label(step.action)}")
        for event in events:
            audience = "all" if event.audience is None else ",".join(map(str, event.audience))
            lines.append(f"       [{audience}] {event.message.text}")

    final = play_one(GAME, *game_rngs(seed, 0), after_step=after_step)
    result = final.result()
    lines += ["final", final.render(None)]
    lines.append(f"result ranks={list(result.ranks)} scores={list(result.scores)}")
    lines.append(f"reason {result.reason}")
    return "\n".join(lines) + "\n"


def test_golden_playthrough() -> None:
    text = golden_text(GOLDEN_SEED)
    if os.environ.get("ARENA_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text)
    assert GOLDEN.exists(), "no golden file: run with ARENA_UPDATE_GOLDEN=1"
    expected = GOLDEN.read_text()
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True), text.splitlines(keepends=True), "golden", "now"
            )
        )
        pytest.fail(f"the seeded playthrough changed:\n{diff[:4000]}")


def replays_to_itself(state: OfficersBattleState) -> bool:
    fresh = GAME.new_state(state.options, state.num_seats)
    try:
        for step in state.history:
            fresh.apply_step(step)
    except GameError:
        return False
    return fresh == state


@pytest.mark.parametrize("announced", [True, False], ids=["guarded", "control"])
def test_a_state_changed_by_hand_is_resampled_afresh(announced: bool) -> None:
    """resample keeps where each card was drawn in the history for its next call at the same
    history length, to rewrite the draws of the cards it deals away. A change by hand,
    announced by forget_legal_actions as the contract asks, must drop it: here the state is
    made, by hand, into another game's position of the same length, and its worlds' histories
    must still replay to them. The control makes the same change unannounced: the kept index,
    the first game's, rewrites the wrong steps."""
    state, elsewhere = ob(position_at(GAME, 1, 120)), ob(position_at(GAME, 2, 120))
    rng = random.Random(5)
    assert replays_to_itself(state.resample(0, rng))
    made = elsewhere.clone().__dict__
    state.__dict__.update({k: v for k, v in made.items() if not k.startswith("_drawn_at")})
    if announced:
        state.forget_legal_actions()
    worlds = [state.resample(0, rng) for _ in range(10)]
    assert all(replays_to_itself(world) for world in worlds) == announced
