"""The Orc Pit Fighting state on the engine contract: whose move, legal actions, chance steps
and decisions, each dispatched by phase to the module that owns that part of the rules."""

from __future__ import annotations

import random
from collections.abc import Callable

from arena.v1 import referee_pb2 as pb

from arena_games import cards
from arena_games.base import (
    Event,
    GameError,
    GameOptions,
    GameState,
    Result,
    SeatView,
    UniformOutcomes,
    uniform_draw,
    uniform_outcomes,
)
from arena_games.orc_pit_fighting import actions, combat, result, rounds, turns, view
from arena_games.orc_pit_fighting.rules import DECISION_CAP, DIG_DEPTH
from arena_games.orc_pit_fighting.table import (
    CHANCE_PHASES,
    DICE_PHASES,
    DrawFor,
    Phase,
    Table,
)
from arena_games.orc_pit_fighting.worlds import Dealer, OrcPitFightingWorlds

DIE = uniform_outcomes(range(1, 7))
FACES = tuple(range(1, 7))
WAITING = CHANCE_PHASES | {Phase.OVER}
"""Phases in which no seat decides."""
ALONE = ((0,), (1,))
"""to_move() of a single seat, by seat."""
# Enum members under short module names: a lookup on the Enum class is slow.
DIG, SWAP_DRAW, DRAW_CHOICE, OVER = Phase.DIG, Phase.SWAP_DRAW, Phase.DRAW_CHOICE, Phase.OVER


class OrcPitFightingOptions(GameOptions):
    """Orc Pit Fighting has no options."""


Legal = Callable[[Table, int], list[int]]
Apply = Callable[[Table, int, int], None]

LEGAL: dict[Phase, Legal] = {
    Phase.TURN: turns.turn_actions,
    Phase.CANCEL: turns.cancel_actions,
    Phase.EXTRA_RED: turns.extra_red_actions,
    Phase.KEEP: lambda table, _seat: turns.keep_actions(table),
    Phase.PUT_DOWN: turns.put_down_actions,
    Phase.DECLARE: combat.declare_actions,
    Phase.MUST_PLAY: combat.must_play_actions,
    Phase.BRUTALITY: combat.brutality_actions,
    Phase.ACE_ANSWER: combat.ace_answer_actions,
    Phase.REINFORCEMENTS: combat.reinforcement_actions,
    Phase.DIRTY_TRICKS: combat.dirty_actions,
    Phase.DRAWN: combat.drawn_actions,
    Phase.DRAW_CHOICE: result.face_down_actions,
    Phase.CHOOSE_TURN: lambda _table, _seat: result.choose_turn_actions(),
}

APPLY: dict[Phase, Apply] = {
    Phase.TURN: turns.play,
    Phase.CANCEL: turns.react,
    Phase.EXTRA_RED: turns.play,
    Phase.KEEP: turns.keep,
    Phase.PUT_DOWN: turns.put_down,
    Phase.DECLARE: combat.declare,
    Phase.MUST_PLAY: combat.must_play,
    Phase.BRUTALITY: combat.brutality,
    Phase.ACE_ANSWER: combat.ace_answer,
    Phase.REINFORCEMENTS: combat.reinforce,
    Phase.DIRTY_TRICKS: combat.dirty_trick,
    Phase.DRAWN: combat.drawn,
    Phase.DRAW_CHOICE: result.choose_face_down,
    Phase.CHOOSE_TURN: result.choose_turn,
}

DICE: dict[Phase, Callable[[Table, int], None]] = {
    Phase.FANGS: rounds.fangs_rolled,
    Phase.FIRST_ROLL: rounds.first_rolled,
    Phase.ACE_OF_DIAMONDS: combat.ace_of_diamonds_rolled,
    Phase.RESULT: result.rolled,
    Phase.TURN_ROLL: result.turn_rolled,
}

DRAWS: dict[DrawFor, Callable[[Table, int], None]] = {
    DrawFor.DEAL: rounds.dealt,
    DrawFor.TWO: turns.drew_one_of_two,
    DrawFor.DIRTY: combat.drew_dirty,
}


