"""The state machine of Officers' Battle: setup, the four phases of a turn, the end.

A turn is a sequence of atomic decisions (draw source; plays one position at a time, a series
card by card; end battle; bonus sources; the choice after a kill; regroup steps; phase 4).
Every decision is asked, even one with a single legal answer (a forced draw, a lone bonus
source, the only support to bring back), so every step of a seat is in the history. Chance is
explicit: every officer placed and every card drawn from a deck is a chance step, uniform over
the sorted remaining cards, taken at the moment of the draw.
"""

from __future__ import annotations

import random
from bisect import insort
from collections.abc import Callable

from arena.v1 import officers_battle_pb2 as obpb
from arena.v1 import referee_pb2 as pb

from arena_games.base import (
    CHANCE,
    Event,
    GameError,
    GameOptions,
    GameState,
    Result,
    SeatView,
    Step,
    WorldSampler,
    uniform_draw,
)
from arena_games.officers_battle import observe, rules, unseen_deals, view
from arena_games.officers_battle.rules import (
    ACE,
    ACE_BITS,
    DECK_SIZE,
    NONE,
    PLAYABLE_ON,
    POSITIONS,
    RANK_OF,
    SERIES_TOP,
    STANDARD_MASK,
    SUIT_OF,
    SUIT_RANKS,
    card_actions,
    series_starts,
    suit_plans,
)
from arena_games.officers_battle.view import ONLY

# Phases: the numbers of OfficersBattlePhase on the wire.
SETUP, REFORM, DRAW, ACTION, SERIES, BONUS, KILL_CHOICE, KILL_BONUS = 1, 2, 3, 4, 5, 6, 7, 8
REGROUP_SUPPORT, SPECIAL_SUPPORT, OVER = 9, 10, 11
END_TURN = 12  # internal: the turn is over, checks and the next turn follow

# Phases whose decision is a draw source.
DRAW_PHASES = (DRAW, BONUS, KILL_BONUS)

# Pending chance steps.
NO_CHANCE, SETUP_OFFICER, SETUP_CARD, CARD_DRAW, OFFICER_DRAW = 0, 1, 2, 3, 4

# What each position saw this turn.
UNPLAYED, PLAYED_SINGLE, PLAYED_KILL = 0, 1, 2

SLOT_OF_POSITION = (
    obpb.OFFICERS_BATTLE_SLOT_WEST,
    obpb.OFFICERS_BATTLE_SLOT_CENTRE,
    obpb.OFFICERS_BATTLE_SLOT_EAST,
)
SLOT_OF_RETREAT = (obpb.OFFICERS_BATTLE_SLOT_RETREAT_1, obpb.OFFICERS_BATTLE_SLOT_RETREAT_2)
SUPPORT_SLOT = obpb.OFFICERS_BATTLE_SLOT_SUPPORT
OWN_DECK = obpb.OFFICERS_BATTLE_SOURCE_OWN_DECK
DISCARD_PILE = obpb.OFFICERS_BATTLE_SOURCE_DISCARD_PILE

MOVER = ((0,), (1,))  # to_move() of each seat, built once
# The draw sources by [own deck has cards][discard pile has cards]: the deck while it lasts
# (it must be drawn from), the discard pile's top, or no draw once the deck is empty.
DRAW_SOURCES = (
    ((rules.NO_DRAW,), (rules.DRAW_DISCARD, rules.NO_DRAW)),
    ((rules.DRAW_DECK,), (rules.DRAW_DECK, rules.DRAW_DISCARD)),
)
NOTHING_PLAYED = [UNPLAYED] * POSITIONS  # compared with played, never changed
RETREATS_FROM = tuple(
    tuple(rules.retreat_action(p, r) for r in range(rules.RETREATS)) for p in range(POSITIONS)
)
ACE_BIT = 1 << (ACE - 2)  # the ace among a suit's bits
NATURAL_BITS = (1 << (rules.SERIES_HIGH - 1)) - 1  # ranks 2..10 among a suit's bits
NATURAL_BIT_OF = tuple(0 if rank == ACE else 1 << rank for rank in RANK_OF)  # ranks as bits
ACE_STANDARDS = tuple(c for c in range(rules.DECK_SIZE) if RANK_OF[c] == ACE)
NUMBER_CARDS = tuple(tuple(rules.number_cards_of(seat)) for seat in range(rules.SEATS))
OFFICERS = tuple(tuple(rules.officers_of(seat)) for seat in range(rules.SEATS))


class OfficersBattleOptions(GameOptions):
    """Officers' Battle has no options."""


