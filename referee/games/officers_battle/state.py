"""The state machine of Officers' Battle: setup, the four phases of a turn, the end.

A turn is a sequence of atomic decisions (draw source; plays one position at a time, a series
card by card; end battle; bonus sources; the choice after a kill; regroup steps; phase 4).
A decision with a single legal answer is taken by the engine itself, except in the action phase
and while laying a series, whose answers depend on the hidden hand; those forced steps are not
in the history (replaying the history redoes them). Chance is explicit: every officer placed and
every card drawn from a deck is a chance step, uniform over the sorted remaining cards, taken at
the moment of the draw.
"""

from __future__ import annotations

import random

from arena.v1 import officers_battle_pb2 as obpb
from arena.v1 import referee_pb2 as pb

from referee.games.base import (
    CHANCE,
    Event,
    GameError,
    GameOptions,
    GameState,
    Result,
    Step,
    uniform_outcomes,
)
from referee.games.officers_battle import rules, view
from referee.games.officers_battle.rules import ACE, NONE, POSITIONS

# Phases: the numbers of OfficersBattlePhase on the wire.
SETUP, REFORM, DRAW, ACTION, SERIES, BONUS, KILL_CHOICE, KILL_BONUS = 1, 2, 3, 4, 5, 6, 7, 8
REGROUP_SUPPORT, SPECIAL_SUPPORT, OVER = 9, 10, 11
END_TURN = 12  # internal: the turn is over, checks and the next turn follow

# Phases whose legal answers depend on the hand: never answered by the engine.
HAND_DEPENDENT = (ACTION, SERIES)

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


class OfficersBattleOptions(GameOptions):
    """Officers' Battle has no options."""


