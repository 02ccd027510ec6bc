"""World samplers of every engine that builds states from a seat's view: thousands of views from
random games, each sample agreeing with its view byte for byte, and no lean towards the truth.
(The same views come over a real gRPC match in tests/e2e/test_views_over_grpc.py.)"""

from __future__ import annotations

import random
from collections.abc import Hashable
from statistics import mean

import pytest

from referee.games import GAMES, get_game
from referee.games.base import GameOptions, GameState
from referee.games.opposing_force import OpposingForceState
from tests.games.views import Hidden, check_sampler, overlaps, random_views

BUILDING = sorted(name for name, game in GAMES.items() if game.builds_from_views)
SETUPS = [(name, seats) for name in BUILDING for seats in get_game(name).seat_counts]


def opposing_force_hidden(state: GameState[GameOptions], seat: int) -> set[Hashable]:
    assert isinstance(state, OpposingForceState)
    return {("hand", card) for card in state.hands[1 - seat]}


HIDDEN: dict[str, Hidden] = {"opposing-force": opposing_force_hidden}


def test_the_engines_that_build_from_views() -> None:
    """Which engines build states from a seat's view: this list only grows."""
    assert "opposing-force" in BUILDING


@pytest.mark.parametrize(("name", "num_seats"), SETUPS)
def test_every_sample_agrees_with_its_view(name: str, num_seats: int) -> None:
    """Over every decision of 30 random games, three samples each: observation and legal
    actions byte for byte; the first sample plays on to the end."""
    game = get_game(name)
    rng = random.Random(5)
    views = 0
    for seed in range(30):
        for _, view in random_views(game, num_seats, seed * 7):
            check_sampler(game.world_sampler(view), view, rng, samples=3)
            views += 1
    assert views > 500


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_samples_lean_no_more_to_the_truth_than_to_another_world(name: str) -> None:
    """Hidden cards a sample shares with the truth, against those it shares with another world
    drawn from the same view, averaged over the views of 20 games: equal within noise."""
    game = get_game(name)
    rng = random.Random(9)
    truth_shares, other_shares = [], []
    for seed in range(20):
        for index, (state, view) in enumerate(random_views(game, 2, 1000 + seed)):
            if index % 5 == 0:
                sampler = game.world_sampler(view)
                truth, other = overlaps(sampler, state, HIDDEN[name], rng, samples=20)
                truth_shares.append(truth)
                other_shares.append(other)
    assert len(truth_shares) > 100
    assert abs(mean(truth_shares) - mean(other_shares)) < 0.1 * max(mean(other_shares), 0.5)
