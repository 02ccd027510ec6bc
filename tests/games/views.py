"""Checks of the engines' world samplers (referee/games/base.py, WorldSampler): views built in
process from exactly the messages a Match sends a seat, agreement of every sample with its
view, and a measure of bias against the truth."""

from __future__ import annotations

import random
from collections.abc import Iterator

from referee.decisions import legal_action_messages
from referee.games.base import GameDefinition, GameOptions, GameState, SeatView, WorldSampler
from referee.games.playout import play_out, random_policy, sample_chance
from referee.games.tracking import SeatTracker
from referee.wire import match_start_message

State = GameState[GameOptions]


def random_views(
    game: GameDefinition[GameOptions],
    num_seats: int,
    seed: int,
    options: dict[str, object] | None = None,
) -> Iterator[tuple[State, SeatView]]:
    """One random game in process; at every decision, the true state and the view of each
    deciding seat, tracked from the MatchStart and the events visible to it, as a Match sends
    them."""
    state = game.new_state(options, num_seats)
    chance, policy_rng = random.Random(seed), random.Random(seed + 1)
    trackers = [SeatTracker() for _ in range(num_seats)]
    names = [f"bot{seat}" for seat in range(num_seats)]
    for seat, tracker in enumerate(trackers):
        tracker.on_match_start(match_start_message(game, state.options, seat, names, "views"))
    while not state.is_over():
        if state.is_chance():
            events = state.apply_chance(sample_chance(state.chance_outcomes(), chance))
        else:
            movers = state.to_move()
            for seat in movers:
                legal = legal_action_messages(state, seat)
                yield state, trackers[seat].view(state.observation(seat), legal)
            choices = [(s, policy_rng.choice(state.legal_actions(s))) for s in movers]
            events = [event for seat, action in choices for event in state.apply(seat, action)]
        for seat, tracker in enumerate(trackers):
            for event in events:
                if event.visible_to(seat):
                    tracker.on_event(event.message)


def check_agreement(sample: State, view: SeatView) -> None:
    """The sample shows the seat exactly its view: observation byte for byte, and its legal
    actions as messages when it must decide."""
    seat = view.seat
    shown = sample.observation(seat).SerializeToString(deterministic=True)
    assert shown == view.observation.SerializeToString(deterministic=True), "observation differs"
    if view.legal_actions:
        assert seat in sample.to_move(), "the seat is not to move in the sample"
        assert legal_action_messages(sample, seat) == list(view.legal_actions), "legal differ"


def check_sampler(
    sampler: WorldSampler[GameOptions],
    view: SeatView,
    rng: random.Random,
    samples: int,
    play_on: bool = True,
) -> None:
    """Every sample agrees with the view; with play_on, the first plays on by the rules to the
    end."""
    for index in range(samples):
        sample = sampler.sample(rng)
        check_agreement(sample, view)
        if index == 0 and play_on:
            play_out(sample, rng, random_policy(rng))


def overlaps(
    sampler: WorldSampler[GameOptions],
    truth: State,
    rng: random.Random,
    samples: int,
) -> tuple[float, float]:
    """Mean number of hidden (place, card) pairs a sample shares with the truth, and with
    another world drawn from the same view. An unbiased sampler cannot tell the truth from any
    other consistent world, so the two agree within noise; one that leans on the truth (keeps
    its suits, falls back to it) shares more with the truth."""
    reference = sampler.hidden(sampler.sample(rng))
    true = sampler.hidden(truth)
    with_truth = with_other = 0
    for _ in range(samples):
        drawn = sampler.hidden(sampler.sample(rng))
        with_truth += len(drawn & true)
        with_other += len(drawn & reference)
    return with_truth / samples, with_other / samples
