"""World samplers of every engine that builds states from a seat's view: thousands of views from
random games, each sample agreeing with its view byte for byte, and no lean towards the truth.
(The same views come over a real gRPC match in tests/e2e/test_views_over_grpc.py.)"""

from __future__ import annotations

import random
from statistics import mean

import pytest
from arena_games import GAMES, get_game
from arena_games.base import GameOptions, GameState, WorldSampler
from arena_games.tracking import random_views

from tests.games.views import check_sampler, overlaps

BUILDING = sorted(name for name, game in GAMES.items() if game.builds_from_views)
SETUPS = [(name, seats) for name in BUILDING for seats in get_game(name).seat_counts]


def test_the_engines_that_build_from_views() -> None:
    """Which engines build states from a seat's view: this list only grows."""
    assert "opposing-force" in BUILDING


@pytest.mark.parametrize(("name", "num_seats"), SETUPS)
def test_every_sample_agrees_with_its_view(name: str, num_seats: int) -> None:
    """Over every decision of 30 random games, three samples each: observation and legal
    actions byte for byte; at every tenth view the first sample plays on to the end (playing
    every one out took minutes in long games)."""
    game = get_game(name)
    rng = random.Random(5)
    views = 0
    for seed in range(30):
        for _, view in random_views(game, num_seats, seed * 7):
            play_on = views % 10 == 0
            check_sampler(game.world_sampler(view), view, rng, samples=3, play_on=play_on)
            views += 1
    assert views > 500


class Leaning(WorldSampler[GameOptions]):
    """The control: a sampler that returns the true state one time in five (as the old
    fallbacks did in some positions)."""

    def __init__(self, fair: WorldSampler[GameOptions], truth: GameState[GameOptions]) -> None:
        super().__init__(fair.view)
        self.fair, self.truth = fair, truth

    def sample(self, rng: random.Random) -> GameState[GameOptions]:
        return self.truth.clone() if rng.random() < 0.2 else self.fair.sample(rng)

    def hidden(self, state: GameState[GameOptions]) -> set[tuple[object, int]]:
        return self.fair.hidden(state)


def mean_overlaps(name: str, num_seats: int, lean: bool) -> tuple[float, float]:
    """Hidden cards a sample shares with the truth, and with another world drawn from the same
    view, averaged over every fifth view of 20 random games (more, for a game whose games are
    short, until over 100 views are measured)."""
    game = get_game(name)
    rng = random.Random(9)
    truth_shares: list[float] = []
    other_shares: list[float] = []
    for seed in range(60):
        if seed >= 20 and len(truth_shares) > 100:
            break
        for index, (state, view) in enumerate(random_views(game, num_seats, 1000 + seed)):
            if index % 5 == 0:
                sampler = game.world_sampler(view)
                if lean:
                    sampler = Leaning(sampler, state)
                truth, other = overlaps(sampler, state, rng, samples=20)
                truth_shares.append(truth)
                other_shares.append(other)
    assert len(truth_shares) > 100
    return mean(truth_shares), mean(other_shares)


@pytest.mark.parametrize(("name", "num_seats"), SETUPS)
def test_samples_lean_no_more_to_the_truth_than_to_another_world(name: str, num_seats: int) -> None:
    """A sample shares as many hidden cards with the truth as with another world drawn from
    the same view (within 10%): the sampler cannot tell the truth from any other world."""
    truth, other = mean_overlaps(name, num_seats, lean=False)
    assert abs(truth - other) < 0.1 * max(other, 0.5), (truth, other)


def test_the_bias_measure_catches_a_sampler_that_leans_on_the_truth() -> None:
    """The control: the same measure, with the true state returned one time in five."""
    truth, other = mean_overlaps("opposing-force", 2, lean=True)
    assert truth - other > 0.1 * max(other, 0.5), (truth, other)
