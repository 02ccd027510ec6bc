"""Opposing Force, an adaptation of Schotten-Totten for a 52-card deck.

Rules: ../shared/seeds/opposing-force.txt, settled by RULINGS.md; the rulings this engine adds
are listed in docs/games/opposing-force.md. Two seats, six cards each, nine positions 0..8.
A turn is any number of Claim actions, then one Play (or a Pass when no play is legal); the draw
that follows a play is a chance step while the deck lasts.
"""

from __future__ import annotations

import random
from itertools import combinations

from arena.v1 import opposing_force_pb2 as ofpb
from arena.v1 import referee_pb2 as pb

from referee.games import cards
from referee.games.base import (
    CHANCE,
    Event,
    GameDefinition,
    GameError,
    GameOptions,
    GameState,
    Result,
    Step,
    make_event,
    uniform_outcomes,
)

POSITIONS = 9
HAND_SIZE = 6
DECISION_CAP = 400
RULES_VERSION = "opposing-force/1"

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


# -- formations -------------------------------------------------------------------------------
def _value(category: int, high: int, mid: int, low: int) -> int:
    return ((category * 16 + high) * 16 + mid) * 16 + low


def formation_value(three: list[int] | tuple[int, ...]) -> int:
    """A number that orders three-card formations as the rules do: category, then ranks."""
    high, mid, low = sorted((cards.rank(c) for c in three), reverse=True)
    flush = cards.suit(three[0]) == cards.suit(three[1]) == cards.suit(three[2])
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


def best_completion(partial: list[int], pool: list[int]) -> int | None:
    """The highest formation value any completion of partial with cards from pool reaches, or
    None when pool has too few cards. Searches categories from the top, so the first one found
    is the best; within a category the highest ranks are tried first."""
    need = 3 - len(partial)
    if need < 0 or len(pool) < need:
        return None
    if need == 0:
        return formation_value(partial)
    in_pool = set(pool)
    ranks = [cards.rank(c) for c in partial]
    distinct = len(set(ranks)) == len(ranks)
    suits = {cards.suit(c) for c in partial}
    suit_choices = sorted(suits) if suits else [0, 1, 2, 3]
    if len(suits) <= 1 and distinct:
        for top in range(14, 3, -1):
            run = {top, top - 1, top - 2}
            if not run.issuperset(ranks):
                continue
            missing = run.difference(ranks)
            for s in suit_choices:
                if all(cards.make(r, s) in in_pool for r in missing):
                    return _value(STRAIGHT_FLUSH, top, top - 1, top - 2)
    if len(set(ranks)) <= 1:
        for r in sorted(set(ranks)) if ranks else range(14, 1, -1):
            if sum(1 for s in range(4) if cards.make(r, s) in in_pool) >= need:
                return _value(THREE_OF_A_KIND, r, r, r)
    if len(suits) <= 1:
        best = -1
        for s in suit_choices:
            ranked = sorted((c for c in pool if cards.suit(c) == s), key=cards.rank, reverse=True)
            if len(ranked) >= need:
                high, mid, low = sorted(
                    ranks + [cards.rank(c) for c in ranked[:need]], reverse=True
                )
                best = max(best, _value(FLUSH, high, mid, low))
        if best >= 0:
            return best
    if distinct:
        pool_ranks = {cards.rank(c) for c in pool}
        for top in range(14, 3, -1):
            run = {top, top - 1, top - 2}
            if run.issuperset(ranks) and pool_ranks.issuperset(run.difference(ranks)):
                return _value(STRAIGHT, top, top - 1, top - 2)
    top_pool = sorted((cards.rank(c) for c in pool), reverse=True)[:need]
    high, mid, low = sorted(ranks + top_pool, reverse=True)
    return _value(ANYTHING_ELSE, high, mid, low)


def best_completion_by_enumeration(partial: list[int], pool: list[int]) -> int | None:
    """The same as best_completion by trying every completion: the oracle for tests."""
    need = 3 - len(partial)
    values = [formation_value(partial + list(extra)) for extra in combinations(pool, need)]
    return max(values) if values else None


