"""Worlds a seat of Officers' Battle cannot tell apart from its own, built from what it was told
(a SeatView, read at one of its own decisions).

A seat sees everything but the other seat's unseen hand cards (drawn from that seat's own deck
and still in its hand) and the order of the decks, which is no part of a state (a draw is a
chance step taken when it is made). So the observation gives almost the whole state; what it
does not say is which deck each card on view came from, since the wire names a card by rank
and suit and each seat owns a whole deck. Counting settles it, card by card:
- the seat's own copy left its deck exactly when the seat drew it (its own draws, each named in
  an event to it alone), and is on view from then on: a card leaves a deck only into its
  owner's hand, and the seat sees its whole hand;
- so the other seat's copy is on view exactly when one more copy is on view than the seat
  drew, and otherwise it is in that seat's deck or unseen hand.
Which copy lies where among two on view never shows and never matters (a hand plays the copy
everybody saw arrive first), so they are placed in a fixed order, the seat's own unseen hand
cards first (they are its own copies). The other seat's unseen hand is then dealt afresh for
each sample from its copies not on view (see unseen_deals).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable

from arena.v1 import cards_pb2
from arena.v1 import officers_battle_pb2 as obpb

from arena_games import cards
from arena_games.base import GameError, GameState, SeatView, WorldSampler
from arena_games.officers_battle import rules
from arena_games.officers_battle import state as st
from arena_games.officers_battle.rules import NONE
from arena_games.officers_battle.state import OfficersBattleOptions, OfficersBattleState

NUMBER_STANDARDS = tuple(c for c in cards.DECK if not rules.JACK <= cards.rank(c) <= rules.KING)
DECISION_PHASES = frozenset(
    {st.DRAW, st.ACTION, st.SERIES, st.BONUS, st.KILL_CHOICE, st.KILL_BONUS}
    | {st.REGROUP_SUPPORT, st.SPECIAL_SUPPORT}
)


def _standards(items: Iterable[cards_pb2.Card]) -> list[int]:
    return [cards.from_message(c) for c in items]


def own_draws(view: SeatView) -> set[int]:
    """The standard cards the seat drew from its own deck (the setup's deal included): the
    events only it received (public ones are passed over first, being most)."""
    drawn: set[int] = set()
    for event in view.events:
        if event.public:
            continue
        message = event.officers_battle.card_drawn
        if (
            message.seat == view.seat
            and message.source == obpb.OFFICERS_BATTLE_SOURCE_OWN_DECK
            and message.HasField("card")
        ):
            drawn.add(cards.from_message(message.card))
    return drawn


class Copies:
    """Hands out the card ids of the number cards on view, by the counting of this module's
    docstring, and lists the other seat's copies not on view."""

    def __init__(self, seat: int, drawn: set[int], on_view: Counter[int]) -> None:
        self.free: dict[int, list[int]] = {}
        self.unseen_of_other: list[int] = []
        for standard in NUMBER_STANDARDS:
            copies = [rules.card_id(seat, standard)] if standard in drawn else []
            others = on_view[standard] - len(copies)
            if others not in (0, 1):
                raise GameError(
                    f"the view shows {on_view[standard]} {cards.label(standard)} and the seat "
                    f"drew {len(copies)} from its deck: no position of this game"
                )
            if others:
                copies.append(rules.card_id(1 - seat, standard))
            else:
                self.unseen_of_other.append(rules.card_id(1 - seat, standard))
            self.free[standard] = copies

    def own(self, seat: int, standards: Iterable[int]) -> list[int]:
        """The seat's own copies (of its unseen hand cards, which it drew)."""
        mine = []
        for standard in standards:
            copy = rules.card_id(seat, standard)
            if copy not in self.free[standard]:
                raise GameError(f"the seat holds {cards.label(standard)} unseen but never drew it")
            self.free[standard].remove(copy)
            mine.append(copy)
        return mine

    def take(self, standards: Iterable[int]) -> list[int]:
        try:
            return [self.free[s].pop(0) for s in standards]
        except IndexError:
            raise GameError("the view shows a card more often than it exists") from None


class OfficersBattleWorlds(WorldSampler[OfficersBattleOptions]):
    """The state the view shows, built once with the other seat's unseen hand left out, and
    its copies not on view (the pool): a sample deals that hand from the pool."""

    def __init__(self, options: OfficersBattleOptions, view: SeatView) -> None:
        super().__init__(view)
        seen = view.observation.officers_battle
        if seen.current_seat != self.seat or seen.phase not in DECISION_PHASES:
            raise GameError(
                "Officers' Battle builds worlds at a seat's own decisions: the view's "
                f"observation (seat {seen.current_seat} to move, phase {seen.phase}) is not one"
            )
        self.other = 1 - self.seat
        drawn = own_draws(view)
        copies = Copies(self.seat, drawn, _on_view(seen))
        self.base = base = OfficersBattleState(options, rules.SEATS)
        hand = _standards(seen.hand)
        unseen = Counter(hand) - Counter(_standards(seen.sides[self.seat].known_hand))
        base.secret[self.seat] = set(copies.own(self.seat, unseen.elements()))
        _lay_out(base, seen, copies)
        base.deck[self.seat] = [
            rules.card_id(self.seat, c) for c in NUMBER_STANDARDS if c not in drawn
        ]
        self.pool = copies.unseen_of_other
        self.count = seen.sides[self.other].hand_size - len(base.hand[self.other])
        _check_sizes(base, seen, self.pool, self.count)
        base.settle()

    def sample(self, rng: random.Random) -> OfficersBattleState:
        world = self.base.clone()
        world.deal_unseen(self.other, self.pool, self.count, rng)
        return world

    def hidden(self, state: GameState[OfficersBattleOptions]) -> set[tuple[object, int]]:
        assert isinstance(state, OfficersBattleState)
        return {("hand", card) for card in state.secret[self.other]}


def _on_view(seen: obpb.OfficersBattleObservation) -> Counter[int]:
    """How many copies of each standard card the seat sees outside officers' places."""
    shown = _standards(seen.hand) + _standards(seen.discard_pile)
    shown += _standards(seen.turn.series.cards)
    for side in seen.sides:
        if side.seat != seen.seat:
            shown += _standards(side.known_hand)
        for front in side.fronts:
            shown += _standards(front.pile)
        shown += _standards(side.casualty.cards)
        shown += [cards.from_message(fallen.card) for fallen in side.fallen]
    return Counter(shown)


def _lay_out(
    state: OfficersBattleState, seen: obpb.OfficersBattleObservation, copies: Copies
) -> None:
    """Everything on view into the state: both sides, the discard pile, the turn so far, and the
    seat's hand (its unseen cards already in state.secret)."""
    seat = seen.seat
    for side in seen.sides:
        _lay_out_side(state, side, copies)
    state.hand[1 - seat] = sorted(copies.take(_standards(seen.sides[1 - seat].known_hand)))
    state.discard = copies.take(_standards(seen.discard_pile))
    own_unseen = sorted(state.secret[seat])
    known = Counter(_standards(seen.hand)) - Counter(rules.standard(c) for c in own_unseen)
    state.hand[seat] = sorted(own_unseen + copies.take(known.elements()))
    _lay_out_turn(state, seen, copies)
    state.phase, state.current = seen.phase, seen.current_seat
    state.turn_number, state.decisions = seen.turn_number, seen.decisions
    state.previous_idle = seen.previous_turn_idle
    state.chance, state.setup_seat = st.NO_CHANCE, 1  # as the setup leaves them


def _lay_out_side(
    state: OfficersBattleState, side: obpb.OfficersBattleSide, copies: Copies
) -> None:
    seat = side.seat

    def officer(card: cards_pb2.Card) -> int:
        return rules.card_id(seat, cards.from_message(card))

    for front in side.fronts:
        if front.HasField("officer"):
            state.front[seat][front.position] = officer(front.officer)
        state.piles[seat][front.position] = copies.take(_standards(front.pile))
    if side.HasField("support"):
        state.support[seat] = officer(side.support)
    state.retreats[seat] = [[officer(o) for o in stack.officers] for stack in side.retreats]
    if side.HasField("casualty"):
        killed = side.casualty
        killing = copies.take(_standards(killed.cards))
        state.casualty[seat] = (killed.position, officer(killed.officer), killing)
    state.fallen[seat] = [
        (officer(fallen.officer), copies.take([cards.from_message(fallen.card)])[0])
        for fallen in side.fallen
    ]
    on_view = {o for o in state.front[seat] + [state.support[seat]] if o != NONE}
    on_view |= {o for stack in state.retreats[seat] for o in stack}
    on_view |= {o for o, _ in state.fallen[seat]}
    casualty = state.casualty[seat]
    if casualty is not None:
        on_view.add(casualty[1])
    state.officer_deck[seat] = [o for o in st.OFFICERS[seat] if o not in on_view]


def _lay_out_turn(
    state: OfficersBattleState, seen: obpb.OfficersBattleObservation, copies: Copies
) -> None:
    turn = seen.turn
    kill = turn.kill_position if turn.HasField("kill_position") else NONE
    for position in turn.played_positions:
        state.played[position] = st.PLAYED_KILL if position == kill else st.PLAYED_SINGLE
    state.kill_position = kill
    state.support_used_at = turn.support_used_at if turn.HasField("support_used_at") else NONE
    state.retreated_to = turn.retreated_to if turn.HasField("retreated_to") else NONE
    state.bonus_due, state.passed_draw = turn.bonus_cards_due, turn.passed_draw
    if turn.HasField("series"):
        state.series_position = turn.series.position
        state.series_suit = turn.series.suit - 1  # the wire's suits start at 1
        state.series_cards = copies.take(_standards(turn.series.cards))
    # Only a pass leads to phase 4 with nothing played and no regroup (a battle plays a
    # position, a regroup marks where its officer went); in every other phase of a decision
    # the action phase has not been passed this turn.
    state.passed_action = (
        seen.phase == st.SPECIAL_SUPPORT
        and not turn.played_positions
        and not turn.HasField("retreated_to")
    )


def _check_sizes(
    state: OfficersBattleState, seen: obpb.OfficersBattleObservation, pool: list[int], count: int
) -> None:
    """The counts the view shows agree with the cards it places (else the view is not one
    this game can show, e.g. an own draw missing from its events)."""
    for side in seen.sides:
        seat = side.seat
        deck = len(pool) - count if seat != seen.seat else len(state.deck[seat])
        shown = (len(state.officer_deck[seat]), deck, count >= 0)
        if shown != (side.officer_deck_size, side.deck_size, True):
            raise GameError(
                f"the view of seat {seen.seat} does not add up for seat {seat}: officer deck, "
                f"deck: {shown[:2]} placed, {(side.officer_deck_size, side.deck_size)} shown"
            )