class OfficersBattleState(GameState[OfficersBattleOptions]):
    def __init__(self, options: OfficersBattleOptions, num_seats: int) -> None:
        super().__init__(options, num_seats)
        seats = range(rules.SEATS)
        self.deck: list[list[int]] = [list(cards) for cards in NUMBER_CARDS]
        self.officer_deck: list[list[int]] = [list(officers) for officers in OFFICERS]
        self.hand: list[list[int]] = [[] for _ in seats]
        # The hand again as a mask (bit c for card id c), kept in step with it for the legal
        # actions; settle() rebuilds it after a hand was arranged by hand.
        self.hand_bits: list[int] = [0, 0]
        # Cards in a hand that came from its owner's deck unseen: the only hidden hand cards.
        self.secret: list[set[int]] = [set() for _ in seats]
        self.front: list[list[int]] = [[NONE] * POSITIONS for _ in seats]
        self.piles: list[list[list[int]]] = [[[] for _ in range(POSITIONS)] for _ in seats]
        self.support: list[int] = [NONE, NONE]
        self.retreats: list[list[list[int]]] = [[[] for _ in range(rules.RETREATS)] for _ in seats]
        self.fallen: list[list[tuple[int, int]]] = [[] for _ in seats]
        # A killed officer awaiting its owner's reform: (position, officer, killing cards).
        self.casualty: list[tuple[int, int, list[int]] | None] = [None, None]
        self.discard: list[int] = []
        self.phase = SETUP
        self.chance = SETUP_OFFICER
        self.setup_seat = 0
        self.placed: list[int] = []
        self.current = 0
        self.turn_number = 0
        self.decisions = 0
        self.previous_idle = False
        self.over_reason = ""
        self.final_scores: tuple[int, int] = (0, 0)
        self._reset_turn()
        self._events: list[Event] = []
        self._legal: list[int] = []
        # to_move(), asked several times a step: set where the work of every step ends (the
        # end of _advance, or _finish), from phase, chance and the seat to move.
        self._movers: tuple[int, ...] = ()
        # Where each card was drawn in the history, for resample (see _draw_steps).
        self._drawn_at: dict[int, int] = {}
        self._drawn_at_length = -1

    def _reset_turn(self) -> None:
        self.played = [UNPLAYED] * POSITIONS
        self.support_used_at = NONE
        self.kill_position = NONE
        self.bonus_due = 0
        self.series_position = NONE
        self.series_suit = NONE
        self.series_cards: list[int] = []
        self.retreated_to = NONE
        self.passed_draw = False
        self.passed_action = False

    # -- whose move ---------------------------------------------------------------------------
    def is_chance(self) -> bool:
        return self.chance != NO_CHANCE

    def chance_outcomes(self) -> list[tuple[int, float]]:
        # a card drawn from the own deck, by far the most frequent, without a call
        pool = self.deck[self.current] if self.chance == CARD_DRAW else self._chance_pool()
        return uniform_draw(pool, len(rules.CARD_IDS))

    def _is_chance_outcome(self, outcome: int) -> bool:
        if self.chance == CARD_DRAW:
            return outcome in self.deck[self.current]
        return outcome in self._chance_pool()

    def _chance_pool(self) -> list[int]:
        if self.chance == CARD_DRAW:
            return self.deck[self.current]
        if self.chance == SETUP_OFFICER:
            return self.officer_deck[self.setup_seat]
        if self.chance == SETUP_CARD:
            return self.deck[self._setup_receiver()]
        if self.chance == OFFICER_DRAW:
            return self.officer_deck[self.current]
        return []

    def _setup_receiver(self) -> int:
        return 0 if len(self.hand[0]) < rules.HAND_START else 1

    def to_move(self) -> tuple[int, ...]:
        return self._movers

    def is_over(self) -> bool:
        return self.phase == OVER

    def result(self) -> Result:
        if self.phase != OVER:
            raise GameError("the game is not over")
        return Result.from_scores(self.final_scores, self.over_reason)

    def _legal_actions(self, seat: int) -> list[int]:
        # Worked out once as each decision is reached, and replaced, never changed, so the
        # base class may keep it.
        return self._legal

    # -- counts -------------------------------------------------------------------------------
    def living(self, seat: int) -> int:
        """Officers alive: front, support, retreated and still in the officer deck."""
        front = POSITIONS - self.front[seat].count(NONE)
        support = 1 if self.support[seat] != NONE else 0
        first, second = self.retreats[seat]
        return front + support + len(first) + len(second) + len(self.officer_deck[seat])

    def scores(self) -> tuple[int, int]:
        """5 per own living officer and 1 per card left in the opponent's hand."""
        return (
            rules.OFFICER_POINTS * self.living(0) + len(self.hand[1]),
            rules.OFFICER_POINTS * self.living(1) + len(self.hand[0]),
        )

    def pile_top(self, seat: int, position: int) -> int | None:
        pile = self.piles[seat][position]
        return rules.rank(pile[-1]) if pile else None

    # -- legal actions ------------------------------------------------------------------------
    def _compute_legal(self) -> list[int]:
        phase = self.phase
        if phase in DRAW_PHASES:
            return list(DRAW_SOURCES[bool(self.deck[self.current])][bool(self.discard)])
        if phase == ACTION:
            return self._action_choices()
        if phase == SERIES:
            return self._series_choices()
        if phase == KILL_CHOICE:
            return [rules.TAKE_PILE, rules.KILL_BONUS]
        if phase == REGROUP_SUPPORT:
            return self._regroup_sources()
        if phase == SPECIAL_SUPPORT:
            return [
                rules.SUPPORT_FROM_RETREAT + r
                for r, stack in enumerate(self.retreats[self.current])
                if stack
            ]
        raise GameError(f"no decision in phase {phase}")

    def _regroup_sources(self) -> list[int]:
        seat = self.current
        sources = [rules.SUPPORT_FROM_DECK] if self.officer_deck[seat] else []
        other = 1 - self.retreated_to
        if self.retreats[seat][other]:
            sources.append(rules.SUPPORT_FROM_RETREAT + other)
        return sources

    def can_regroup(self, seat: int) -> bool:
        return self.support[seat] != NONE and self.living(seat) >= 4

    def open_suits(self, seat: int, position: int) -> set[int]:
        """Suits the seat may play at a position now (the support only if still unused)."""
        mine = self.front[seat][position]
        theirs = self.front[1 - seat][position]
        with_support = self.support_used_at == NONE
        return rules.playable_suits(mine, self.support[seat], theirs, with_support)

    def _action_choices(self) -> list[int]:
        """Pass (and the regroups) or end battle, then the plays: singles, ace kills and
        series starts, worked out on masks: per open suit, the 13 bits of the suit's cards in
        hand (bit i is rank i + 2)."""
        seat, played = self.current, self.played
        mine, theirs, piles = self.front[seat], self.front[1 - seat], self.piles[seat]
        support = self.support[seat]
        if played == NOTHING_PLAYED:
            plays = [rules.PASS]
            if support != NONE and self.living(seat) >= 4:  # can_regroup(seat)
                for position in range(POSITIONS):
                    if mine[position] != NONE and piles[position]:
                        plays += RETREATS_FROM[position]
        else:
            plays = [rules.END_BATTLE]
        bits = self.hand_bits[seat]
        held, aces = (bits | bits >> DECK_SIZE) & STANDARD_MASK, (bits & ACE_BITS).bit_count()
        may_kill = self.kill_position == NONE
        with_support = self.support_used_at == NONE
        for position in range(POSITIONS):
            if played[position] != UNPLAYED:
                continue
            plans = suit_plans(mine[position], support, theirs[position], with_support, position)
            if not plans:
                continue
            pile = piles[position]
            top = RANK_OF[pile[-1]] if pile else 0
            playable = PLAYABLE_ON[top]
            for shift, single, start, kill in plans:
                ranks = held >> shift & SUIT_RANKS
                if ranks & playable:
                    plays += card_actions(single, ranks & playable)
                if may_kill:
                    if kill and ranks & ACE_BIT:
                        plays.append(kill)
                    starts = series_starts(ranks & NATURAL_BITS, aces, SERIES_TOP[top])
                    if starts:
                        plays += card_actions(start, starts)
        plays.sort()
        return plays

    def _series_choices(self) -> list[int]:
        """Cards that keep the series finishable from the hand, and the ways to finish it."""
        seat = self.current
        pile = self.piles[seat][self.series_position]
        top = SERIES_TOP[RANK_OF[pile[-1]]] if pile else 0
        bits = self.hand_bits[seat]
        held, aces = (bits | bits >> DECK_SIZE) & STANDARD_MASK, (bits & ACE_BITS).bit_count()
        suit = self.series_suit
        spare = (held >> suit * 13 & NATURAL_BITS) << 2
        # the naturals laid have distinct ranks, so the sum of their bits is the union
        naturals = sum(map(NATURAL_BIT_OF.__getitem__, self.series_cards))
        jokers = len(self.series_cards) - naturals.bit_count()
        adds, ace = rules.series_additions(naturals, jokers, spare, aces, top)
        base = rules.ADD_TO_SERIES + suit * 13 - 2
        choices = [base + r for r in rules.bit_indices(adds)]
        if ace:
            choices += [rules.ADD_TO_SERIES + a for a in ACE_STANDARDS if held >> a & 1]
        choices += rules.series_finishes(naturals, len(self.series_cards), top)
        choices.sort()
        return choices

    # -- moving on ----------------------------------------------------------------------------
    def _advance(self) -> None:
        """Run the automatic steps (reform, end of turn) until a chance step, a decision or
        the end. Every decision is asked, a lone answer included (the ruling "forced
        decisions are still asked"): answering for the seat at once would tell the opponent,
        through timing, what it could not do."""
        # Most frequent phases first; a finished game has no chance step pending.
        while self.chance == NO_CHANCE:
            phase = self.phase
            if phase == ACTION:
                self._legal = self._action_choices()
            elif phase in DRAW_PHASES:
                self._legal = list(DRAW_SOURCES[bool(self.deck[self.current])][bool(self.discard)])
            elif phase == SERIES:
                self._legal = self._series_choices()
            elif phase == END_TURN:
                self._end_turn()
                continue
            elif phase == REFORM:
                if self.casualty[self.current] is None:
                    self.phase = DRAW  # nothing to reform, the usual case
                else:
                    self._reform()
                continue
            elif phase == OVER:
                break
            else:
                self._legal = self._compute_legal()
            self._movers = MOVER[self.current]
            return
        self._legal = []
        self._movers = ()

    def _emit(self, build: Callable[..., pb.Event], *values: object) -> None:
        """A public event, built from the values by a view function when first read."""
        self._events.append(Event(build, None, len(self.history), *values))

    def _apply_chance(self, outcome: int) -> list[Event]:
        self._events = []
        kind, self.chance = self.chance, NO_CHANCE
        if kind == CARD_DRAW:
            self.deck[self.current].remove(outcome)
            self._into_hand(self.current, outcome, OWN_DECK)
            self._after_draw()
        elif kind == SETUP_OFFICER:
            self._place_setup_officer(outcome)
        elif kind == SETUP_CARD:
            self._deal_setup_card(outcome)
        else:
            self.officer_deck[self.current].remove(outcome)
            self._new_support(outcome, obpb.OFFICERS_BATTLE_SLOT_OFFICER_DECK)
            if self.phase == REGROUP_SUPPORT:
                self.phase = END_TURN
        self._advance()
        return self._events

    def _apply_action(self, seat: int, action: int) -> list[Event]:
        self._events = []
        self.decisions += 1
        handler, arguments = HANDLERS[action]
        handler(self, *arguments)
        self._advance()
        if self.decisions >= rules.DECISION_CAP and self.phase != OVER:
            self._finish(f"decision cap of {rules.DECISION_CAP} reached")
        return self._events

    def _pass(self) -> None:
        self.passed_action = True
        self._emit(view.passed_event, self.current)
        self._to_special_support()

    def _end_battle(self) -> None:
        self._emit(view.battle_ended_event, self.current)
        self._after_battle()

    # -- setup --------------------------------------------------------------------------------
    def _place_setup_officer(self, officer: int) -> None:
        """East, Centre, West, then Support, face up; more than two of one rank among the
        four sends all twelve back for another deal (more chance steps in the history)."""
        seat = self.setup_seat
        self.officer_deck[seat].remove(officer)
        slot = len(self.placed)
        self.placed.append(officer)
        if slot < POSITIONS:
            position = rules.SETUP_ORDER[slot]
            self.front[seat][position] = officer
            where = SLOT_OF_POSITION[position]
        else:
            self.support[seat] = officer
            where = SUPPORT_SLOT
        self._emit(view.placed_event, seat, officer, where)
        if len(self.placed) < rules.FRONT_SLOTS:
            self.chance = SETUP_OFFICER
            return
        if rules.needs_reshuffle(self.placed):
            self.officer_deck[seat] = sorted(self.officer_deck[seat] + self.placed)
            self.front[seat] = [NONE] * POSITIONS
            self.support[seat] = NONE
            self._emit(view.reshuffled_event, seat)
            self.chance = SETUP_OFFICER
        elif seat == 0:
            self.setup_seat = 1
            self.chance = SETUP_OFFICER
        else:
            self.chance = SETUP_CARD
        self.placed = []

    def _deal_setup_card(self, card: int) -> None:
        seat = self._setup_receiver()
        self.deck[seat].remove(card)
        self._into_hand(seat, card, OWN_DECK, bonus=False)
        if len(self.hand[1]) < rules.HAND_START:
            self.chance = SETUP_CARD
        else:
            self._start_turn(0)

    def _start_turn(self, seat: int) -> None:
        self.current = seat
        self.turn_number += 1
        self._reset_turn()
        self.phase = REFORM
        self._emit(view.turn_started_event, seat, self.turn_number)

    # -- phase 1: reform ----------------------------------------------------------------------
    def _reform(self) -> None:
        """The killed officer and the top killing card leave the game, the rest of the series
        goes to the discard pile (its top card on top), the support moves to the empty
        position, and the officer deck gives a new support (a chance step) if it has one."""
        seat = self.current
        self.phase = DRAW
        fallen = self.casualty[seat]
        if fallen is None:
            return
        position, officer, series = fallen
        self.casualty[seat] = None
        self.fallen[seat].append((officer, series[-1]))
        self.discard.extend(series[:-1])
        self._emit(view.removed_event, seat, officer, series[-1], tuple(series[:-1]))
        support = self.support[seat]
        if support != NONE:
            self.front[seat][position] = support
            self.support[seat] = NONE
            self._emit_move(seat, support, SUPPORT_SLOT, SLOT_OF_POSITION[position])
        if self.officer_deck[seat]:
            self.chance = OFFICER_DRAW

    def _emit_move(self, seat: int, officer: int, source: int, target: int) -> None:
        self._emit(view.moved_event, seat, officer, source, target)

    def _new_support(self, officer: int, source: int) -> None:
        seat = self.current
        self.support[seat] = officer
        if source == obpb.OFFICERS_BATTLE_SLOT_OFFICER_DECK:
            self._emit(view.support_placed_event, seat, officer)
        else:
            self._emit_move(seat, officer, source, SUPPORT_SLOT)

    # -- drawing ------------------------------------------------------------------------------
    def _into_hand(self, seat: int, card: int, source: int, bonus: bool | None = None) -> None:
        insort(self.hand[seat], card)
        self.hand_bits[seat] |= 1 << card
        if bonus is None:
            bonus = self.phase != DRAW
        if source == OWN_DECK:
            self.secret[seat].add(card)
            step = len(self.history)  # _emit by hand, for the most frequent events
            events = self._events
            events.append(Event(view.drawn_privately_event, ONLY[seat], step, seat, bonus, card))
            events.append(Event(view.drawn_unseen_event, None, step, seat, bonus))
        else:
            self._emit(view.drawn_from_discard_event, seat, bonus, card)

    def _draw(self, from_deck: bool) -> None:
        if from_deck:
            self.chance = CARD_DRAW
            return
        self._into_hand(self.current, self.discard.pop(), DISCARD_PILE)
        self._after_draw()

    def _no_draw(self) -> None:
        seat = self.current
        bonus = self.phase != DRAW
        if not bonus:
            self.passed_draw = True
        self._emit(view.no_draw_event, seat, bonus)
        self._after_draw()

    def _after_draw(self) -> None:
        if self.phase == DRAW:
            self.phase = ACTION
        elif self.phase == BONUS:
            self.bonus_due -= 1
            if self.bonus_due == 0:
                self._after_bonuses()
        else:
            self._discard_pile(self.kill_position)
            self._to_special_support()

    # -- phase 3: battle ----------------------------------------------------------------------
    def _take_from_hand(self, seat: int, card: int) -> int:
        """The seat's copy of a standard card that leaves the hand: one everybody saw arrive
        if there is one, else the lowest id (only rank and suit are on the wire)."""
        bits, secret = self.hand_bits[seat], self.secret[seat]
        chosen, other = card, card + rules.DECK_SIZE
        if not bits >> card & 1 or (card in secret and bits >> other & 1 and other not in secret):
            chosen = other
        self.hand[seat].remove(chosen)
        self.hand_bits[seat] = bits ^ 1 << chosen
        secret.discard(chosen)
        return chosen

    def _use_support_if_needed(self, position: int, suit: int) -> None:
        seat = self.current
        mine, theirs = self.front[seat][position], self.front[1 - seat][position]
        if rules.front_suit(mine, theirs) != suit:
            self.support_used_at = position

    def _single(self, card: int, position: int) -> None:
        seat = self.current
        self._use_support_if_needed(position, SUIT_OF[card])
        played = self._take_from_hand(seat, card)
        self.piles[seat][position].append(played)
        self.played[position] = PLAYED_SINGLE
        self.phase = ACTION
        self._emit(view.played_event, seat, played, position)

    def _ace_kill(self, card: int, position: int) -> None:
        seat = self.current
        self._use_support_if_needed(position, SUIT_OF[card])
        ace = self._take_from_hand(seat, card)
        self.played[position] = PLAYED_KILL
        self._kill(position, [ace])

    def _kill(self, position: int, killing: list[int]) -> None:
        seat, victim = self.current, 1 - self.current
        officer = self.front[victim][position]
        self.front[victim][position] = NONE
        self.casualty[victim] = (position, officer, killing)
        self.kill_position = position
        self.phase = ACTION
        self._emit(view.killed_event, seat, position, officer, tuple(killing))

    def _start_series(self, card: int, position: int) -> None:
        self._use_support_if_needed(position, SUIT_OF[card])
        self.series_position = position
        self.series_suit = SUIT_OF[card]
        self.played[position] = PLAYED_KILL
        self.kill_position = position
        self.phase = SERIES
        self._add_to_series(card)

    def _add_to_series(self, card: int) -> None:
        seat = self.current
        laid = self._take_from_hand(seat, card)
        self.series_cards.append(laid)
        self._emit(view.series_card_event, seat, laid, self.series_position)

    def _finish_series(self, low: int) -> None:
        series = rules.arrange(self.series_cards, low)
        position = self.series_position
        self.series_cards = []
        self.series_position = NONE
        self.series_suit = NONE
        self._kill(position, series)

    def _after_battle(self) -> None:
        self.bonus_due = self.played.count(PLAYED_SINGLE)
        if self.bonus_due:
            self.phase = BONUS
        else:
            self._after_bonuses()

    def _after_bonuses(self) -> None:
        if self.kill_position != NONE:
            self.phase = KILL_CHOICE
        else:
            self._to_special_support()

    def _kill_choice(self, take_pile: bool) -> None:
        if take_pile:
            self._pile_to_hand(self.kill_position)
            self._to_special_support()
        else:
            self.phase = KILL_BONUS

    def _pile_to_hand(self, position: int) -> None:
        seat = self.current
        pile = self.piles[seat][position]
        self.piles[seat][position] = []
        self.hand[seat] = sorted(self.hand[seat] + pile)
        self.hand_bits[seat] |= rules.card_mask(pile)
        self._emit(view.pile_event, seat, position, tuple(pile), True)

    def _discard_pile(self, position: int) -> None:
        seat = self.current
        pile = self.piles[seat][position]
        self.piles[seat][position] = []
        self.discard.extend(pile)
        self._emit(view.pile_event, seat, position, tuple(pile), False)

    # -- phase 3: regroup ---------------------------------------------------------------------
    def _retreat(self, position: int, retreat: int) -> None:
        seat = self.current
        officer = self.front[seat][position]
        self.retreats[seat][retreat].append(officer)
        self._emit_move(seat, officer, SLOT_OF_POSITION[position], SLOT_OF_RETREAT[retreat])
        self._pile_to_hand(position)
        support = self.support[seat]
        self.front[seat][position] = support
        self.support[seat] = NONE
        self._emit_move(seat, support, SUPPORT_SLOT, SLOT_OF_POSITION[position])
        self.retreated_to = retreat
        if self._regroup_sources():
            self.phase = REGROUP_SUPPORT
        else:
            self._to_special_support()

    def _support_choice(self, action: int) -> None:
        seat = self.current
        if action == rules.SUPPORT_FROM_DECK:
            self.chance = OFFICER_DRAW
            return
        retreat = action - rules.SUPPORT_FROM_RETREAT
        self._new_support(self.retreats[seat][retreat].pop(), SLOT_OF_RETREAT[retreat])
        self.phase = END_TURN

    # -- phase 4 and the end of the turn ------------------------------------------------------
    def _to_special_support(self) -> None:
        """Phase 4: with no support officer, a retreated officer (if any) takes the place."""
        seat = self.current
        if self.support[seat] == NONE and any(self.retreats[seat]):
            self.phase = SPECIAL_SUPPORT
        else:
            self.phase = END_TURN

    def _end_turn(self) -> None:
        seat = self.current
        idle = self.passed_draw and self.passed_action
        for loser in range(rules.SEATS):
            if (  # no living officer left: living(loser) == 0, asked front first
                self.front[loser].count(NONE) == POSITIONS
                and self.support[loser] == NONE
                and not self.officer_deck[loser]
                and not any(self.retreats[loser])
            ):
                self._finish(f"seat {loser} has lost all its officers")
                return
        if idle and self.previous_idle:
            self._finish("both own decks are empty and both players passed in turn")
            return
        self.previous_idle = idle
        self._start_turn(1 - seat)

    def _finish(self, reason: str) -> None:
        self.final_scores = self.scores()
        self.over_reason = f"{reason}; scores {self.final_scores[0]}-{self.final_scores[1]}"
        self.phase = OVER
        self.chance = NO_CHANCE
        self._legal = []
        self._movers = ()

    # -- what seats see -----------------------------------------------------------------------
    def observation(self, seat: int | None) -> pb.Observation:
        return observe.observation(self, seat)

    def action_label(self, action: int) -> str:
        return rules.action_label(action)

    def chance_label(self, outcome: int) -> str:
        return rules.label(outcome)

    def action_message(self, action: int) -> pb.Action:
        return view.action_message(action)

    def render(self, seat: int | None) -> str:
        return view.render(self.observation(seat).officers_battle)

    def settle(self) -> None:
        """Recompute what comes next after a test has arranged the state by hand."""
        self._events = []
        self.hand_bits = [rules.card_mask(hand) for hand in self.hand]
        self._advance()
        self.forget_legal_actions()

    # -- search and tests ---------------------------------------------------------------------
    def clone(self) -> OfficersBattleState:
        other = OfficersBattleState.__new__(OfficersBattleState)
        # Every attribute at once (numbers, strings, tuples and the legal list, which is
        # replaced, never changed), then fresh copies of the containers.
        other.__dict__.update(self.__dict__)
        other.history = list(self.history)
        other.deck = [list(d) for d in self.deck]
        other.officer_deck = [list(d) for d in self.officer_deck]
        other.hand = [list(h) for h in self.hand]
        other.hand_bits = list(self.hand_bits)
        other.secret = [set(s) for s in self.secret]
        other.front = [list(f) for f in self.front]
        other.piles = [[list(p) for p in piles] for piles in self.piles]
        other.support = list(self.support)
        other.retreats = [[list(r) for r in stacks] for stacks in self.retreats]
        other.fallen = [list(f) for f in self.fallen]
        other.casualty = [None if c is None else (c[0], c[1], list(c[2])) for c in self.casualty]
        other.discard = list(self.discard)
        other.played = list(self.played)
        other.series_cards = list(self.series_cards)
        other.placed = list(self.placed)
        other._events = []
        return other

    @classmethod
    def world_sampler(
        cls, options: OfficersBattleOptions, view: SeatView
    ) -> WorldSampler[OfficersBattleOptions]:
        # imported here: the sampler builds states of this class
        from arena_games.officers_battle.officers_worlds import OfficersBattleWorlds

        return OfficersBattleWorlds(options, view)

    def resample(self, seat: int, rng: random.Random) -> OfficersBattleState:
        """Re-deal the other seat's unseen hand cards from every card of its own that the seat
        has not seen (its unseen hand and its deck: one pool, the same set whatever the split),
        with deal_unseen. The history's draws of the cards dealt away are rewritten to the new
        ones, so it still replays; where they were drawn is found once per history."""
        other = 1 - seat
        unseen = self.secret[other]
        world = self.clone()
        pool = sorted(unseen.union(self.deck[other]))
        dealt = world.deal_unseen(other, pool, len(unseen), rng)
        drawn_at = self._draw_steps()
        history = world.history
        for old, new in zip(sorted(unseen - dealt), sorted(dealt - unseen), strict=True):
            if old in drawn_at:  # else a state with no such history (arranged, or a sample)
                history[drawn_at[old]] = Step(CHANCE, new)
        return world  # deal_unseen dropped its copy of the index: its history differs

    def deal_unseen(self, seat: int, pool: list[int], count: int, rng: random.Random) -> set[int]:
        """Deal count cards of the pool (the seat's own cards nobody else has seen, sorted) to
        the seat as its unseen hand cards, the rest as its deck, uniformly over the deals that
        keep this state possible (see unseen_deals)."""
        known = [c for c in self.hand[seat] if c not in self.secret[seat]]
        laying = self.phase == SERIES and self.current == seat and not self.is_chance()
        series = self._series_in_progress(known) if laying else None
        secret = set(unseen_deals.deal(pool, count, rng, series))
        self.hand[seat] = sorted(known + list(secret))
        self.hand_bits[seat] = rules.card_mask(self.hand[seat])
        self.secret[seat] = secret
        self.deck[seat] = [c for c in pool if c not in secret]
        if self._movers and self.current == seat:  # the other seat's choices hold
            self._legal = self._compute_legal()
        self.forget_legal_actions()
        return secret

    def _series_in_progress(self, known: list[int]) -> unseen_deals.SeriesInProgress:
        """The current seat's series as unseen_deals reads it, with its hand's known cards."""
        pile = self.piles[self.current][self.series_position]
        suit = self.series_suit
        spare = 0
        for card in known:
            if SUIT_OF[card] == suit:
                spare |= NATURAL_BIT_OF[card]
        return unseen_deals.SeriesInProgress(
            suit=suit,
            naturals=sum(map(NATURAL_BIT_OF.__getitem__, self.series_cards)),
            laid=len(self.series_cards),
            top=SERIES_TOP[RANK_OF[pile[-1]]] if pile else 0,
            known_spare=spare,
            known_aces=sum(1 for card in known if RANK_OF[card] == ACE),
        )

    def _draw_steps(self) -> dict[int, int]:
        """Per card drawn from a deck, the index of its chance step in the history (a number
        card leaves its deck once), made once per history length: search resamples one
        state many times."""
        if self._drawn_at_length != len(self.history):
            self._drawn_at = {
                step.action: index
                for index, step in enumerate(self.history)
                if step.seat == CHANCE and not rules.is_officer(step.action)
            }
            self._drawn_at_length = len(self.history)
        return self._drawn_at

    def forget_legal_actions(self) -> None:
        super().forget_legal_actions()
        self._drawn_at_length = -1

    def key(self) -> tuple[object, ...]:
        return (
            tuple(tuple(d) for d in self.deck),
            tuple(tuple(d) for d in self.officer_deck),
            tuple(tuple(h) for h in self.hand),
            tuple(tuple(sorted(s)) for s in self.secret),
            tuple(tuple(f) for f in self.front),
            tuple(tuple(tuple(p) for p in piles) for piles in self.piles),
            tuple(self.support),
            tuple(tuple(tuple(r) for r in stacks) for stacks in self.retreats),
            tuple(tuple(f) for f in self.fallen),
            tuple(None if c is None else (c[0], c[1], tuple(c[2])) for c in self.casualty),
            tuple(self.discard),
            tuple(getattr(self, name) for name in _SCALARS),
            tuple(self.played),
            tuple(self.series_cards),
            tuple(self.placed),
            tuple((s.seat, s.action) for s in self.history),
        )


