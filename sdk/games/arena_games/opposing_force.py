"""Opposing Force, an adaptation of Schotten-Totten for a 52-card deck.

Rules: ../shared/seeds/opposing-force.txt, settled by RULINGS.md; the rulings this engine adds
are listed in docs/games/opposing-force.md. Two seats, six cards each, nine positions 0..8.
A turn is any number of Claim actions, then one Play (or a Pass when no play is legal); the draw
that follows a play is a chance step while the deck lasts.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from functools import lru_cache, partial
from itertools import combinations

from arena.v1 import opposing_force_pb2 as ofpb
from arena.v1 import referee_pb2 as pb

from arena_games import cards
from arena_games.base import (
    CHANCE,
    Event,
    GameDefinition,
    GameError,
    GameOptions,
    GameState,
    Result,
    SeatView,
    Step,
    WorldSampler,
    event_message,
    uniform_draw,
)
from arena_games.playout import drawn_apart

POSITIONS = 9
HAND_SIZE = 6
DECISION_CAP = 400
RULES_VERSION = "opposing-force/1"
DECK_AFTER_DEAL = 52 - 2 * HAND_SIZE

# Action ids, in the order legal lists give them: pass, claims, plays.
PASS = 0
CLAIM_BASE = 1
PLAY_BASE = CLAIM_BASE + POSITIONS

# Formation categories, highest first in value.
STRAIGHT_FLUSH, THREE_OF_A_KIND, FLUSH, STRAIGHT, ANYTHING_ELSE = 4, 3, 2, 1, 0
CATEGORY_NAMES = {
    STRAIGHT_FLUSH: "straight flush",
    THREE_OF_A_KIND: "three of a kind",
    FLUSH: "flush",
    STRAIGHT: "straight",
    ANYTHING_ELSE: "anything else",
}


class OpposingForceOptions(GameOptions):
    """Opposing Force has no options."""


# -- actions ----------------------------------------------------------------------------------
def claim_action(position: int) -> int:
    return CLAIM_BASE + position


def play_action(card: int, position: int) -> int:
    return PLAY_BASE + card * POSITIONS + position


def decode(action: int) -> tuple[str, int, int]:
    """(kind, card, position) with kind 'pass', 'claim' or 'play'; -1 where it does not apply."""
    if action == PASS:
        return "pass", -1, -1
    if action < PLAY_BASE:
        return "claim", -1, action - CLAIM_BASE
    card, position = divmod(action - PLAY_BASE, POSITIONS)
    return "play", card, position


# -- card tables ------------------------------------------------------------------------------
# The claim proof runs on every legal list, so card facts are tables indexed by card id, and
# sets of cards are bitmasks (bit c for card c). Within a suit's 13 bits, bit r - 2 is rank r,
# so a 13-bit mask also serves as a set of ranks.
RANK = tuple(cards.rank(c) for c in cards.DECK)
SUIT = tuple(cards.suit(c) for c in cards.DECK)
BIT = tuple(1 << c for c in cards.DECK)
ALL_CARDS = (1 << 52) - 1
ONE_SUIT = (1 << 13) - 1
# RANK_CARDS[r]: the four cards of rank r (indexes 0 and 1 unused).
RANK_CARDS = (0, 0, *(sum(BIT[cards.make(r, s)] for s in range(4)) for r in range(2, 15)))
# A run is three consecutive ranks, named by its lowest bit i (ranks i + 2..i + 4), so the top of
# the highest run in a mask of runs is its bit_length() + 3. RUNS_IN_SUIT: the runs that stay
# within one suit of a card set; RUNS_WITH[r]: the runs that hold rank r.
RUNS_IN_SUIT = sum((1 << 11) - 1 << 13 * s for s in range(4))
RUNS_WITH = (0, 0, *(sum(1 << i for i in range(11) if i <= r - 2 <= i + 2) for r in range(2, 15)))


def card_set(some: list[int] | tuple[int, ...]) -> int:
    mask = 0
    for card in some:
        mask |= BIT[card]
    return mask


def _ranks_present(pool: int) -> int:
    """The ranks that have a card in pool, as a 13-bit mask."""
    return (pool | pool >> 13 | pool >> 26 | pool >> 39) & ONE_SUIT


def _runs(ranks: int) -> int:
    """The runs in a mask of ranks (or of cards, then check RUNS_IN_SUIT)."""
    return ranks & ranks >> 1 & ranks >> 2


def _suit_ranks(pool: int, s: int) -> int:
    return pool >> 13 * s & ONE_SUIT


def _top_ranks(pool: int, count: int) -> list[int]:
    """The ranks of the count highest cards of pool (repeats included), high first."""
    found: list[int] = []
    for r in range(14, 1, -1):
        have = (pool & RANK_CARDS[r]).bit_count()
        if have:
            found += [r] * min(have, count - len(found))
            if len(found) == count:
                break
    return found


def _top_suit_ranks(pool: int, s: int, count: int) -> list[int] | None:
    """The ranks of the count highest cards of suit s in pool, high first; None if too few."""
    held = _suit_ranks(pool, s)
    if held.bit_count() < count:
        return None
    found = []
    for _ in range(count):
        bit = held.bit_length() - 1
        found.append(bit + 2)
        held ^= 1 << bit
    return found


# -- formations -------------------------------------------------------------------------------
def _value(category: int, high: int, mid: int, low: int) -> int:
    return ((category * 16 + high) * 16 + mid) * 16 + low


def _ranked(category: int, ranks: list[int]) -> int:
    """_value of three ranks in any order."""
    high, mid, low = sorted(ranks, reverse=True)
    return _value(category, high, mid, low)


# formation_value by the set of its three cards, filled as hands are met (22,100 at most).
_FORMATIONS: dict[int, int] = {}


def formation_value(three: list[int] | tuple[int, ...]) -> int:
    """A number that orders three-card formations as the rules do: category, then ranks."""
    a, b, c = three
    key = BIT[a] | BIT[b] | BIT[c]
    value = _FORMATIONS.get(key)
    if value is None:
        value = _formation_value(a, b, c)
        if key.bit_count() == 3:  # a repeated card is no hand to remember
            _FORMATIONS[key] = value
    return value


def _formation_value(a: int, b: int, c: int) -> int:
    high, mid, low = sorted((RANK[a], RANK[b], RANK[c]), reverse=True)
    flush = SUIT[a] == SUIT[b] == SUIT[c]
    straight = high - 1 == mid and mid - 1 == low
    if flush and straight:
        category = STRAIGHT_FLUSH
    elif high == low:
        category = THREE_OF_A_KIND
    elif flush:
        category = FLUSH
    elif straight:
        category = STRAIGHT
    else:
        category = ANYTHING_ELSE
    return _value(category, high, mid, low)


def formation_category(value: int) -> int:
    return value >> 12


# For two cards a and b (by their card set): the values of a, b and each third card, ascending,
# and above[i], the set of the third cards from the i-th on.
_THIRD_CARDS: dict[int, tuple[list[int], list[int]]] = {}


def _third_cards_above(a: int, b: int, value: int) -> int:
    """The set of the cards c for which a, b, c is a formation above value."""
    key = BIT[a] | BIT[b]
    table = _THIRD_CARDS.get(key)
    if table is None:
        table = _THIRD_CARDS[key] = _third_card_table(a, b)
    values, above = table
    return above[bisect_right(values, value)]


def _third_card_table(a: int, b: int) -> tuple[list[int], list[int]]:
    ranked = sorted((formation_value((a, b, c)), c) for c in cards.DECK if c not in (a, b))
    above = [0] * (len(ranked) + 1)
    for i in range(len(ranked) - 1, -1, -1):
        above[i] = above[i + 1] | BIT[ranked[i][1]]
    return [value for value, _ in ranked], above


def best_completion(partial: list[int], pool: list[int]) -> int | None:
    """The highest formation value any completion of partial with cards from pool reaches, or
    None when pool has too few cards. pool holds distinct cards, none of them in partial."""
    need = 3 - len(partial)
    if need < 0 or len(pool) < need:
        return None
    best = best_completion_from(partial, card_set(pool))
    return None if best < 0 else best


def best_completion_from(partial: list[int], pool: int) -> int:
    """best_completion with pool as a card set; -1 when pool has too few cards. Each helper
    searches categories from the top, so the first one found is the best; within a category
    the highest ranks come first."""
    need = 3 - len(partial)
    if need == 0:
        return formation_value(partial)
    if pool.bit_count() < need:
        return -1
    if need == 1:
        return _best_with_two(partial[0], partial[1], pool)
    if need == 2:
        return _best_with_one(partial[0], pool)
    return _best_with_none(pool)


def _run_value(category: int, runs: int) -> int:
    top = runs.bit_length() + 3
    return _value(category, top, top - 1, top - 2)


def _best_with_two(a: int, b: int, pool: int) -> int:
    """The best formation of a, b and one card of pool."""
    ra, rb, s = RANK[a], RANK[b], SUIT[a]
    both = RUNS_WITH[ra] & RUNS_WITH[rb]
    if s == SUIT[b]:
        runs = _runs(_suit_ranks(pool | BIT[a] | BIT[b], s)) & both
        if runs:
            return _run_value(STRAIGHT_FLUSH, runs)
    if ra == rb:
        if pool & RANK_CARDS[ra]:
            return _value(THREE_OF_A_KIND, ra, ra, ra)
    elif s == SUIT[b]:
        suited = _top_suit_ranks(pool, s, 1)
        if suited is not None:
            return _ranked(FLUSH, [ra, rb, *suited])
    if ra != rb:
        runs = _runs(_ranks_present(pool | BIT[a] | BIT[b])) & both
        if runs:
            return _run_value(STRAIGHT, runs)
    return _ranked(ANYTHING_ELSE, [ra, rb, *_top_ranks(pool, 1)])


def _best_with_one(a: int, pool: int) -> int:
    """The best formation of a and two cards of pool."""
    r, s = RANK[a], SUIT[a]
    runs = _runs(_suit_ranks(pool | BIT[a], s)) & RUNS_WITH[r]
    if runs:
        return _run_value(STRAIGHT_FLUSH, runs)
    if (pool & RANK_CARDS[r]).bit_count() >= 2:
        return _value(THREE_OF_A_KIND, r, r, r)
    suited = _top_suit_ranks(pool, s, 2)
    if suited is not None:
        return _ranked(FLUSH, [r, *suited])
    runs = _runs(_ranks_present(pool | BIT[a])) & RUNS_WITH[r]
    if runs:
        return _run_value(STRAIGHT, runs)
    return _ranked(ANYTHING_ELSE, [r, *_top_ranks(pool, 2)])


def _best_with_none(pool: int) -> int:
    """The best formation of three cards of pool."""
    runs = _runs(pool) & RUNS_IN_SUIT
    if runs:
        return _run_value(STRAIGHT_FLUSH, _ranks_present(runs))
    s0, s1, s2, s3 = (_suit_ranks(pool, s) for s in range(4))
    threes = s0 & s1 & (s2 | s3) | s2 & s3 & (s0 | s1)  # ranks held in three suits or four
    if threes:
        r = threes.bit_length() + 1
        return _value(THREE_OF_A_KIND, r, r, r)
    flushes = [_ranked(FLUSH, suited) for s in range(4) if (suited := _top_suit_ranks(pool, s, 3))]
    if flushes:
        return max(flushes)
    runs = _runs(_ranks_present(pool))
    if runs:
        return _run_value(STRAIGHT, runs)
    return _ranked(ANYTHING_ELSE, _top_ranks(pool, 3))


def best_completion_by_enumeration(partial: list[int], pool: list[int]) -> int | None:
    """The same as best_completion by trying every completion: the oracle for tests."""
    need = 3 - len(partial)
    values = [formation_value(partial + list(extra)) for extra in combinations(pool, need)]
    return max(values) if values else None


# -- tables for the state ---------------------------------------------------------------------
# Made once, so that a step builds as little as it can.
AUDIENCES = (frozenset([0]), frozenset([1]))
SEATS = ((0,), (1,))
EVERY_POSITION = (1 << POSITIONS) - 1
# POSITION_LISTS[mask]: the positions in a 9-bit mask, in order; CLAIM_LISTS[mask]: their claims.
POSITION_LISTS = tuple(
    tuple(p for p in range(POSITIONS) if mask >> p & 1) for mask in range(1 << POSITIONS)
)
CLAIM_LISTS = tuple(tuple(map(claim_action, positions)) for positions in POSITION_LISTS)
# _PLAYS[mask][card]: the ids of playing the card on the positions in mask, in order.
_PLAYS: dict[int, tuple[tuple[int, ...], ...]] = {}


def _plays_by_card(open_positions: int) -> tuple[tuple[int, ...], ...]:
    where = POSITION_LISTS[open_positions]
    plays = tuple(tuple(play_action(card, p) for p in where) for card in cards.DECK)
    _PLAYS[open_positions] = plays
    return plays


# A position's message from its values: a position changes a few times a game, and the referee
# sends all nine in every decision request, so most are the same message as the last time.
# Bounded at about 8 MB (1.9 KB an entry): about 60 distinct positions a game, so the positions
# of some 60 games at once; past that a request builds the ones it misses, as before.
@lru_cache(maxsize=4096)
def _position_message(
    position: int,
    side0: tuple[int, ...],
    side1: tuple[int, ...],
    order0: int,
    order1: int,
    claimed_by: int,
) -> ofpb.OpposingForcePosition:
    """Shared between observations: never change the message returned (setting it into
    another message copies it)."""
    sides = [
        ofpb.OpposingForceSide(cards=[cards.to_message(c) for c in side], completed_order=order)
        for side, order in ((side0, order0), (side1, order1))
    ]
    message = ofpb.OpposingForcePosition(index=position, sides=sides)
    if claimed_by >= 0:
        message.claimed_by = claimed_by
    return message


# -- the state --------------------------------------------------------------------------------
class OpposingForceState(GameState[OpposingForceOptions]):
    def __init__(self, options: OpposingForceOptions, num_seats: int) -> None:
        super().__init__(options, num_seats)
        self.hands: list[list[int]] = [[], []]  # each kept sorted
        self.deck: list[int] = list(cards.DECK)
        self.sides: list[list[list[int]]] = [[[] for _ in range(POSITIONS)] for _ in range(2)]
        # completed[seat][position]: order in which that side got its third card, 0 if not yet.
        self.completed: list[list[int]] = [[0] * POSITIONS for _ in range(2)]
        self.completions = 0
        self.claimed_by: list[int] = [-1] * POSITIONS
        self.current = 0
        self.drawing: int | None = None
        self.passes = 0
        self.decisions = 0
        self.winner: int | None = None
        self.over_reason = ""
        self._derive()

    def _derive(self) -> None:
        """The facts kept beside the rules' fields for the legal list and the claim proof. apply
        keeps them up to date; forget_legal_actions recomputes them after a change by hand.
        Sets of positions are 9-bit masks, bit 9 * seat + p where they belong to a seat."""
        # The cards on the table, as a card set.
        self._table = card_set([c for sides in self.sides for side in sides for c in side])
        # The sides with three cards, and the claimed positions.
        self._full = sum(
            1 << (POSITIONS * seat + p)
            for seat in range(2)
            for p in range(POSITIONS)
            if len(self.sides[seat][p]) == 3
        )
        self._closed = sum(1 << p for p in range(POSITIONS) if self.claimed_by[p] >= 0)
        # Claims whose verdict can no longer change (see _claim_provable).
        self._proven = self._refuted = 0
        self._settle_chance()

    def _settle_chance(self) -> None:
        """Whether the next step is chance, settled once per step: the driver, apply and
        to_move all ask several times a step."""
        deck = self.deck
        dealing = len(deck) > DECK_AFTER_DEAL
        self._chance = not self.over_reason and (
            dealing or (self.drawing is not None and bool(deck))
        )

    # -- whose move ---------------------------------------------------------------------------
    def is_chance(self) -> bool:
        return self._chance

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self._chance:
            return []
        return uniform_draw(self.deck, len(cards.DECK))

    def _is_chance_outcome(self, outcome: int) -> bool:
        return self._chance and outcome in self.deck

    def _receiver(self) -> int:
        """The seat that gets the next card: alternating during the deal, else the drawer."""
        if len(self.deck) > DECK_AFTER_DEAL:  # dealing
            return (52 - len(self.deck)) % 2
        assert self.drawing is not None
        return self.drawing

    def to_move(self) -> tuple[int, ...]:
        if self._chance or self.over_reason:
            return ()
        return SEATS[self.current]

    def is_over(self) -> bool:
        return bool(self.over_reason)

    def result(self) -> Result:
        if not self.over_reason:
            raise GameError("the game is not over")
        if self.winner is None:
            return Result(ranks=(0, 0), scores=(0.5, 0.5), reason=self.over_reason)
        scores = tuple(1.0 if seat == self.winner else 0.0 for seat in range(2))
        return Result.from_scores(scores, self.over_reason)

    # -- legal actions ------------------------------------------------------------------------
    def _legal_actions(self, seat: int) -> list[int]:
        # Claims come before the play; the play or pass ends the turn, so while the seat is to
        # move its claims are open.
        shift = POSITIONS * seat
        full = (self._full >> shift) & EVERY_POSITION
        candidates = full & ~self._closed
        claims = candidates & (self._proven >> shift)
        for p in POSITION_LISTS[candidates & ~claims & ~(self._refuted >> shift)]:
            if self._claim_provable(seat, p):
                claims |= 1 << p
        actions = list(CLAIM_LISTS[claims])
        open_positions = EVERY_POSITION & ~(full | self._closed)
        hand = self.hands[seat]
        if not hand or not open_positions:
            return [PASS, *actions]
        plays = _PLAYS.get(open_positions) or _plays_by_card(open_positions)
        for card in hand:  # hands are kept sorted, so the plays come out sorted
            actions += plays[card]
        return actions

    def unseen_cards(self) -> list[int]:
        """Cards not on the table: the deck and both hands, as the claim proof counts them."""
        return sorted(self.deck + self.hands[0] + self.hands[1])

    def can_claim(self, seat: int, position: int) -> bool:
        """Whether the seat can prove the position is theirs now (RULINGS: the referee offers
        only provable claims; the proof uses only cards not on the table)."""
        if self.claimed_by[position] >= 0 or len(self.sides[seat][position]) < 3:
            return False
        return self._provable(seat, position)

    def _provable(self, seat: int, position: int) -> bool:
        """can_claim for an unclaimed position where the seat has three cards."""
        mine = self.sides[seat][position]
        other = 1 - seat
        theirs = self.sides[other][position]
        my_value = formation_value(mine)
        if len(theirs) == 3:
            their_value = formation_value(theirs)
            if my_value != their_value:
                return my_value > their_value
            return self.completed[seat][position] < self.completed[other][position]
        # Not on the table: the unseen cards, as conserved cards are everywhere else.
        unseen = ALL_CARDS ^ self._table
        if len(theirs) == 2:
            return not unseen & _third_cards_above(theirs[0], theirs[1], my_value)
        return best_completion_from(theirs, unseen) <= my_value

    def _claim_provable(self, seat: int, position: int) -> bool:
        """_provable, remembering the verdicts that cannot change: two complete sides compare
        the same for ever, and a proof stays a proof (the opponent's later cards come from the
        unseen ones, so every completion left to them was one before)."""
        provable = self._provable(seat, position)
        bit = 1 << (POSITIONS * seat + position)
        if provable:
            self._proven |= bit
        elif len(self.sides[1 - seat][position]) == 3:
            self._refuted |= bit
        return provable

    def any_claim_possible(self) -> bool:
        return any(self.can_claim(s, p) for s in range(2) for p in range(POSITIONS))

    # -- moves --------------------------------------------------------------------------------
    def _apply_chance(self, outcome: int) -> list[Event]:
        seat = self._receiver()
        deck = self.deck
        deck.remove(outcome)
        hand = self.hands[seat]
        hand.append(outcome)
        hand.sort()
        if len(deck) <= DECK_AFTER_DEAL:  # a draw, or the deal's last card
            self.drawing = None
        self._settle_chance()
        step = len(self.history)
        return [
            Event(partial(_card_drawn, step, seat, outcome), AUDIENCES[seat]),
            Event(partial(_card_drawn, step, seat, None)),
        ]

    def _apply_action(self, seat: int, action: int) -> list[Event]:
        step = len(self.history)
        self.decisions += 1
        if action >= PLAY_BASE:
            card, position = divmod(action - PLAY_BASE, POSITIONS)
            self.hands[seat].remove(card)
            side = self.sides[seat][position]
            side.append(card)
            self._table |= BIT[card]
            if len(side) == 3:
                self.completions += 1
                self.completed[seat][position] = self.completions
                self._full |= 1 << (POSITIONS * seat + position)
            events = [Event(partial(_card_played, step, seat, card, position))]
            self.passes = 0
            self.current = 1 - seat  # the play ends the turn; the player draws while cards last
            if self.deck:
                self.drawing = seat
        elif action >= CLAIM_BASE:
            position = action - CLAIM_BASE
            self.claimed_by[position] = seat
            self._closed |= 1 << position
            events = [Event(partial(_position_claimed, step, seat, position))]
            self._check_claim_win(seat)
        else:
            self.passes += 1
            events = [Event(partial(_passed, step, seat))]
            self.current = 1 - seat  # the pass ends the turn
            if self.passes >= 2 and not self.any_claim_possible():
                self._end_by_positions("both players passed with no claim possible")
        if not self.over_reason and self.decisions >= DECISION_CAP:
            self._end_by_positions(f"decision cap of {DECISION_CAP} reached")
        self._settle_chance()
        return events

    def positions_of(self, seat: int) -> int:
        return sum(1 for owner in self.claimed_by if owner == seat)

    def _check_claim_win(self, seat: int) -> None:
        owned = [owner == seat for owner in self.claimed_by]
        adjacent = any(all(owned[p : p + 3]) for p in range(POSITIONS - 2))
        if adjacent:
            self._finish(seat, f"seat {seat} holds three adjacent positions")
        elif sum(owned) >= 5:
            self._finish(seat, f"seat {seat} holds five positions")

    def _end_by_positions(self, why: str) -> None:
        counts = [self.positions_of(s) for s in range(2)]
        if counts[0] == counts[1]:
            self._finish(None, f"{why}; positions {counts[0]}-{counts[1]}, a draw")
        else:
            winner = 0 if counts[0] > counts[1] else 1
            self._finish(winner, f"{why}; seat {winner} holds more positions")

    def _finish(self, winner: int | None, reason: str) -> None:
        self.winner = winner
        self.over_reason = reason
        self.drawing = None

    # -- what seats see -----------------------------------------------------------------------
    def observation(self, seat: int | None) -> pb.Observation:
        sides, completed, claimed_by = self.sides, self.completed, self.claimed_by
        positions = [
            _position_message(
                p,
                tuple(sides[0][p]),
                tuple(sides[1][p]),
                completed[0][p],
                completed[1][p],
                claimed_by[p],
            )
            for p in range(POSITIONS)
        ]
        observation = ofpb.OpposingForceObservation(
            current_seat=self.current,
            hand_sizes=[len(h) for h in self.hands],
            deck_size=len(self.deck),
            positions=positions,
            consecutive_passes=self.passes,
            decisions=self.decisions,
            decision_cap=DECISION_CAP,
            # The seat's own hand; a spectator's observation has neither seat nor hand.
            seat=seat,
            hand=[] if seat is None else [cards.to_message(c) for c in self.hands[seat]],
        )
        return pb.Observation(opposing_force=observation)

    def action_label(self, action: int) -> str:
        kind, card, position = decode(action)
        if kind == "pass":
            return "pass"
        if kind == "claim":
            return f"claim {position}"
        return f"play {cards.label(card)} {position}"

    def chance_label(self, outcome: int) -> str:
        return cards.label(outcome)

    def action_message(self, action: int) -> pb.Action:
        kind, card, position = decode(action)
        if kind == "pass":
            typed = ofpb.OpposingForceAction(pass_turn=ofpb.OpposingForcePass())
        elif kind == "claim":
            typed = ofpb.OpposingForceAction(claim=ofpb.OpposingForceClaim(position=position))
        else:
            play = ofpb.OpposingForcePlay(card=cards.to_message(card), position=position)
            typed = ofpb.OpposingForceAction(play=play)
        return pb.Action(opposing_force=typed)

    def render(self, seat: int | None) -> str:
        return render_observation(self.observation(seat).opposing_force)

    # -- search and tests ---------------------------------------------------------------------
    def clone(self) -> OpposingForceState:
        other = OpposingForceState.__new__(OpposingForceState)
        other.options = self.options
        other.num_seats = self.num_seats
        other.history = self.history.copy()
        other.hands = list(map(list.copy, self.hands))
        other.deck = self.deck.copy()
        other.sides = [list(map(list.copy, sides)) for sides in self.sides]
        other.completed = list(map(list.copy, self.completed))
        other.completions = self.completions
        other.claimed_by = self.claimed_by.copy()
        other.current = self.current
        other.drawing = self.drawing
        other.passes = self.passes
        other.decisions = self.decisions
        other.winner = self.winner
        other.over_reason = self.over_reason
        other._table = self._table
        other._full = self._full
        other._closed = self._closed
        other._proven = self._proven
        other._refuted = self._refuted
        other._chance = self._chance
        self._share_kept_legal_actions(other)
        return other

    def resample(self, seat: int, rng: random.Random) -> OpposingForceState:
        """Re-deal the other seat's hand from its hand and the deck (one pool, the same set
        whatever the split, drawn in its sorted order); the history's draws of the cards dealt
        away are rewritten to the new ones, so it still replays. The pool and where each card
        was drawn are found once per position: search resamples one state many times."""
        other = 1 - seat
        pool, drawn_at = self.kept_for_resample(seat, partial(self._redeal_facts, other))
        state = self.clone()
        old_hand = self.hands[other]
        new_hand, deck = drawn_apart(pool, len(old_hand), rng)
        new_hand.sort()
        deck.sort()
        state.hands[other], state.deck = new_hand, deck
        history = state.history
        kept = set(old_hand).intersection(new_hand)
        gone = [c for c in old_hand if c not in kept]
        come = [c for c in new_hand if c not in kept]
        for old, new in zip(gone, come, strict=True):
            if old in drawn_at:  # else a state with no such history (arranged by hand)
                history[drawn_at[old]] = Step(CHANCE, new)
        state.redealt()
        return state

    def _redeal_facts(self, other: int) -> tuple[tuple[int, ...], dict[int, int]]:
        """The pool other's hand is re-dealt from, and card -> index of the chance step that
        drew it."""
        pool = tuple(sorted(self.hands[other] + self.deck))
        drawn_at = {
            step.action: index for index, step in enumerate(self.history) if step.seat == CHANCE
        }
        return pool, drawn_at

    def forget_legal_actions(self) -> None:
        super().forget_legal_actions()
        self._derive()

    def redealt(self) -> None:
        """The hidden cards (the other hand, the deck) were dealt again by hand, the table and
        the deck's size unchanged: what _derive keeps is the table's, so only the kept legal
        lists go."""
        super().forget_legal_actions()

    @classmethod
    def world_sampler(cls, options: OpposingForceOptions, view: SeatView) -> OpposingForceSampler:
        return OpposingForceSampler(options, view)

    def key(self) -> tuple[object, ...]:
        return (
            tuple(tuple(h) for h in self.hands),
            tuple(self.deck),
            tuple(tuple(tuple(side) for side in sides) for sides in self.sides),
            tuple(tuple(row) for row in self.completed),
            self.completions,
            tuple(self.claimed_by),
            self.current,
            self.drawing,
            self.passes,
            self.decisions,
            self.winner,
            self.over_reason,
            tuple((s.seat, s.action) for s in self.history),
        )


# -- events, built when first read ------------------------------------------------------------
# Each builder takes only values fixed at the step (never the state), so an event read later
# still tells what happened then.
def _card_drawn(step: int, seat: int, card: int | None) -> pb.Event:
    """The drawer's own event when card is given, else the public one without the card."""
    if card is None:
        drawn = ofpb.OpposingForceCardDrawn(seat=seat)
        return _event_message(step, f"seat {seat} draws a card", drawn)
    drawn = ofpb.OpposingForceCardDrawn(seat=seat, card=cards.to_message(card))
    return _event_message(step, f"seat {seat} draws {cards.label(card)}", drawn, AUDIENCES[seat])


