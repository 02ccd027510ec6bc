"""resample(seat) of a true state: the worlds of the seat's own view (see worlds), with the true
table's public structure as the base and every card the seat cannot see dealt afresh.

The view is what the seat was told: the events it received and its observation, gathered by
replaying the history once; that reading is kept on the state for its history length, so the
many resamples of one search root cost a clone and a deal each. The true hidden cards are
never read: the deal overwrites every place the seat cannot see.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from arena.v1 import referee_pb2 as pb

from arena_games.base import GameError, SeatView
from arena_games.orc_pit_fighting.knowledge import read
from arena_games.orc_pit_fighting.worlds import Dealer, drawn_world, unseen_cards

if TYPE_CHECKING:
    from arena_games.orc_pit_fighting.state import OrcPitFightingState


def resample(state: OrcPitFightingState, seat: int, rng: random.Random) -> OrcPitFightingState:
    return drawn_world(state.options, dealer_for(state, seat), rng)


def dealer_for(state: OrcPitFightingState, seat: int) -> Dealer:
    key = (len(state.history), seat)
    kept = state.dealers.get(key)
    if kept is not None:
        return kept
    if state.sampled_for is not None:
        # A world drawn for search has no full history to read a view from.
        raise GameError("a sampled world cannot be resampled: resample the state it came from")
    view = seat_view(state, seat)
    knowledge = read(view)
    other = 1 - seat
    dealer = Dealer(
        state.table,
        seat,
        knowledge,
        unseen_cards(view.observation, knowledge),
        len(state.table.hands[other]),
    )
    state.dealers = {key: dealer}  # one history length at a time: the state moves on
    return dealer


def seat_view(state: OrcPitFightingState, seat: int) -> SeatView:
    """The events the seat received, replayed from the history, and its observation now."""
    replay = type(state)(state.options, state.num_seats)
    events: list[pb.Event] = []
    for step in state.history:
        events += [e.message for e in replay.apply_step(step) if e.visible_to(seat)]
    return SeatView(pb.MatchStart(seat=seat), tuple(events), state.observation(seat))
