"""Matches between in-process SDK bots, with no gRPC: for tests, search bots and benchmarks.

The rules, chance and information flow are the same as over the wire; only the clocks,
misbehaviour policies and replays of the match runner are left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.v1 import referee_pb2 as pb
from arena_sdk.bot import Bot, choice_index, unwrap

from referee.games.base import Event, GameDefinition, GameOptions, GameState, Result
from referee.games.playout import sample_chance
from referee.matches.deals import DealKey
from referee.wire.decisions import legal_action_messages
from referee.wire.match_messages import match_start_message, result_message


def play_local(
    game: GameDefinition[GameOptions],
    bots: Sequence[Bot],
    deal: DealKey | int,
    options: dict[str, object] | None = None,
    match_id: str = "local",
) -> Result:
    """Play one match; bots[i] plays seat i. Chance comes from the deal's key as in a Match
    (an int is a practice seed). A bot's bad answer raises ValueError."""
    return play_local_game(game, bots, deal, options, match_id).result()


def play_local_game(
    game: GameDefinition[GameOptions],
    bots: Sequence[Bot],
    deal: DealKey | int,
    options: dict[str, object] | None = None,
    match_id: str = "local",
) -> GameState[GameOptions]:
    """play_local, giving the final state (its history, turns, the board at the end)."""
    state = game.new_state(options, len(bots))
    key = deal if isinstance(deal, DealKey) else DealKey.practice(deal)
    rng = key.chance()
    for seat, bot in enumerate(bots):
        start = match_start_message(game, state.options, seat, [b.name for b in bots], match_id)
        start.deal_commitment = key.commitment  # as a Match sends it
        bot.on_match_start(start)
    while not state.is_over():
        if state.is_chance():
            _tell(bots, state.apply_chance(sample_chance(state.chance_outcomes(), rng)))
            continue
        # Ask every seat that must decide before applying any answer: simultaneous choices stay
        # hidden from each other.
        choices = []
        for seat in state.to_move():
            legal = legal_action_messages(state, seat)
            observation = unwrap(state.observation(seat))
            index = choice_index(bots[seat].act(observation, legal), legal)
            choices.append((seat, state.legal_actions(seat)[index]))
        for seat, action in choices:
            _tell(bots, state.apply(seat, action))
    result = state.result()
    end = pb.MatchEnd(match_id=match_id, result=result_message(result))
    for bot in bots:
        bot.on_match_end(end)
    return state


def _tell(bots: Sequence[Bot], events: list[Event]) -> None:
    for seat, bot in enumerate(bots):
        for event in events:
            if event.visible_to(seat):
                bot.on_event(event.message)