_SCALARS = (
    "phase",
    "chance",
    "setup_seat",
    "current",
    "turn_number",
    "decisions",
    "previous_idle",
    "over_reason",
    "final_scores",
    "support_used_at",
    "kill_position",
    "bonus_due",
    "series_position",
    "series_suit",
    "retreated_to",
    "passed_draw",
    "passed_action",
)


Handler = tuple[Callable[..., None], tuple[int, ...]]


def _handler(action: int) -> Handler:
    """The method that carries out an action and its arguments (cards are standard cards)."""
    state = OfficersBattleState
    try:
        kind = rules.action_kind(action)
    except ValueError:
        return _not_an_action, (action,)
    if kind == "add":
        return state._add_to_series, (action - rules.ADD_TO_SERIES,)
    if kind in ("single", "start", "ace_kill"):
        method, base = {
            "single": (state._single, rules.SINGLE),
            "start": (state._start_series, rules.START_SERIES),
            "ace_kill": (state._ace_kill, rules.ACE_KILL),
        }[kind]
        return method, rules.card_and_position(action, base)
    if kind == "finish":
        return state._finish_series, (action - rules.FINISH_SERIES + rules.SERIES_LOW,)
    if kind == "retreat":
        return state._retreat, divmod(action - rules.RETREAT, rules.RETREATS)
    if kind == "draw":
        return state._draw, (action == rules.DRAW_DECK,)
    if kind == "kill_choice":
        return state._kill_choice, (action == rules.TAKE_PILE,)
    if kind == "support":
        return state._support_choice, (action,)
    simple = {"no_draw": state._no_draw, "pass": state._pass, "end_battle": state._end_battle}
    return simple[kind], ()


def _not_an_action(_state: OfficersBattleState, action: int) -> None:
    raise GameError(f"not an action: {action}")


# Per action id, how _do carries it out: one lookup instead of a chain of range tests.
HANDLERS: tuple[Handler, ...] = tuple(_handler(action) for action in range(rules.ACTION_END))