class OrcPitFightingState(GameState[OrcPitFightingOptions]):
    def __init__(
        self, options: OrcPitFightingOptions, num_seats: int, table: Table | None = None
    ) -> None:
        """A new game at its starting table; or, given a table, a state at that table with no
        history (a world drawn for search), made without dealing a starting table to replace."""
        super().__init__(options, num_seats)
        self.table = Table() if table is None else table
        # resample's reading of a seat's view, kept for one history length (see resample).
        self.dealers: dict[tuple[int, int], Dealer] = {}
        # The seat a world was drawn for (its history is empty), or None for a played game.
        self.sampled_for: int | None = None

    # -- whose move --------------------------------------------------------------------------------
    def is_chance(self) -> bool:
        return self.table.phase in CHANCE_PHASES

    def card_chance(self) -> bool:
        """True when the pending chance step picks a card rather than a die face."""
        return self.is_chance() and self.table.phase not in DICE_PHASES

    def chance_outcomes(self) -> list[tuple[int, float]]:
        table = self.table
        phase = table.phase
        if phase not in CHANCE_PHASES:
            return []
        if phase in DICE_PHASES:
            return UniformOutcomes(DIE)
        if phase == DIG:
            pool = turns.dig_outcomes(table)
        elif phase == SWAP_DRAW:
            pool = turns.swap_outcomes(table)
        else:
            pool = table.deck
        return uniform_draw(pool, len(cards.DECK))

    def _is_chance_outcome(self, outcome: int) -> bool:
        table = self.table
        phase = table.phase
        if phase in DICE_PHASES:
            return outcome in FACES
        if phase == DIG:
            return outcome in table.discard[-DIG_DEPTH:]
        if phase == SWAP_DRAW:
            return outcome in table.hands[1 - table.actor]
        return outcome in table.deck

    def to_move(self) -> tuple[int, ...]:
        table = self.table
        phase = table.phase
        if phase in WAITING:
            return ()
        if phase == DRAW_CHOICE:
            return result.choosers(table)
        return ALONE[table.actor]

    def is_over(self) -> bool:
        return self.table.phase == OVER

    def result(self) -> Result:
        table = self.table
        if not self.is_over():
            raise GameError("the game is not over")
        if table.winner is None:
            return Result(ranks=(0, 0), scores=(0.5, 0.5), reason=table.over_reason)
        scores = tuple(1.0 if seat == table.winner else 0.0 for seat in (0, 1))
        return Result.from_scores(scores, table.over_reason)

    def _legal_actions(self, seat: int) -> list[int]:
        return LEGAL[self.table.phase](self.table, seat)

    # -- moves -------------------------------------------------------------------------------------
    # apply_chance and apply keep GameState's checks and errors; they are written out here to
    # spare a random playout a few calls per step, and reuse the frozen history entries.

    def _begin_step(self) -> Table:
        table = self.table
        table.events = []
        table.step = len(self.history)
        return table

    def _apply_chance(self, outcome: int) -> list[Event]:
        table = self._begin_step()
        phase = table.phase
        if phase in DICE:
            DICE[phase](table, outcome)
        elif phase == DIG:
            turns.dug(table, outcome)
        elif phase == SWAP_DRAW:
            turns.swapped(table, outcome)
        else:
            table.deck.remove(outcome)
            DRAWS[table.draw_for](table, outcome)
        return table.events

    def _apply_action(self, seat: int, action: int) -> list[Event]:
        table = self._begin_step()
        table.decisions += 1
        APPLY[table.phase](table, seat, action)
        if table.phase != OVER and table.decisions >= DECISION_CAP:
            rounds.finish(table, None, f"decision cap of {DECISION_CAP} reached, a draw")
        return table.events

    # -- what seats see ----------------------------------------------------------------------------
    def observation(self, seat: int | None) -> pb.Observation:
        return view.observe(self.table, seat, self.to_move())

    def action_label(self, action: int) -> str:
        return actions.label(action)

    def action_message(self, action: int) -> pb.Action:
        return actions.message(action)

    def render(self, seat: int | None) -> str:
        return view.render(self.observation(seat).orc_pit_fighting)

    # -- search and tests --------------------------------------------------------------------------
    def clone(self) -> OrcPitFightingState:
        other = OrcPitFightingState.__new__(OrcPitFightingState)
        other.options = self.options
        other.num_seats = self.num_seats
        other.history = list(self.history)
        other.table = self.table.clone()
        other.dealers = self.dealers
        other.sampled_for = self.sampled_for
        self._share_kept_legal_actions(other)
        return other

    def forget_legal_actions(self) -> None:
        super().forget_legal_actions()
        if self.sampled_for is None:  # a drawn world has only its dealer to deal again from
            self.dealers = {}  # a new dict: clones share the old one

    @classmethod
    def world_sampler(cls, options: OrcPitFightingOptions, view: SeatView) -> OrcPitFightingWorlds:
        return OrcPitFightingWorlds(options, view)

    def resample(self, seat: int, rng: random.Random) -> OrcPitFightingState:
        from arena_games.orc_pit_fighting.resample import resample

        return resample(self, seat, rng)

    def key(self) -> tuple[object, ...]:
        return (self.table.key(), tuple((s.seat, s.action) for s in self.history))