# -- the state --------------------------------------------------------------------------------
class OpposingForceState(GameState[OpposingForceOptions]):
    def __init__(self, options: OpposingForceOptions, num_seats: int) -> None:
        super().__init__(options, num_seats)
        self.hands: list[list[int]] = [[], []]
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

    # -- whose move ---------------------------------------------------------------------------
    def _dealing(self) -> bool:
        return len(self.deck) > 52 - 2 * HAND_SIZE

    def is_chance(self) -> bool:
        if self.over_reason:
            return False
        return self._dealing() or (self.drawing is not None and bool(self.deck))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self.is_chance():
            return []
        return uniform_outcomes(self.deck)

    def _is_chance_outcome(self, outcome: int) -> bool:
        return self.is_chance() and outcome in self.deck

    def _receiver(self) -> int:
        """The seat that gets the next card: alternating during the deal, else the drawer."""
        if self._dealing():
            return (52 - len(self.deck)) % 2
        assert self.drawing is not None
        return self.drawing

    def to_move(self) -> tuple[int, ...]:
        if self.over_reason or self.is_chance():
            return ()
        return (self.current,)

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
        actions = [claim_action(p) for p in range(POSITIONS) if self.can_claim(seat, p)]
        open_positions = [
            p for p in range(POSITIONS) if self.claimed_by[p] < 0 and len(self.sides[seat][p]) < 3
        ]
        plays = [play_action(c, p) for c in self.hands[seat] for p in open_positions]
        if not plays:
            return [PASS, *actions]
        return actions + sorted(plays)

    def unseen_cards(self) -> list[int]:
        """Cards not on the table: the deck and both hands, as the claim proof counts them."""
        return sorted(self.deck + self.hands[0] + self.hands[1])

    def can_claim(self, seat: int, position: int) -> bool:
        """Whether the seat can prove the position is theirs now (RULINGS: the referee offers
        only provable claims; the proof uses only cards not on the table)."""
        mine = self.sides[seat][position]
        if self.claimed_by[position] >= 0 or len(mine) < 3:
            return False
        other = 1 - seat
        theirs = self.sides[other][position]
        my_value = formation_value(mine)
        if len(theirs) == 3:
            their_value = formation_value(theirs)
            if my_value != their_value:
                return my_value > their_value
            return self.completed[seat][position] < self.completed[other][position]
        best = best_completion(theirs, self.unseen_cards())
        return best is None or best <= my_value

    def any_claim_possible(self) -> bool:
        return any(self.can_claim(s, p) for s in range(2) for p in range(POSITIONS))

    # -- moves --------------------------------------------------------------------------------
    def _apply_chance(self, outcome: int) -> list[Event]:
        seat = self._receiver()
        self.deck.remove(outcome)
        self.hands[seat].append(outcome)
        self.hands[seat].sort()
        if not self._dealing():
            self.drawing = None
        step = len(self.history)
        private = ofpb.OpposingForceCardDrawn(seat=seat, card=cards.to_message(outcome))
        public = ofpb.OpposingForceCardDrawn(seat=seat)
        return [
            _event(step, f"seat {seat} draws {cards.label(outcome)}", private, frozenset([seat])),
            _event(step, f"seat {seat} draws a card", public),
        ]

    def _apply_action(self, seat: int, action: int) -> list[Event]:
        kind, card, position = decode(action)
        step = len(self.history)
        self.decisions += 1
        if kind == "claim":
            self.claimed_by[position] = seat
            message = ofpb.OpposingForcePositionClaimed(seat=seat, position=position)
            events = [_event(step, f"seat {seat} claims position {position}", message)]
            self._check_claim_win(seat)
        elif kind == "play":
            self.hands[seat].remove(card)
            side = self.sides[seat][position]
            side.append(card)
            if len(side) == 3:
                self.completions += 1
                self.completed[seat][position] = self.completions
            played = ofpb.OpposingForceCardPlayed(
                seat=seat, card=cards.to_message(card), position=position
            )
            text = f"seat {seat} plays {cards.label(card)} to position {position}"
            events = [_event(step, text, played)]
            self.passes = 0
            self._end_turn(seat, draw=True)
        else:
            self.passes += 1
            events = [_event(step, f"seat {seat} passes", ofpb.OpposingForcePassed(seat=seat))]
            self._end_turn(seat, draw=False)
            if self.passes >= 2 and not self.any_claim_possible():
                self._end_by_positions("both players passed with no claim possible")
        if not self.over_reason and self.decisions >= DECISION_CAP:
            self._end_by_positions(f"decision cap of {DECISION_CAP} reached")
        return events

    def _end_turn(self, seat: int, draw: bool) -> None:
        self.current = 1 - seat
        if draw and self.deck:
            self.drawing = seat

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
        positions = []
        for p in range(POSITIONS):
            sides = [
                ofpb.OpposingForceSide(
                    cards=[cards.to_message(c) for c in self.sides[s][p]],
                    completed_order=self.completed[s][p],
                )
                for s in range(2)
            ]
            position = ofpb.OpposingForcePosition(index=p, sides=sides)
            if self.claimed_by[p] >= 0:
                position.claimed_by = self.claimed_by[p]
            positions.append(position)
        observation = ofpb.OpposingForceObservation(
            current_seat=self.current,
            hand_sizes=[len(h) for h in self.hands],
            deck_size=len(self.deck),
            positions=positions,
            consecutive_passes=self.passes,
            decisions=self.decisions,
            decision_cap=DECISION_CAP,
        )
        if seat is not None:
            observation.seat = seat
            observation.hand.extend(cards.to_message(c) for c in self.hands[seat])
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
        other.history = list(self.history)
        other.hands = [list(h) for h in self.hands]
        other.deck = list(self.deck)
        other.sides = [[list(side) for side in sides] for sides in self.sides]
        other.completed = [list(row) for row in self.completed]
        other.completions = self.completions
        other.claimed_by = list(self.claimed_by)
        other.current = self.current
        other.drawing = self.drawing
        other.passes = self.passes
        other.decisions = self.decisions
        other.winner = self.winner
        other.over_reason = self.over_reason
        other._legal_cache = self._legal_cache
        return other

    def resample(self, seat: int, rng: random.Random) -> OpposingForceState:
        """Re-deal the other seat's hand from its hand and the deck; the history is rewritten so
        that the other seat's draws are the new cards, and it still replays."""
        other = 1 - seat
        state = self.clone()
        pool = sorted(self.hands[other] + self.deck)
        rng.shuffle(pool)
        new_hand = sorted(pool[: len(self.hands[other])])
        state.hands[other] = new_hand
        state.deck = sorted(pool[len(new_hand) :])
        kept = set(self.hands[other]) & set(new_hand)
        mapping = dict(
            zip(
                [c for c in self.hands[other] if c not in kept],
                [c for c in new_hand if c not in kept],
                strict=True,
            )
        )
        state.history = [
            Step(CHANCE, mapping.get(step.action, step.action)) if step.seat == CHANCE else step
            for step in self.history
        ]
        state.forget_legal_actions()
        return state

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


def _event(
    step: int,
    text: str,
    message: ofpb.OpposingForceCardDrawn
    | ofpb.OpposingForceCardPlayed
    | ofpb.OpposingForcePositionClaimed
    | ofpb.OpposingForcePassed,
    audience: frozenset[int] | None = None,
) -> Event:
    field = {
        ofpb.OpposingForceCardDrawn: "card_drawn",
        ofpb.OpposingForceCardPlayed: "card_played",
        ofpb.OpposingForcePositionClaimed: "position_claimed",
        ofpb.OpposingForcePassed: "passed",
    }[type(message)]
    typed = ofpb.OpposingForceEvent(**{field: message})  # type: ignore[arg-type]
    return make_event(step, text, audience, opposing_force=typed)


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