def _card_played(step: int, seat: int, card: int, position: int) -> pb.Event:
    played = ofpb.OpposingForceCardPlayed(seat=seat, card=cards.to_message(card), position=position)
    text = f"seat {seat} plays {cards.label(card)} to position {position}"
    return _event_message(step, text, played)


def _position_claimed(step: int, seat: int, position: int) -> pb.Event:
    claimed = ofpb.OpposingForcePositionClaimed(seat=seat, position=position)
    return _event_message(step, f"seat {seat} claims position {position}", claimed)


def _passed(step: int, seat: int) -> pb.Event:
    return _event_message(step, f"seat {seat} passes", ofpb.OpposingForcePassed(seat=seat))


def _event_message(
    step: int,
    text: str,
    message: ofpb.OpposingForceCardDrawn
    | ofpb.OpposingForceCardPlayed
    | ofpb.OpposingForcePositionClaimed
    | ofpb.OpposingForcePassed,
    audience: frozenset[int] | None = None,
) -> pb.Event:
    field = {
        ofpb.OpposingForceCardDrawn: "card_drawn",
        ofpb.OpposingForceCardPlayed: "card_played",
        ofpb.OpposingForcePositionClaimed: "position_claimed",
        ofpb.OpposingForcePassed: "passed",
    }[type(message)]
    typed = ofpb.OpposingForceEvent(**{field: message})  # type: ignore[arg-type]
    return event_message(step, text, audience, opposing_force=typed)


