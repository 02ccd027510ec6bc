"""Driving a state without a match: picking chance outcomes from a seeded generator."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from arena_games.base import Event, GameOptions, GameState, UniformOutcomes


def drawn_apart(pool: Sequence[int], count: int, rng: random.Random) -> tuple[list[int], list[int]]:
    """count cards of pool drawn uniformly at random, in the order drawn, and the rest in pool's
    order: what a shuffle of the whole pool would give when only the drawn cards' order matters,
    at the cost of the draws alone (a sampler dealing a hand of 6 from 40 cards)."""
    drawn = rng.sample(pool, count)
    taken = set(drawn)
    return drawn, [card for card in pool if card not in taken]


def sample_chance(outcomes: list[tuple[int, float]], rng: random.Random) -> int:
    """Pick an outcome with its probability, using only rng.random() so that a seed means the
    same game on every Python version."""
    if len(outcomes) == 1:
        return outcomes[0][0]
    point = rng.random()
    if isinstance(outcomes, UniformOutcomes) or all(p == outcomes[0][1] for _, p in outcomes):
        return outcomes[min(int(point * len(outcomes)), len(outcomes) - 1)][0]
    total = 0.0
    for outcome, probability in outcomes:
        total += probability
        if point < total:
            return outcome
    return outcomes[-1][0]


def resolve_chance(state: GameState[GameOptions], rng: random.Random) -> list[Event]:
    """Apply chance outcomes until a decision or the end is reached."""
    events: list[Event] = []
    while state.is_chance():
        events.extend(state.apply_chance(sample_chance(state.chance_outcomes(), rng)))
    return events


Policy = Callable[[GameState[GameOptions], int, list[int]], int]


def random_policy(rng: random.Random) -> Policy:
    def choose(_state: GameState[GameOptions], _seat: int, legal: list[int]) -> int:
        return legal[int(rng.random() * len(legal))]

    return choose


def play_out(
    state: GameState[GameOptions],
    chance_rng: random.Random,
    policy: Policy,
    after_step: Callable[[GameState[GameOptions]], None] | None = None,
) -> GameState[GameOptions]:
    """Play to the end: chance from chance_rng, every decision from policy."""
    while not state.is_over():
        if state.is_chance():
            state.apply_chance(sample_chance(state.chance_outcomes(), chance_rng))
        else:
            for seat in state.to_move():
                state.apply(seat, policy(state, seat, state.legal_actions(seat)))
        if after_step is not None:
            after_step(state)
    return state