class OfficersBattleState(GameState[OfficersBattleOptions]):
    def __init__(self, options: OfficersBattleOptions, num_seats: int) -> None:
        super().__init__(options, num_seats)
        seats = range(rules.SEATS)
        self.deck: list[list[int]] = [rules.number_cards_of(s) for s in seats]
        self.officer_deck: list[list[int]] = [rules.officers_of(s) for s in seats]
        self.hand: list[list[int]] = [[] for _ in seats]
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
        return uniform_outcomes(self._chance_pool())

    def _is_chance_outcome(self, outcome: int) -> bool:
        return outcome in self._chance_pool()

    def _chance_pool(self) -> list[int]:
        if self.chance == SETUP_OFFICER:
            return self.officer_deck[self.setup_seat]
        if self.chance == SETUP_CARD:
            return self.deck[self._setup_receiver()]
        if self.chance == CARD_DRAW:
            return self.deck[self.current]
        if self.chance == OFFICER_DRAW:
            return self.officer_deck[self.current]
        return []

    def _setup_receiver(self) -> int:
        return 0 if len(self.hand[0]) < rules.HAND_START else 1

    def to_move(self) -> tuple[int, ...]:
        if self.phase == OVER or self.chance != NO_CHANCE:
            return ()
        return (self.current,)

    def is_over(self) -> bool:
        return self.phase == OVER

    def result(self) -> Result:
        if self.phase != OVER:
            raise GameError("the game is not over")
        return Result.from_scores(self.final_scores, self.over_reason)

    def _legal_actions(self, seat: int) -> list[int]:
        # Worked out as each decision is reached (to skip single-answer ones), so just read.
        return list(self._legal)

    # -- counts -------------------------------------------------------------------------------
    def living(self, seat: int) -> int:
        """Officers alive: front, support, retreated and still in the officer deck."""
        front = sum(1 for o in self.front[seat] if o != NONE)
        support = 1 if self.support[seat] != NONE else 0
        retreated = sum(len(stack) for stack in self.retreats[seat])
        return front + support + retreated + len(self.officer_deck[seat])

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
        if phase in (DRAW, BONUS, KILL_BONUS):
            return self._draw_sources()
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

    def _draw_sources(self) -> list[int]:
        seat = self.current
        sources = []
        if self.deck[seat]:
            sources.append(rules.DRAW_DECK)
        if self.discard:
            sources.append(rules.DRAW_DISCARD)
        if not self.deck[seat]:
            sources.append(rules.NO_DRAW)
        return sources

    def _regroup_sources(self) -> list[int]:
        seat = self.current
        sources = [rules.SUPPORT_FROM_DECK] if self.officer_deck[seat] else []
        other = 1 - self.retreated_to
        if self.retreats[seat][other]:
            sources.append(rules.SUPPORT_FROM_RETREAT + other)
        return sources

    def _action_choices(self) -> list[int]:
        choices = self._plays()
        if any(self.played):
            return [rules.END_BATTLE, *choices]
        return [rules.PASS, *self._retreats(), *choices]

    def can_regroup(self, seat: int) -> bool:
        return self.support[seat] != NONE and self.living(seat) >= 4

    def _retreats(self) -> list[int]:
        seat = self.current
        if not self.can_regroup(seat):
            return []
        return [
            rules.retreat_action(p, r)
            for p in range(POSITIONS)
            if self.front[seat][p] != NONE and self.piles[seat][p]
            for r in range(rules.RETREATS)
        ]

    def open_suits(self, seat: int, position: int) -> set[int]:
        """Suits the seat may play at a position now (the support only if still unused)."""
        mine = self.front[seat][position]
        theirs = self.front[1 - seat][position]
        with_support = self.support_used_at == NONE
        return rules.playable_suits(mine, self.support[seat], theirs, with_support)

    def _plays(self) -> list[int]:
        seat = self.current
        hand = sorted({rules.standard(c) for c in self.hand[seat]})
        may_kill = self.kill_position == NONE
        spare = self._spare_masks(seat)
        aces = self._aces(seat)
        plays: list[int] = []
        for position in range(POSITIONS):
            if self.played[position] != UNPLAYED:
                continue
            suits = self.open_suits(seat, position)
            if not suits:
                continue
            top = self.pile_top(seat, position) or 0
            theirs = self.front[1 - seat][position]
            for card in hand:
                suit = rules.suit(card)
                if suit not in suits:
                    continue
                card_rank = rules.rank(card)
                if rules.can_play_on(card_rank, top or None):
                    plays.append(rules.single_action(card, position))
                if not may_kill:
                    continue
                if card_rank == ACE:
                    if suit != rules.suit(theirs):
                        plays.append(rules.ace_kill_action(card, position))
                elif rules.completable(1 << card_rank, 0, spare[suit], aces, top):
                    plays.append(rules.start_action(card, position))
        return sorted(plays)

    def _spare_masks(self, seat: int) -> list[int]:
        """Per suit, the ranks 2..10 in the seat's hand as a bit mask."""
        masks = [0] * 4
        for card in self.hand[seat]:
            card_rank = rules.rank(card)
            if card_rank <= rules.SERIES_HIGH:
                masks[rules.suit(card)] |= 1 << card_rank
        return masks

    def _aces(self, seat: int) -> int:
        return sum(1 for c in self.hand[seat] if rules.rank(c) == ACE)

    def _series_choices(self) -> list[int]:
        """Cards that keep the series finishable from the hand, and the ways to finish it."""
        seat = self.current
        top = self.pile_top(seat, self.series_position)
        spare = self._spare_masks(seat)[self.series_suit]
        aces = self._aces(seat)
        used = {rules.rank(c) for c in self.series_cards if rules.rank(c) != ACE}
        naturals = rules.rank_mask(used)
        jokers = len(self.series_cards) - len(used)
        choices: list[int] = []
        for card in sorted({rules.standard(c) for c in self.hand[seat]}):
            card_rank = rules.rank(card)
            if card_rank == ACE:
                ok = rules.completable(naturals, jokers + 1, spare, aces - 1, top or 0)
            elif rules.suit(card) == self.series_suit and card_rank not in used:
                ok = rules.completable(naturals | 1 << card_rank, jokers, spare, aces, top or 0)
            else:
                ok = False
            if ok:
                choices.append(rules.add_action(card))
        for low in rules.finish_lows(sorted(used), len(self.series_cards), top):
            choices.append(rules.finish_action(low))
        return sorted(choices)

    # -- moving on ----------------------------------------------------------------------------
    def _advance(self) -> None:
        """Run the automatic steps (reform, end of turn) and every decision with a single
        answer, until a chance step, a real decision or the end. In the phases whose answers
        depend on the hidden hand a lone answer is still asked for: taking it silently would
        tell the opponent something about the hand (and a re-dealt hand would replay
        differently)."""
        while self.phase != OVER and self.chance == NO_CHANCE:
            if self.phase == REFORM:
                self._reform()
            elif self.phase == END_TURN:
                self._end_turn()
            else:
                legal = self._compute_legal()
                if len(legal) != 1 or self.phase in HAND_DEPENDENT:
                    self._legal = legal
                    return
                self._do(legal[0])
        self._legal = []

    def _emit(
        self, text: str, message: view.EventMessage, audience: frozenset[int] | None = None
    ) -> None:
        self._events.append(view.event(len(self.history), text, message, audience))

    def _apply_chance(self, outcome: int) -> list[Event]:
        self._events = []
        kind, self.chance = self.chance, NO_CHANCE
        if kind == SETUP_OFFICER:
            self._place_setup_officer(outcome)
        elif kind == SETUP_CARD:
            self._deal_setup_card(outcome)
        elif kind == CARD_DRAW:
            self.deck[self.current].remove(outcome)
            self._into_hand(self.current, outcome, OWN_DECK)
            self._after_draw()
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
        self._do(action)
        self._advance()
        if self.phase != OVER and self.decisions >= rules.DECISION_CAP:
            self._finish(f"decision cap of {rules.DECISION_CAP} reached")
        return self._events

    def _do(self, action: int) -> None:
        kind = rules.action_kind(action)
        if kind == "draw":
            self._draw(action == rules.DRAW_DECK)
        elif kind == "no_draw":
            self._no_draw()
        elif kind == "pass":
            self.passed_action = True
            self._emit(f"seat {self.current} passes", view.action_passed(self.current))
            self._to_special_support()
        elif kind == "end_battle":
            self._emit(f"seat {self.current} ends the battle", view.battle_ended(self.current))
            self._after_battle()
        elif kind == "kill_choice":
            self._kill_choice(action == rules.TAKE_PILE)
        elif kind == "support":
            self._support_choice(action)
        elif kind == "retreat":
            self._retreat(*divmod(action - rules.RETREAT, rules.RETREATS))
        elif kind == "single":
            self._single(*rules.card_and_position(action, rules.SINGLE))
        elif kind == "ace_kill":
            self._ace_kill(*rules.card_and_position(action, rules.ACE_KILL))
        elif kind == "start":
            self._start_series(*rules.card_and_position(action, rules.START_SERIES))
        elif kind == "add":
            self._add_to_series(action - rules.ADD_TO_SERIES)
        else:
            self._finish_series(action - rules.FINISH_SERIES + rules.SERIES_LOW)

    # -- setup --------------------------------------------------------------------------------
    def _place_setup_officer(self, officer: int) -> None:
        """West, Centre, East, then Support, face up; more than two of one rank among the
        four sends all twelve back for another deal (more chance steps in the history)."""
        seat = self.setup_seat
        self.officer_deck[seat].remove(officer)
        slot = len(self.placed)
        self.placed.append(officer)
        if slot < POSITIONS:
            self.front[seat][slot] = officer
            where = SLOT_OF_POSITION[slot]
        else:
            self.support[seat] = officer
            where = SUPPORT_SLOT
        text = f"seat {seat} places {rules.label(officer)} at {view.slot_name(where)}"
        self._emit(text, view.officer_placed(seat, officer, where))
        if len(self.placed) < rules.FRONT_SLOTS:
            self.chance = SETUP_OFFICER
            return
        if rules.needs_reshuffle(self.placed):
            self.officer_deck[seat] = sorted(self.officer_deck[seat] + self.placed)
            self.front[seat] = [NONE] * POSITIONS
            self.support[seat] = NONE
            self._emit(f"seat {seat} reshuffles its officers", view.reshuffled(seat))
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
        self._emit(
            f"turn {self.turn_number}: seat {seat}", view.turn_started(seat, self.turn_number)
        )

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
        text = f"seat {seat} reforms: {rules.label(officer)} and {rules.label(series[-1])} out"
        self._emit(text, view.officer_removed(seat, officer, series[-1], series[:-1]))
        support = self.support[seat]
        if support != NONE:
            self.front[seat][position] = support
            self.support[seat] = NONE
            self._emit_move(seat, support, SUPPORT_SLOT, SLOT_OF_POSITION[position])
        if self.officer_deck[seat]:
            self.chance = OFFICER_DRAW

    def _emit_move(self, seat: int, officer: int, source: int, target: int) -> None:
        text = (
            f"seat {seat} moves {rules.label(officer)} from {view.slot_name(source)}"
            f" to {view.slot_name(target)}"
        )
        self._emit(text, view.officer_moved(seat, officer, source, target))

    def _new_support(self, officer: int, source: int) -> None:
        seat = self.current
        self.support[seat] = officer
        if source == obpb.OFFICERS_BATTLE_SLOT_OFFICER_DECK:
            text = f"seat {seat} places {rules.label(officer)} as support"
            self._emit(text, view.officer_placed(seat, officer, SUPPORT_SLOT))
        else:
            self._emit_move(seat, officer, source, SUPPORT_SLOT)

    # -- drawing ------------------------------------------------------------------------------
    def _into_hand(self, seat: int, card: int, source: int, bonus: bool | None = None) -> None:
        self.hand[seat].append(card)
        self.hand[seat].sort()
        if bonus is None:
            bonus = self.phase != DRAW
        label = rules.label(card)
        where = "own deck" if source == OWN_DECK else "discard pile"
        if source == OWN_DECK:
            self.secret[seat].add(card)
            private = view.card_drawn(seat, source, bonus, card)
            self._emit(f"seat {seat} draws {label} from its {where}", private, frozenset([seat]))
            self._emit(f"seat {seat} draws from its {where}", view.card_drawn(seat, source, bonus))
        else:
            text = f"seat {seat} draws {label} from the {where}"
            self._emit(text, view.card_drawn(seat, source, bonus, card))

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
        self._emit(f"seat {seat} draws nothing", view.draw_passed(seat, bonus))
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
        copies = [c for c in self.hand[seat] if rules.standard(c) == card]
        seen = [c for c in copies if c not in self.secret[seat]]
        chosen = min(seen or copies)
        self.hand[seat].remove(chosen)
        self.secret[seat].discard(chosen)
        return chosen

    def _use_support_if_needed(self, position: int, suit: int) -> None:
        seat = self.current
        mine, theirs = self.front[seat][position], self.front[1 - seat][position]
        if rules.front_suit(mine, theirs) != suit:
            self.support_used_at = position

    def _single(self, card: int, position: int) -> None:
        seat = self.current
        self._use_support_if_needed(position, rules.suit(card))
        played = self._take_from_hand(seat, card)
        self.piles[seat][position].append(played)
        self.played[position] = PLAYED_SINGLE
        self.phase = ACTION
        text = f"seat {seat} plays {rules.label(played)} at {rules.POSITION_NAMES[position]}"
        self._emit(text, view.card_played(seat, played, position))

    def _ace_kill(self, card: int, position: int) -> None:
        seat = self.current
        self._use_support_if_needed(position, rules.suit(card))
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
        shown = " ".join(rules.label(c) for c in killing)
        text = (
            f"seat {seat} kills {rules.label(officer)} at {rules.POSITION_NAMES[position]}"
            f" with {shown}"
        )
        self._emit(text, view.officer_killed(seat, position, officer, killing))

    def _start_series(self, card: int, position: int) -> None:
        self._use_support_if_needed(position, rules.suit(card))
        self.series_position = position
        self.series_suit = rules.suit(card)
        self.played[position] = PLAYED_KILL
        self.kill_position = position
        self.phase = SERIES
        self._add_to_series(card)

    def _add_to_series(self, card: int) -> None:
        seat = self.current
        laid = self._take_from_hand(seat, card)
        self.series_cards.append(laid)
        position = self.series_position
        text = (
            f"seat {seat} lays {rules.label(laid)} in a series at {rules.POSITION_NAMES[position]}"
        )
        self._emit(text, view.series_card(seat, laid, position))

    def _finish_series(self, low: int) -> None:
        series = rules.arrange(self.series_cards, low)
        position = self.series_position
        self.series_cards = []
        self.series_position = NONE
        self.series_suit = NONE
        self._kill(position, series)

    def _after_battle(self) -> None:
        self.bonus_due = sum(1 for p in self.played if p == PLAYED_SINGLE)
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
        text = f"seat {seat} takes its pile at {rules.POSITION_NAMES[position]} ({len(pile)})"
        self._emit(text, view.pile_moved(seat, position, pile, to_hand=True))

    def _discard_pile(self, position: int) -> None:
        seat = self.current
        pile = self.piles[seat][position]
        self.piles[seat][position] = []
        self.discard.extend(pile)
        text = f"seat {seat} discards its pile at {rules.POSITION_NAMES[position]} ({len(pile)})"
        self._emit(text, view.pile_moved(seat, position, pile, to_hand=False))

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
            if self.living(loser) == 0:
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

    # -- what seats see -----------------------------------------------------------------------
    def observation(self, seat: int | None) -> pb.Observation:
        return view.observation(self, seat)

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
        self._advance()

    # -- search and tests ---------------------------------------------------------------------
    def clone(self) -> OfficersBattleState:
        other = OfficersBattleState.__new__(OfficersBattleState)
        other.options = self.options
        other.num_seats = self.num_seats
        other.history = list(self.history)
        other.deck = [list(d) for d in self.deck]
        other.officer_deck = [list(d) for d in self.officer_deck]
        other.hand = [list(h) for h in self.hand]
        other.secret = [set(s) for s in self.secret]
        other.front = [list(f) for f in self.front]
        other.piles = [[list(p) for p in piles] for piles in self.piles]
        other.support = list(self.support)
        other.retreats = [[list(r) for r in stacks] for stacks in self.retreats]
        other.fallen = [list(f) for f in self.fallen]
        other.casualty = [None if c is None else (c[0], c[1], list(c[2])) for c in self.casualty]
        other.discard = list(self.discard)
        for name in _SCALARS:
            setattr(other, name, getattr(self, name))
        other.played = list(self.played)
        other.series_cards = list(self.series_cards)
        other.placed = list(self.placed)
        other._events = []
        other._legal = self._legal
        other._legal_cache = self._legal_cache
        return other

    def resample(self, seat: int, rng: random.Random) -> OfficersBattleState:
        """Re-deal the other seat's unseen hand cards and its deck (one pool: both hold only its
        own unseen cards); the history's draws are rewritten to the new cards, so it replays.
        Mid-series, only deals that can still finish the series are kept."""
        other = 1 - seat
        unseen = sorted(self.secret[other])
        pool = sorted(unseen + self.deck[other])
        for _ in range(200):
            rng.shuffle(pool)
            world = self._redeal(other, unseen, sorted(pool[: len(unseen)]))
            if world.phase != SERIES or world.current != other or world._series_choices():
                return world
        return self._redeal(other, unseen, unseen)

    def _redeal(self, other: int, unseen: list[int], dealt: list[int]) -> OfficersBattleState:
        world = self.clone()
        seen = [c for c in self.hand[other] if c not in self.secret[other]]
        world.hand[other] = sorted(seen + dealt)
        world.secret[other] = set(dealt)
        world.deck[other] = sorted(set(self.deck[other] + unseen) - set(dealt))
        kept = set(unseen) & set(dealt)
        mapping = dict(
            zip(
                [c for c in unseen if c not in kept],
                [c for c in dealt if c not in kept],
                strict=True,
            )
        )
        world.history = [
            Step(CHANCE, mapping.get(step.action, step.action)) if step.seat == CHANCE else step
            for step in self.history
        ]
        if world.to_move():
            world._legal = world._compute_legal()
        world.forget_legal_actions()
        return world

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