def render_observation(obs: ofpb.OpposingForceObservation) -> str:
    """The table as text: seat 1's side on top, seat 0's below, claims marked."""

    def side_text(side: ofpb.OpposingForceSide) -> str:
        return " ".join(cards.label(cards.from_message(c)) for c in side.cards).ljust(8)

    lines = [f"Opposing Force  deck {obs.deck_size}  to move: seat {obs.current_seat}"]
    for p in obs.positions:
        claim = f"claimed by seat {p.claimed_by}" if p.HasField("claimed_by") else ""
        lines.append(f"  {p.index}: [{side_text(p.sides[0])}] vs [{side_text(p.sides[1])}] {claim}")
    sizes = ", ".join(f"seat {s}: {n}" for s, n in enumerate(obs.hand_sizes))
    lines.append(f"  hands: {sizes}")
    if obs.HasField("seat"):
        hand = " ".join(cards.label(cards.from_message(c)) for c in obs.hand)
        lines.append(f"  seat {obs.seat} holds: {hand}")
    return "\n".join(lines)


OPPOSING_FORCE: GameDefinition[OpposingForceOptions] = GameDefinition(
    name="opposing-force",
    title="Opposing Force",
    seat_counts=(2,),
    rules_version=RULES_VERSION,
    options_model=OpposingForceOptions,
    state_class=OpposingForceState,
    decision_cap=DECISION_CAP,
)


