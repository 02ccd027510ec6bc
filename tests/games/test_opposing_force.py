"""The Opposing Force engine against its rules (docs/games/opposing-force.md).

Random playouts with the generic invariants, determinism, the information test, the claim proof
against brute-force enumeration of the unseen cards, formation counts over every three-card
hand, scripted scenarios for every named rule and ruling, hidden information, and a golden
seeded playthrough.

The golden file tests/games/golden/opposing-force.txt is regenerated (after a deliberate rules
change, never to make a failure go away) with:

    ARENA_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/games/test_opposing_force.py -k golden
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from itertools import combinations, pairwise
from pathlib import Path

import pytest
from arena_games import cards
from arena_games.base import CHANCE, Event, GameState, IllegalActionError, OptionsError
from arena_games.opposing_force import (
    ANYTHING_ELSE,
    CLAIM_BASE,
    DECISION_CAP,
    FLUSH,
    OPPOSING_FORCE,
    PASS,
    PLAY_BASE,
    POSITIONS,
    STRAIGHT,
    STRAIGHT_FLUSH,
    THREE_OF_A_KIND,
    OpposingForceOptions,
    OpposingForceState,
    best_completion,
    best_completion_by_enumeration,
    claim_action,
    decode,
    formation_category,
    formation_value,
    play_action,
)
from google.protobuf.message import Message

from tests.games.invariants import (
    check_action_round_trip,
    check_determinism,
    check_history_round_trip,
    check_information,
    decisions_made,
    game_rngs,
    play_one,
    position_at,
    random_playouts,
    trajectory_hash,
)

GAME = OPPOSING_FORCE
GOLDEN = Path(__file__).parent / "golden" / "opposing-force.txt"
GOLDEN_SEED = 20240611
ALL_CARDS = list(range(52))

AnyState = GameState[OpposingForceOptions]


def of(state: AnyState) -> OpposingForceState:
    assert isinstance(state, OpposingForceState)
    return state


def cs(text: str) -> list[int]:
    """Cards named like 'Qh Ts 2c'."""
    return [cards.parse(t) for t in text.split()]


def table_cards(state: OpposingForceState) -> list[int]:
    return [c for sides in state.sides for side in sides for c in side]


def conserved(state: OpposingForceState) -> bool:
    """Hands, deck and every side hold exactly the 52 cards, each once."""
    return sorted([*state.hands[0], *state.hands[1], *state.deck, *table_cards(state)]) == ALL_CARDS


# -- an oracle for formations, written from the rules text --------------------------------------
OracleKey = tuple[int, int, int, int]


def oracle_key(three: Sequence[int]) -> OracleKey:
    """(category, ranks high to low): straight flush 4, three of a kind 3, flush 2, straight 1,
    anything else 0. Cards are suit * 13 + rank - 2; ace is 14 and high only."""
    ranks = sorted((c % 13 + 2 for c in three), reverse=True)
    same_suit = len({c // 13 for c in three}) == 1
    in_sequence = ranks[0] == ranks[1] + 1 == ranks[2] + 2
    if same_suit and in_sequence:
        category = 4
    elif ranks[0] == ranks[2]:
        category = 3
    elif same_suit:
        category = 2
    elif in_sequence:
        category = 1
    else:
        category = 0
    return (category, ranks[0], ranks[1], ranks[2])


Triple = tuple[int, int, int]


@cache
def triples() -> list[Triple]:
    return [(a, b, c) for a, b, c in combinations(ALL_CARDS, 3)]


@cache
def oracle_table() -> dict[Triple, OracleKey]:
    return {t: oracle_key(t) for t in triples()}


@cache
def value_table() -> dict[Triple, int]:
    """formation_value of every three-card hand, so enumerations are dictionary look-ups."""
    return {t: formation_value(t) for t in triples()}


def triple(cards_: Sequence[int]) -> Triple:
    a, b, c = sorted(cards_)
    return (a, b, c)


def completions(partial: Sequence[int], unseen: Sequence[int]) -> Iterator[Triple]:
    """Every way of completing partial to three cards with cards from unseen."""
    for extra in combinations(unseen, 3 - len(partial)):
        yield triple([*partial, *extra])


Ordering = tuple[list[Triple], dict[int, list[Triple]]]


@cache
def best_first(by_oracle: bool) -> Ordering:
    """Every three-card hand, best first (by the oracle's keys, or by formation_value), and
    for each card the hands that hold it, best first."""
    table: dict[Triple, OracleKey] | dict[Triple, int] = (
        oracle_table() if by_oracle else value_table()
    )
    order = sorted(triples(), key=table.__getitem__, reverse=True)
    by_card: dict[int, list[Triple]] = {c: [] for c in ALL_CARDS}
    for hand in order:
        for card in hand:
            by_card[card].append(hand)
    return order, by_card


def best_completion_triple(
    partial: Sequence[int], unseen: Sequence[int], by_oracle: bool
) -> Triple | None:
    """The best completion of partial with cards from unseen, None when there is none.

    Full enumeration, done fast: with two cards, every unseen third card; with fewer, every
    three-card hand that holds the partial, in order from the best, stopping at the first
    whose other cards are all unseen (no later hand can be better)."""
    if len(unseen) < 3 - len(partial):
        return None
    if len(partial) == 3:
        return triple(partial)
    if len(partial) == 2:
        table: dict[Triple, OracleKey] | dict[Triple, int] = (
            oracle_table() if by_oracle else value_table()
        )
        return max(completions(partial, unseen), key=table.__getitem__)
    order, by_card = best_first(by_oracle)
    pool = set(unseen).union(partial)
    candidates = by_card[partial[0]] if partial else order
    return next(hand for hand in candidates if pool.issuperset(hand))


def enumerated_best(partial: list[int], unseen: list[int]) -> int | None:
    """The best formation value over every completion, None when there is none."""
    best = best_completion_triple(partial, unseen, by_oracle=False)
    return None if best is None else value_table()[best]


def oracle_can_claim(state: OpposingForceState, seat: int, position: int) -> bool:
    """The claim ruling, by enumeration: the position is unclaimed, the claimant has three
    cards there, and either the opponent has three and the claimant's formation beats them
    (equal: the earlier completion wins), or no completion of the opponent's cards with cards
    not on the table beats the claimant's formation (equal goes to the claimant)."""
    if state.claimed_by[position] >= 0:
        return False
    mine, theirs = state.sides[seat][position], state.sides[1 - seat][position]
    if len(mine) < 3:
        return False
    keys = oracle_table()
    my_key = keys[triple(mine)]
    if len(theirs) == 3:
        their_key = keys[triple(theirs)]
        if my_key != their_key:
            return my_key > their_key
        return state.completed[seat][position] < state.completed[1 - seat][position]
    on_table = set(table_cards(state))
    unseen = [c for c in ALL_CARDS if c not in on_table]
    best = best_completion_triple(theirs, unseen, by_oracle=True)
    return best is None or keys[best] <= my_key


def literal_oracle_can_claim(state: OpposingForceState, seat: int, position: int) -> bool:
    """The same ruling against an incomplete side, word for word and slowly: any completion
    of the opponent's cards with cards not on the table that beats the claimant refutes it."""
    mine, theirs = state.sides[seat][position], state.sides[1 - seat][position]
    on_table = set(table_cards(state))
    unseen = [c for c in ALL_CARDS if c not in on_table]
    my_key = oracle_key(mine)
    extras = combinations(unseen, 3 - len(theirs))
    return not any(oracle_key([*theirs, *extra]) > my_key for extra in extras)


# -- scripting real sequences ---------------------------------------------------------------
class Script:
    """A game driven by chosen deals, draws and actions. The deal gives hand0[i] to seat 0
    and hand1[i] to seat 1, alternately; after a play the player draws the next card of its
    draws list, or else the lowest card of the deck that the script names nowhere."""

    def __init__(self, hand0: str, hand1: str, draws0: str = "", draws1: str = "") -> None:
        self.state = of(GAME.new_state())
        self.draws = [cs(draws0), cs(draws1)]
        named = cs(hand0) + cs(hand1) + self.draws[0] + self.draws[1]
        assert len(named) == len(set(named)), "a card named twice"
        self.named = set(named)
        for mine, theirs in zip(cs(hand0), cs(hand1), strict=True):
            self.state.apply_chance(mine)
            self.state.apply_chance(theirs)
        assert not self.state.is_chance() and self.state.to_move() == (0,)

    def legal(self, seat: int) -> list[int]:
        return self.state.legal_actions(seat)

    def claims(self, seat: int) -> list[int]:
        return [decode(a)[2] for a in self.legal(seat) if decode(a)[0] == "claim"]

    def claim(self, seat: int, position: int) -> list[Event]:
        assert self.state.to_move() == (seat,)
        return self.state.apply(seat, claim_action(position))

    def play(self, seat: int, card: str | int, position: int) -> list[Event]:
        """Play a card (named, or an id), then draw while the deck lasts."""
        assert self.state.to_move() == (seat,)
        chosen = cards.parse(card) if isinstance(card, str) else card
        events = self.state.apply(seat, play_action(chosen, position))
        if self.state.is_chance():
            if self.draws[seat]:
                drawn = self.draws[seat].pop(0)
            else:
                drawn = min(c for c in self.state.deck if c not in self.named)
            events += self.state.apply_chance(drawn)
        return events

    def play_lowest(self, seat: int, position: int) -> list[Event]:
        """Play the lowest card of the seat's hand."""
        return self.play(seat, min(self.state.hands[seat]), position)

    def pass_turn(self, seat: int) -> list[Event]:
        assert self.state.to_move() == (seat,)
        return self.state.apply(seat, PASS)


def layout(
    sides0: dict[int, str],
    sides1: dict[int, str],
    hand0: str,
    hand1: str,
    claimed: dict[int, int],
    current: int = 0,
) -> OpposingForceState:
    """A late position set up directly in the engine's fields (the deck empty): the named
    sides of unclaimed positions and hands; every other card is spread over the claimed
    positions, three to a side. Completion order follows the position order, seat 0 first."""
    state = of(GAME.new_state())
    state.deck = []
    state.hands = [sorted(cs(hand0)), sorted(cs(hand1))]
    state.sides = [[[] for _ in range(POSITIONS)] for _ in range(2)]
    for seat, named in enumerate((sides0, sides1)):
        for position, text in named.items():
            state.sides[seat][position] = cs(text)
    used = table_cards(state) + state.hands[0] + state.hands[1]
    assert len(used) == len(set(used)), "a card placed twice"
    rest = [c for c in ALL_CARDS if c not in set(used)]
    for position in sorted(claimed):
        state.claimed_by[position] = claimed[position]
        for seat in (0, 1):
            while rest and len(state.sides[seat][position]) < 3:
                state.sides[seat][position].append(rest.pop(0))
    assert not rest, f"cards left over: {[cards.label(c) for c in rest]}"
    for position in range(POSITIONS):
        for seat in (0, 1):
            if len(state.sides[seat][position]) == 3:
                state.completions += 1
                state.completed[seat][position] = state.completions
    state.current = current
    state.forget_legal_actions()
    assert conserved(state)
    return state


# -- random playouts --------------------------------------------------------------------------
class PlayoutChecks:
    """Opposing Force invariants after every step of a random game, and tallies of what the
    games went through."""

    def __init__(
        self, thorough: Callable[[], bool], quadratic: Callable[[], bool] | None = None
    ) -> None:
        self.thorough = thorough
        self.quadratic = quadratic or thorough
        self.tally: Counter[str] = Counter()
        self.decisions = 0

    def __call__(self, generic: AnyState) -> None:
        state = of(generic)
        assert conserved(state), "cards not conserved"
        last = state.history[-1]
        if len(state.history) == 1:
            self.decisions = 0
        self.decisions += last.seat != CHANCE
        assert state.decisions == self.decisions, "the cap must count decisions only"
        assert state.decisions <= DECISION_CAP
        if last.seat != CHANCE:
            kind = decode(last.action)[0]
            self.tally[kind] += 1
            if kind == "play" and not state.is_over():
                # The player who played draws while the deck lasts; then the other seat moves.
                assert state.is_chance() == bool(state.deck)
            if kind == "pass" and state.passes >= 2:
                possible = state.any_claim_possible()
                self.tally["second pass, claim possible" if possible else "double pass end"] += 1
                assert state.is_over() != possible or state.decisions >= DECISION_CAP
            if kind == "claim":
                assert state.claimed_by[decode(last.action)[2]] == last.seat
            if kind != "play" and not state.is_over():
                assert state.to_move() == ((last.seat,) if kind == "claim" else (1 - last.seat,))
        for seat in state.to_move():
            legal = state.legal_actions(seat)
            plays = [a for a in legal if a >= PLAY_BASE]
            assert (PASS in legal) == (not plays), "Pass is legal exactly when no play is"
            if self.thorough():
                offered = [decode(a)[2] for a in legal if decode(a)[0] == "claim"]
                provable = [p for p in range(POSITIONS) if state.can_claim(seat, p)]
                assert offered == provable, "the referee offers exactly the provable claims"
                if len(state.history) % 40 == 0 and self.quadratic():
                    check_action_round_trip(state, seat)
        if state.is_over():
            self.tally[re.sub(r"seat \d", "seat N", state.result().reason.split(";")[0])] += 1


def test_random_playouts_keep_every_invariant() -> None:
    """2,000 seeded games: the cheap invariants after every step of every game; every
    invariant (labels, typed forms, clone independence, offered claims) after every step of
    the first 200, with the history round trip at their end and at the end of every fourth
    of the others; action_for called on every legal action now and then in the first 50."""
    count, thorough_games = 2000, 200
    started = 0  # games begun so far, counting the one being played

    def thorough() -> bool:
        return started <= thorough_games

    def quadratic() -> bool:
        return started <= 50

    checks = PlayoutChecks(thorough, quadratic)

    def per_step(state: AnyState) -> None:
        nonlocal started
        if len(state.history) == 1:
            started += 1
        checks(state)

    finals = random_playouts(
        GAME,
        count,
        seed=1,
        per_step=per_step,
        thorough_games=thorough_games,
        round_trip_every=4,
    )
    assert len(finals) == count
    assert started == count
    for final in finals:
        state = of(final)
        assert state.is_over() and conserved(state)
        assert state.decisions <= DECISION_CAP
    tally = checks.tally
    # Every way a game can end under random play, and both branches of the double-pass rule.
    assert tally["seat N holds three adjacent positions"] > 0
    assert tally["seat N holds five positions"] > 0
    assert tally["both players passed with no claim possible"] > 0
    assert tally["double pass end"] == tally["both players passed with no claim possible"]
    assert tally["second pass, claim possible"] > 0
    assert tally["claim"] > 0 and tally["pass"] > 0


def test_decision_counts_follow_the_cap_not_the_chance_steps() -> None:
    """A policy that never claims lets the board fill up, then both pass with claims possible
    until the cap of 400 decisions ends the game: positions decide (0-0, a draw). The 52
    chance steps are not counted."""
    state = of(GAME.new_state())
    chance_rng, policy_rng = game_rngs(7, 0)
    while not state.is_over():
        if state.is_chance():
            outcomes = state.chance_outcomes()
            state.apply_chance(outcomes[int(chance_rng.random() * len(outcomes))][0])
            continue
        seat = state.to_move()[0]
        legal = [a for a in state.legal_actions(seat) if decode(a)[0] != "claim"]
        state.apply(seat, legal[int(policy_rng.random() * len(legal))])
        if state.decisions == DECISION_CAP - 1:
            assert not state.is_over()
    assert state.decisions == DECISION_CAP == decisions_made(state)
    assert sum(1 for s in state.history if s.seat == CHANCE) == 52
    assert len(state.history) == DECISION_CAP + 52
    assert state.any_claim_possible(), "claims were possible all along"
    result = state.result()
    assert result.reason.startswith(f"decision cap of {DECISION_CAP} reached")
    assert result.scores == (0.5, 0.5) and result.ranks == (0, 0)
    check_history_round_trip(GAME, state)


# -- determinism and information --------------------------------------------------------------
def test_same_seed_same_game_even_with_global_random_disturbed() -> None:
    hashes = {seed: check_determinism(GAME, seed) for seed in range(6)}
    assert len(set(hashes.values())) == len(hashes), "different seeds should differ"
    assert trajectory_hash(GAME, 3) == hashes[3]


def test_resampling_changes_nothing_a_seat_can_see() -> None:
    """At many points of many games, for both seats: what the seat and a spectator see, whose
    move it is and the seat's legal actions survive resample; the re-dealt history replays."""
    rng = random.Random(99)
    points = 0
    redealt = 0
    for index in range(24):

        def after_step(generic: AnyState, _events: list[Event], index: int = index) -> None:
            nonlocal points, redealt
            if (len(generic.history) + index) % 11 != 0:
                return
            state = of(generic)
            check_information(GAME, state, rng, tries=2)
            points += 1
            for seat in (0, 1):
                world = of(state.resample(seat, rng))
                assert world.hands[seat] == state.hands[seat]
                assert world.sides == state.sides
                redealt += world.hands[1 - seat] != state.hands[1 - seat]

        chance_rng, policy_rng = game_rngs(5, index)
        play_one(GAME, chance_rng, policy_rng, after_step=after_step)
    assert points > 150
    assert redealt > points // 2, "resample should usually re-deal the hidden hand"


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


def test_observations_hide_the_other_hand_and_draws_reach_only_the_drawer() -> None:
    checked = 0

    def after_step(generic: AnyState, events: list[Event]) -> None:
        nonlocal checked
        state = of(generic)
        last = state.history[-1]
        if last.seat == CHANCE:
            receiver = next(s for s in (0, 1) if last.action in state.hands[s])
            private = [e for e in events if not e.public]
            public = [e for e in events if e.public]
            assert len(private) == 1 and len(public) == 1
            assert private[0].audience == frozenset([receiver])
            assert private[0].visible_to(receiver) and not private[0].visible_to(1 - receiver)
            assert not private[0].visible_to(None)
            drawn = private[0].message.opposing_force.card_drawn
            assert drawn.seat == receiver and cards.from_message(drawn.card) == last.action
            shown = public[0].message.opposing_force.card_drawn
            assert shown.seat == receiver and not shown.HasField("card")
            assert card_messages(public[0].message) == []
            assert cards.label(last.action) not in public[0].message.text
        else:
            assert all(e.public for e in events), "decisions are public"
        table = set(table_cards(state))
        for seat in (0, 1, None):
            observation = state.observation(seat)
            seen = card_messages(observation)
            hidden = set(state.hands[0] + state.hands[1] + state.deck)
            mine: list[int] = []
            if seat is not None:
                mine = sorted(state.hands[seat])
                hand = observation.opposing_force.hand
                assert [cards.from_message(c) for c in hand] == mine
                hidden -= set(mine)
            assert not hidden & set(seen), f"seat {seat} sees a card it may not"
            assert set(seen) <= table | set(mine)
            tokens = set(state.render(seat).replace("[", " ").replace("]", " ").split())
            assert not tokens & {cards.label(c) for c in hidden}
        checked += 1

    for index in range(12):
        play_one(GAME, *game_rngs(11, index), after_step=after_step)
    assert checked > 1000


# -- the claim proof against brute force ------------------------------------------------------
def decision_states(count: int) -> Iterator[OpposingForceState]:
    """States where a seat must decide, from seeded random games: half where players claim at
    random, half where they never claim (so the board fills up and claims pile up)."""
    produced = 0
    index = 0
    while produced < count:
        chance_rng, policy_rng = game_rngs(17, index)
        claiming = index % 2 == 0
        index += 1
        state = of(GAME.new_state())
        while not state.is_over() and produced < count:
            if state.is_chance():
                outcomes = state.chance_outcomes()
                state.apply_chance(outcomes[int(chance_rng.random() * len(outcomes))][0])
                continue
            if not claiming and state.passes >= 2:
                break  # the rest of such a game is the same board over and over
            produced += 1
            yield state
            seat = state.to_move()[0]
            legal = state.legal_actions(seat)
            if not claiming:
                legal = [a for a in legal if decode(a)[0] != "claim"]
            state.apply(seat, legal[int(policy_rng.random() * len(legal))])


def test_claim_proof_matches_enumeration_of_the_unseen_cards() -> None:
    """On 5,000 decision states from random play, for every position and seat: can_claim
    equals the enumeration oracle, and best_completion equals the best completion found by
    enumeration, on every incomplete side."""
    outcomes: Counter[str] = Counter()
    compared = 0
    direct = 0
    literal = 0
    for number, state in enumerate(decision_states(5000)):
        unseen = state.unseen_cards()
        on_table = set(table_cards(state))
        assert unseen == [c for c in ALL_CARDS if c not in on_table]
        partials: set[tuple[int, ...]] = set()
        for seat in (0, 1):
            for position in range(POSITIONS):
                expected = oracle_can_claim(state, seat, position)
                assert state.can_claim(seat, position) == expected, (
                    f"claim {seat}@{position}\n{state.render(None)}"
                )
                if len(state.sides[seat][position]) == 3 and state.claimed_by[position] < 0:
                    against = len(state.sides[1 - seat][position])
                    outcomes[f"{'provable' if expected else 'not provable'} vs {against}"] += 1
                    if against < 3 and number % 10 == 0:
                        # The fast oracle agrees with the word-for-word enumeration.
                        assert literal_oracle_can_claim(state, seat, position) == expected
                        literal += 1
                side = state.sides[seat][position]
                if len(side) < 3:
                    partials.add(tuple(side))
        for partial in partials:
            expected_best = enumerated_best(list(partial), unseen)
            assert best_completion(list(partial), unseen) == expected_best, (
                [cards.label(c) for c in partial],
                [cards.label(c) for c in unseen],
            )
            compared += 1
            if number % 25 == 0 and (partial or number % 500 == 0):
                # The engine's own oracle agrees with the table-driven enumeration (with an
                # empty side it tries some 10,000 hands, so only now and then).
                assert best_completion_by_enumeration(list(partial), unseen) == expected_best
                direct += 1
    assert compared > 20_000 and direct > 200 and literal > 100
    for against in (0, 1, 2):
        assert outcomes[f"not provable vs {against}"] > 50, outcomes
    for against in (1, 2, 3):
        assert outcomes[f"provable vs {against}"] > 50, outcomes
    assert outcomes["not provable vs 3"] > 50, outcomes


def test_best_completion_on_sparse_pools() -> None:
    """Late-game pools: few unseen cards, too few to complete, and pools of one suit."""
    rng = random.Random(4)
    for _ in range(3000):
        size = rng.randrange(0, 12)
        chosen = rng.sample(ALL_CARDS, size + 2)
        partial_size = rng.randrange(0, 3)
        partial, pool = chosen[:partial_size], sorted(chosen[partial_size:])
        assert best_completion(partial, pool) == best_completion_by_enumeration(partial, pool)
    suited = [c for c in ALL_CARDS if cards.suit(c) == 2]
    for partial_size in (0, 1, 2):
        for held in combinations(suited, partial_size):
            rest = [c for c in suited if c not in held]
            assert best_completion(list(held), rest) == enumerated_best(list(held), rest)
    assert best_completion(cs("Ah Kh"), []) is None
    assert best_completion(cs("Ah Kh Qh"), []) == formation_value(cs("Ah Kh Qh"))


# -- formations -------------------------------------------------------------------------------
def test_formation_counts_over_every_three_card_hand() -> None:
    counts = Counter(formation_category(v) for v in value_table().values())
    assert sum(counts.values()) == 22_100
    assert counts[STRAIGHT_FLUSH] == 44
    assert counts[THREE_OF_A_KIND] == 52
    assert counts[FLUSH] == 1_100
    assert counts[STRAIGHT] == 660
    assert counts[ANYTHING_ELSE] == 20_244
    assert Counter(k[0] for k in oracle_table().values()) == {
        4: 44,
        3: 52,
        2: 1_100,
        1: 660,
        0: 20_244,
    }


def test_formation_value_orders_hands_as_the_rules_do() -> None:
    """formation_value and the oracle's (category, high, middle, low) order all 22,100 hands
    the same way, equal exactly where the oracle is equal."""
    keys, values = oracle_table(), value_table()
    ordered = sorted(triples(), key=lambda t: keys[t])
    for lower, higher in pairwise(ordered):
        if keys[lower] == keys[higher]:
            assert values[lower] == values[higher]
        else:
            assert values[lower] < values[higher], (lower, higher)


def fv(text: str) -> int:
    return formation_value(cs(text))


def test_formation_spot_checks() -> None:
    assert formation_category(fv("Qh Kh Ah")) == STRAIGHT_FLUSH
    assert fv("Qh Kh Ah") > fv("2c 3c 4c")  # ace high straight flush beats the lowest
    assert formation_category(fv("2c 3c 4c")) == STRAIGHT_FLUSH
    assert fv("2c 3c 4c") > fv("Ac Ad Ah")  # any straight flush beats three of a kind
    assert fv("Ac Ad Ah") > fv("Kh 9h 4h")  # three aces beat a K-high flush
    assert fv("2c 2d 2h") > fv("Ah Kh Jh")  # three 2s beat the best flush
    assert fv("Ac Ad Ah") > fv("Kc Kd Kh")
    assert fv("5d 3d 2d") > fv("Ac Kd Qh")  # the lowest flush beats the best straight
    assert fv("2c 3d 4h") > fv("Ac Kd Jh")  # the lowest straight beats anything else
    assert fv("Ac Kd Qh") > fv("Kc Qd Jh")
    # Ace is high only: A-2-3 is no straight (suited it is a flush), and no wrap K-A-2.
    assert formation_category(fv("Ac 2d 3h")) == ANYTHING_ELSE
    assert formation_category(fv("Ac 2c 3c")) == FLUSH
    assert formation_category(fv("Kc Ad 2h")) == ANYTHING_ELSE
    assert formation_category(fv("Kc Ac 2c")) == FLUSH
    # Anything else: highest card, then the next, then the last; a pair has no special rank.
    assert fv("Ac Kd Jh") > fv("Ac Kd Th") > fv("Ac Qd Jh")
    assert fv("Kc Kd 2h") > fv("Kc Qd 9h")
    assert fv("Ac Qd 9h") > fv("Kc Kd Qh")
    assert fv("Ah 5h 3h") > fv("Kh Qh 9h")  # flushes compare the same way
    # Equal formations in different suits are equal: completion order breaks the tie.
    assert fv("Kc 9d 5h") == fv("Kd 9h 5s")
    assert fv("9h 8h 7h") == fv("9s 8s 7s")


# -- actions ----------------------------------------------------------------------------------
def test_action_ids_and_labels() -> None:
    state = of(GAME.new_state())
    assert (PASS, CLAIM_BASE, PLAY_BASE) == (0, 1, 10)
    assert [claim_action(p) for p in (0, 8)] == [1, 9]
    queen = cards.parse("Qh")
    assert play_action(queen, 4) == PLAY_BASE + queen * POSITIONS + 4
    assert decode(play_action(queen, 4)) == ("play", queen, 4)
    assert decode(claim_action(7)) == ("claim", -1, 7)
    assert decode(PASS) == ("pass", -1, -1)
    assert state.action_label(PASS) == "pass"
    assert state.action_label(claim_action(3)) == "claim 3"
    assert state.action_label(play_action(queen, 4)) == "play Qh 4"
    assert queen == 36 and play_action(queen, 4) == 338  # the worked example of the rules page
    assert state.action_label(play_action(cards.parse("Tc"), 0)) == "play Tc 0"
    everything = [PASS, *(claim_action(p) for p in range(POSITIONS))]
    everything += [play_action(c, p) for c in ALL_CARDS for p in range(POSITIONS)]
    assert everything == list(range(PLAY_BASE + 52 * POSITIONS))
    assert len({state.action_label(a) for a in everything}) == len(everything)
    typed = state.action_message(play_action(queen, 4)).opposing_force.play
    assert cards.from_message(typed.card) == queen and typed.position == 4
    assert state.action_message(claim_action(2)).opposing_force.claim.position == 2
    assert state.action_message(PASS).opposing_force.HasField("pass_turn")


def test_options_and_seats() -> None:
    assert GAME.seat_counts == (2,) and GAME.decision_cap == DECISION_CAP == 400
    with pytest.raises(OptionsError, match="seats"):
        GAME.new_state(None, 3)
    with pytest.raises(OptionsError, match="bad options"):
        GAME.new_state({"variant": 1})


# -- scripted scenarios -----------------------------------------------------------------------
def test_the_deal_alternates_and_the_player_who_played_draws() -> None:
    state = of(GAME.new_state())
    order = cs("Ac 2d Kc 3d Qc 4d Jc 5d Tc 6d 9c 7d")
    for number, card in enumerate(order):
        assert state.is_chance() and state.to_move() == ()
        assert [c for c, _ in state.chance_outcomes()] == sorted(state.deck)
        events = state.apply_chance(card)
        assert [e.audience for e in events if not e.public] == [frozenset([number % 2])]
    assert state.hands == [sorted(order[0::2]), sorted(order[1::2])]
    assert len(state.deck) == 40 and not state.is_chance()
    assert state.to_move() == (0,)
    assert PASS not in state.legal_actions(0)
    assert len(state.legal_actions(0)) == 6 * POSITIONS  # no claim yet: six cards, nine places
    state.apply(0, play_action(cards.parse("Ac"), 4))
    assert state.is_chance() and state.to_move() == ()
    events = state.apply_chance(cards.parse("8h"))
    assert [e.audience for e in events if not e.public] == [frozenset([0])]
    assert cards.parse("8h") in state.hands[0] and len(state.hands[0]) == 6
    assert state.to_move() == (1,)
    with pytest.raises(IllegalActionError):
        state.apply(0, play_action(cards.parse("Kc"), 4))


def test_equal_formations_go_to_the_side_that_completed_first() -> None:
    script = Script("Kc 9d 5h 8c 6d 3h", "Kd 9h 5s 8d 6h 3s", draws0="2c")
    state = script.state
    script.play(0, "Kc", 0)
    script.play(1, "Kd", 0)
    script.play(0, "9d", 0)
    script.play(1, "9h", 0)
    script.play(0, "5h", 0)  # seat 0 completes K-9-5 first
    assert state.completed[0][0] == 1
    assert not state.can_claim(0, 0), "seat 1 could still complete K-9-6 and win"
    script.play(1, "5s", 0)  # seat 1 completes the same formation second
    assert state.completed[1][0] == 2
    assert state.can_claim(0, 0) and not state.can_claim(1, 0)
    assert script.claims(0) == [0]
    sides = state.observation(0).opposing_force.positions[0].sides
    assert [s.completed_order for s in sides] == [1, 2]
    script.claim(0, 0)
    script.play(0, "8c", 1)
    script.play(1, "8d", 1)
    script.play(0, "6d", 1)
    script.play(1, "6h", 1)
    script.play(0, "2c", 5)
    script.play(1, "3s", 1)  # this time seat 1 completes 8-6-3 first
    script.play(0, "3h", 1)
    assert state.to_move() == (1,)
    assert state.can_claim(1, 1) and not state.can_claim(0, 1)
    assert script.claims(1) == [1]
    script.claim(1, 1)
    assert state.claimed_by[:2] == [0, 1]


def test_claims_come_before_the_play_and_do_not_end_the_turn() -> None:
    script = Script("Ac Kc Qc 2h 3h 4h", "2d 3d 4d 5d 6d 7d")
    state = script.state
    script.play(0, "Ac", 0)
    script.play_lowest(1, 8)
    script.play(0, "Kc", 0)
    script.play_lowest(1, 8)
    script.play(0, "Qc", 0)  # A-K-Q clubs: nothing unseen beats it, a tie goes to seat 0
    # At best seat 1 ties (A-K-Q of another suit) and would complete second: provable now,
    # but it is seat 1's turn, and claims are made only at the start of one's own.
    assert best_completion(state.sides[1][0], state.unseen_cards()) == fv("Ad Kd Qd")
    assert fv("Ad Kd Qd") == fv("Ac Kc Qc")
    assert state.can_claim(0, 0)
    assert state.to_move() == (1,) and state.legal_actions(0) == []
    assert claim_action(0) not in state.legal_actions(1)
    script.play_lowest(1, 8)
    assert script.claims(0) == [0]
    script.claim(0, 0)
    assert state.to_move() == (0,), "a claim does not end the turn"
    legal = state.legal_actions(0)
    assert claim_action(0) not in legal
    assert all(decode(a)[2] != 0 for a in legal), "nothing may be played on a claimed position"
    assert PASS not in legal
    with pytest.raises(IllegalActionError):
        state.apply(1, play_action(state.hands[1][0], 0))
    script.play(0, "2h", 1)  # the play ends the turn: the draw, then seat 1
    assert state.to_move() == (1,) and state.legal_actions(0) == []
    with pytest.raises(IllegalActionError):
        state.apply(0, claim_action(1))
    assert state.claimed_by[0] == 0 and not state.is_over()


def test_three_adjacent_positions_win_at_once() -> None:
    script = Script("Ac Kc Qc Ad Kd Qd", "2c 3c 4c 5c 6c 7c", draws0="Ah Kh Qh As Ks Qs", draws1="")
    state = script.state
    plan = [("Ac", 0), ("Kc", 0), ("Qc", 0), ("Ad", 1), ("Kd", 1), ("Qd", 1)]
    plan += [("As", 4), ("Ks", 4), ("Qs", 4), ("Ah", 2), ("Kh", 2), ("Qh", 2)]
    for number, (card, position) in enumerate(plan):
        script.play(0, card, position)
        script.play_lowest(1, [3, 5, 6, 7, 8][number % 5])
    assert script.claims(0) == [0, 1, 2, 4]
    script.claim(0, 0)
    script.claim(0, 4)
    script.claim(0, 1)
    assert not state.is_over() and state.to_move() == (0,)
    script.claim(0, 2)  # 0-1-2: the win is checked right after the claim
    assert state.is_over() and state.to_move() == () and state.legal_actions(0) == []
    assert state.positions_of(0) == 4
    result = state.result()
    assert result.scores == (1.0, 0.0) and result.ranks == (0, 1)
    assert result.reason == "seat 0 holds three adjacent positions"
    check_history_round_trip(GAME, state)


def test_the_win_check_comes_right_after_each_claim() -> None:
    script = Script("Ac Kc Qc Ad Kd Qd", "2c 3c 4c 5c 6c 7c", draws0="Ah Kh Qh As Ks Qs")
    plan = [("Ac", 0), ("Kc", 0), ("Qc", 0), ("Ad", 1), ("Kd", 1), ("Qd", 1)]
    plan += [("Ah", 2), ("Kh", 2), ("Qh", 2), ("As", 4), ("Ks", 4), ("Qs", 4)]
    for number, (card, position) in enumerate(plan):
        script.play(0, card, position)
        script.play_lowest(1, [3, 5, 6, 7, 8][number % 5])
    assert script.claims(0) == [0, 1, 2, 4]
    for position in (0, 1, 2):
        script.claim(0, position)
    assert script.state.is_over(), "still a claim to make, but three adjacent end the game"
    assert script.state.claimed_by[4] == -1
    assert script.state.result().reason == "seat 0 holds three adjacent positions"


def test_five_positions_win() -> None:
    script = Script("Ac Kc Qc Ad Kd Qd", "2c 3c 4c 5c 6c 7c", draws0="Ah Kh Qh As Ks Qs Jc Tc 9c")
    state = script.state
    plan = [("Ac", 0), ("Kc", 0), ("Qc", 0), ("Ad", 2), ("Kd", 2), ("Qd", 2)]
    plan += [("Ah", 4), ("Kh", 4), ("Qh", 4), ("As", 6), ("Ks", 6), ("Qs", 6)]
    plan += [("Jc", 8), ("Tc", 8), ("9c", 8)]
    targets = [1, 1, 1, 3, 3, 3, 5, 5, 5, 7, 7, 7, 8, 8, 8]
    for number, (card, position) in enumerate(plan):
        for claim in script.claims(0):
            script.claim(0, claim)
        script.play(0, card, position)
        script.play_lowest(1, targets[number])
    assert state.claimed_by == [0, -1, 0, -1, 0, -1, 0, -1, -1]
    assert not state.is_over()
    # J-T-9 clubs: every A, K and Q is on the table, so at best seat 1 ties, and loses the tie.
    assert script.claims(0) == [8]
    script.claim(0, 8)
    assert state.is_over()
    result = state.result()
    assert result.reason == "seat 0 holds five positions"
    assert result.scores == (1.0, 0.0)
    check_history_round_trip(GAME, state)


def test_claims_against_an_incomplete_side_need_a_proof_from_unseen_cards() -> None:
    """9-8-7 hearts against a lone 10 of hearts: Q-J-10 of hearts would beat it while the
    queen of hearts is not on the table, even in the claimant's own hand; once it is played
    elsewhere no completion beats the straight flush and the claim is provable."""
    script = Script("9h 8h 7h Qh 2c 3c", "Th 4d 5d 6d 7d 8d")
    state = script.state
    script.play(0, "9h", 3)
    script.play(1, "Th", 3)
    script.play(0, "8h", 3)
    script.play(1, "4d", 6)
    script.play(0, "7h", 3)
    assert cards.parse("Qh") in state.hands[0] and cards.parse("Jh") in state.deck
    assert not state.can_claim(0, 3), "the claimant's own hand counts as unseen"
    script.play(1, "5d", 6)
    assert script.claims(0) == []
    script.play(0, "Qh", 4)
    assert state.to_move() == (1,) and state.can_claim(0, 3)
    assert best_completion(state.sides[1][3], state.unseen_cards()) == fv("Tc Td Ts")
    script.play(1, "6d", 7)
    assert script.claims(0) == [3]
    script.claim(0, 3)
    assert state.claimed_by[3] == 0


def test_claim_against_three_cards_is_a_plain_comparison() -> None:
    script = Script("2c 7d 9h 2h 3s 4s", "Tc Jd Qs 5c 6c 8c")
    state = script.state
    for mine, theirs in (("2c", "Tc"), ("7d", "Jd"), ("9h", "Qs")):
        script.play(0, mine, 0)
        script.play(1, theirs, 0)
    assert script.claims(0) == []
    assert state.can_claim(1, 0) and not state.can_claim(0, 0)
    script.play(0, "2h", 1)
    assert script.claims(1) == [0]


def test_pass_is_legal_only_without_a_play() -> None:
    state = layout(*_double_pass_board(), claimed={0: 0, 2: 0, 4: 1, 6: 1})
    assert state.hands[0] and state.legal_actions(0) == [PASS], "a full side everywhere"
    script = Script("Ac Kc Qc 2h 3h 4h", "2d 3d 4d 5d 6d 7d")
    assert PASS not in script.legal(0)
    with pytest.raises(IllegalActionError):
        script.state.apply(0, PASS)


def _double_pass_board() -> tuple[dict[int, str], dict[int, str], str, str]:
    """Deck empty; seat 1 has no cards, seat 0 three aces but a full side at every open
    position (1, 3, 5, 7, 8): weak, below ace high, while seat 1 holds two cards there that an
    ace would lift above them. So neither seat can play or prove a claim."""
    sides0 = {1: "2c 4d 6h", 3: "2d 4h 6s", 5: "2h 4s 6c", 7: "2s 4c 6d", 8: "3c 5d 7h"}
    sides1 = {1: "3d 5h", 3: "3h 5s", 5: "3s 5c", 7: "7c 8d", 8: "7d 8h"}
    return sides0, sides1, "Ac Ad Ah", ""


@pytest.mark.parametrize(
    ("claimed", "scores", "ending"),
    [
        ({0: 0, 2: 0, 4: 1, 6: 1}, (0.5, 0.5), "positions 2-2, a draw"),
        ({0: 0, 2: 0, 4: 0, 6: 1}, (1.0, 0.0), "seat 0 holds more positions"),
        ({0: 1, 2: 1, 4: 0, 6: 1}, (0.0, 1.0), "seat 1 holds more positions"),
    ],
)
def test_two_passes_with_no_claim_possible_end_the_game(
    claimed: dict[int, int], scores: tuple[float, float], ending: str
) -> None:
    state = layout(*_double_pass_board(), claimed=claimed)
    assert not state.any_claim_possible()
    assert state.legal_actions(0) == [PASS]
    state.apply(0, PASS)
    assert not state.is_over() and state.to_move() == (1,) and state.passes == 1
    assert state.legal_actions(1) == [PASS]
    state.apply(1, PASS)
    assert state.is_over()
    result = state.result()
    assert result.scores == scores
    assert result.reason == f"both players passed with no claim possible; {ending}"
    assert result.ranks == ((0, 0) if scores[0] == scores[1] else (0, 1) if scores[0] else (1, 0))


@pytest.mark.parametrize("claimant", [0, 1])
def test_a_second_pass_with_a_claim_possible_for_either_seat_goes_on(claimant: int) -> None:
    """Either seat could still claim position 8 at the second pass: play goes on. A seat with
    no play may claim, and then must pass; with no claim left, two passes end the game."""
    sides0, sides1, hand0, hand1 = _double_pass_board()
    if claimant == 1:
        sides1[8] = "7d 8h 9c"  # a straight over 7-5-3
    else:
        sides0[8], sides1[8] = "9c 9d 9s", "7d 8h 3c"  # three nines over 8-7-3
    state = layout(sides0, sides1, hand0, hand1, claimed={0: 0, 2: 0, 4: 1, 6: 1})
    assert [(s, p) for s in (0, 1) for p in range(POSITIONS) if state.can_claim(s, p)] == [
        (claimant, 8)
    ]
    assert state.legal_actions(0) == ([PASS, claim_action(8)] if claimant == 0 else [PASS])
    state.apply(0, PASS)
    state.apply(1, PASS)
    assert not state.is_over() and state.passes == 2, "a claim was still possible"
    if claimant == 1:
        state.apply(0, PASS)
        assert not state.is_over() and state.passes == 3
    assert state.to_move() == (claimant,)
    assert state.legal_actions(claimant) == [PASS, claim_action(8)]
    state.apply(claimant, claim_action(8))
    assert state.to_move() == (claimant,) and state.legal_actions(claimant) == [PASS]
    state.apply(claimant, PASS)
    assert state.is_over()
    result = state.result()
    assert result.reason.startswith("both players passed with no claim possible")
    expected = (1.0, 0.0) if claimant == 0 else (0.0, 1.0)
    assert result.scores == expected, "three positions against two"


def test_the_decision_cap_ends_the_game_and_positions_decide() -> None:
    """Seat 1 could claim position 8 but keeps passing: at the 400th decision the game ends
    and seat 0, three positions to one, wins."""
    sides0, sides1, hand0, hand1 = _double_pass_board()
    sides1[8] = "7d 8h 9c"
    state = layout(sides0, sides1, hand0, hand1, claimed={0: 0, 2: 0, 4: 0, 6: 1})
    while state.decisions < DECISION_CAP - 1:
        state.apply(state.current, PASS)
    assert not state.is_over() and state.any_claim_possible()
    state.apply(state.current, PASS)
    assert state.is_over() and state.decisions == DECISION_CAP
    result = state.result()
    assert result.reason == "decision cap of 400 reached; seat 0 holds more positions"
    assert result.scores == (1.0, 0.0)


def test_the_cap_with_one_claim_made() -> None:
    """Real play: seat 0 makes exactly one claim, then nobody claims; the cap of 400
    decisions (claims, plays, passes) ends the game and seat 0 wins one position to none."""
    state = of(GAME.new_state())
    chance_rng, policy_rng = game_rngs(8, 0)
    while not state.is_over():
        if state.is_chance():
            outcomes = state.chance_outcomes()
            state.apply_chance(outcomes[int(chance_rng.random() * len(outcomes))][0])
            continue
        seat = state.to_move()[0]
        legal = state.legal_actions(seat)
        claims = [a for a in legal if decode(a)[0] == "claim"]
        if seat == 0 and claims and state.positions_of(0) == 0:
            state.apply(seat, claims[0])
            continue
        others = [a for a in legal if a not in claims]
        state.apply(seat, others[int(policy_rng.random() * len(others))])
    assert state.decisions == DECISION_CAP
    assert state.positions_of(0) == 1 and state.positions_of(1) == 0
    assert state.result().scores == (1.0, 0.0)
    assert state.result().reason == "decision cap of 400 reached; seat 0 holds more positions"


def test_the_400th_decision_ends_the_game_by_its_own_rule_first() -> None:
    sides0, sides1, hand0, hand1 = _double_pass_board()
    sides0[8], sides1[8] = "9c 9d 9s", "7d 8h 3c"
    state = layout(sides0, sides1, hand0, hand1, claimed={0: 0, 2: 0, 4: 0, 6: 0})
    state.decisions = DECISION_CAP - 1
    state.apply(0, claim_action(8))
    assert state.result().reason == "seat 0 holds five positions"
    state = layout(*_double_pass_board(), claimed={0: 0, 2: 0, 4: 1, 6: 1})
    state.decisions = DECISION_CAP - 2
    state.apply(0, PASS)
    state.apply(1, PASS)
    assert state.result().reason == (
        "both players passed with no claim possible; positions 2-2, a draw"
    )
    sides0, sides1, hand0, hand1 = _double_pass_board()
    sides1[8] = "7d 8h 9c"
    state = layout(sides0, sides1, hand0, hand1, claimed={0: 0, 2: 0, 4: 1, 6: 1})
    state.decisions = DECISION_CAP - 2
    state.apply(0, PASS)
    state.apply(1, PASS)
    assert state.result().reason == "decision cap of 400 reached; positions 2-2, a draw"
    assert state.result().scores == (0.5, 0.5)


# -- golden playthrough -----------------------------------------------------------------------
def golden_text(seed: int) -> str:
    lines = [
        f"# Opposing Force, one seeded random game: game_rngs({seed}, 0) of tests/games/"
        "invariants.py",
        "# Regenerate: ARENA_UPDATE_GOLDEN=1 .venv/bin/python -m pytest "
        "tests/games/test_opposing_force.py -k golden",
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
            lines.append(f"       [{audience}] {event.message.text}")

    final = play_one(GAME, *game_rngs(seed, 0), after_step=after_step)
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
                expected.splitlines(keepends=True),
                text.splitlines(keepends=True),
                "golden",
                "now",
                n=2,
            )
        )
        pytest.fail(f"the seeded playthrough changed:\n{diff[:4000]}")


@pytest.mark.parametrize("announced", [True, False], ids=["guarded", "control"])
def test_a_state_changed_by_hand_is_resampled_afresh(announced: bool) -> None:
    """resample keeps what a position's worlds share (the pool, where each card was drawn) for
    its next call at that position. A change by hand at the same history length, announced by
    forget_legal_actions as the contract asks, must drop it: here seat 1 swaps a hand card for
    a deck card, so the pool seat 0's hand is re-dealt from changes, and a world dealt from the
    old pool would hold one card twice and lose another. The control makes the same change
    unannounced: the kept pool is used, and the world is wrong."""
    state = of(position_at(GAME, seed=8, length=30))
    rng = random.Random(3)
    assert conserved(of(state.resample(1, rng)))
    held, undrawn = state.hands[1][0], state.deck[0]
    state.hands[1] = sorted([*state.hands[1][1:], undrawn])
    state.deck = sorted([*state.deck[1:], held])
    if announced:
        state.forget_legal_actions()
    worlds = [of(state.resample(1, rng)) for _ in range(20)]
    assert all(conserved(world) for world in worlds) == announced
