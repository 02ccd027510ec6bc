"""Checks of the engines' world samplers (sdk/games/arena_games/base.py, WorldSampler): agreement of
every sample with its view (views come from arena_games.tracking.random_views, built in
process from exactly the messages a Match sends a seat), and a measure of bias against the
truth."""

from __future__ import annotations

import random

from arena_games.base import GameOptions, GameState, SeatView, WorldSampler
from arena_games.legal_actions import legal_action_messages
from arena_games.playout import play_out, random_policy

State = GameState[GameOptions]


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