class OpposingForceSampler(WorldSampler[OpposingForceOptions]):
    """The observation shows everything but the other hand and the deck's order, and no play
    tells anything of the other hand (a pass is legal only with no card or no open position,
    both public), so every split of the unseen cards into a hand of its size and a deck is a
    world the seat cannot rule out: a sample deals the other hand from a shuffle of them."""

    def __init__(self, options: OpposingForceOptions, view: SeatView) -> None:
        super().__init__(view)
        seen = view.observation.opposing_force
        base = OpposingForceState(options, 2)
        base.hands[self.seat] = sorted(cards.from_message(c) for c in seen.hand)
        for position in seen.positions:
            for seat, side in enumerate(position.sides):
                base.sides[seat][position.index] = [cards.from_message(c) for c in side.cards]
                base.completed[seat][position.index] = side.completed_order
            if position.HasField("claimed_by"):
                base.claimed_by[position.index] = position.claimed_by
        base.completions = max(max(row) for row in base.completed)
        base.current, base.passes, base.decisions = (
            seen.current_seat,
            seen.consecutive_passes,
            seen.decisions,
        )
        on_table = {c for sides in base.sides for side in sides for c in side}
        known = on_table | set(base.hands[self.seat])
        self.unseen = [c for c in cards.DECK if c not in known]
        self.other_hand_size = seen.hand_sizes[1 - self.seat]
        # What the state derives from its table is the same in every world: derived once, here,
        # with a deck of the right size (whether chance is next hangs on it), and cloned.
        base.deck = self.unseen[self.other_hand_size :]
        base.forget_legal_actions()
        self.base = base

    def sample(self, rng: random.Random) -> OpposingForceState:
        state = self.base.clone()
        hand, deck = drawn_apart(self.unseen, self.other_hand_size, rng)
        state.hands[1 - self.seat] = sorted(hand)
        state.deck = sorted(deck)
        state.redealt()
        return state

    def hidden(self, state: GameState[OpposingForceOptions]) -> set[tuple[object, int]]:
        assert isinstance(state, OpposingForceState)
        return {("hand", card) for card in state.hands[1 - self.seat]}
