"""example:ismcts: searches with the engines from its own process over gRPC in every game and
seat count, within its iteration budget, and is far stronger than random. Its measured strength
per game and budget: bench/ismcts_strength.py."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena.v1 import referee_pb2 as pb
from arena_games import GAMES, get_game
from arena_games.base import Event
from arena_games.deals import practice_secret
from arena_games.local_play import play_local, play_local_game

from example_bots.ismcts_bot import IsmctsBot, Node, _after_sight, iterate
from example_bots.random_bot import RandomBot
from referee.bots.launcher import parse_spec
from referee.hosting.series import SeriesPlan, run_series
from tests.games.invariants import game_rngs, play_one, position_at

SETUPS = [(name, seats) for name, game in sorted(GAMES.items()) for seats in game.seat_counts]


@pytest.mark.timeout(180)
@pytest.mark.parametrize(("name", "num_seats"), SETUPS)
def test_it_plays_every_game_over_grpc_from_its_own_view(
    name: str, num_seats: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_ISMCTS_ITERATIONS", "6")
    bots = [parse_spec("example:ismcts")] + [parse_spec("example:random")] * (num_seats - 1)
    plan = SeriesPlan(get_game(name), bots, num_seats, practice_secret(8), replays=tmp_path)
    outcomes = asyncio.run(run_series(plan))
    assert len(outcomes) == num_seats
    assert all(not outcome.forfeits for outcome, _ in outcomes)


def test_the_iteration_budget_is_what_it_searches() -> None:
    bot = IsmctsBot(iterations=17, seed=3)
    searched: list[int] = []
    act = bot.act

    def counting_act(observation: object, legal_actions: list[object]) -> int:
        choice = act(observation, legal_actions)  # type: ignore[arg-type]
        if len(legal_actions) > 1:
            searched.append(bot.searched)
        return choice

    bot.act = counting_act  # type: ignore[method-assign]
    play_local(get_game("opposing-force"), [bot, RandomBot(1)], deal=2)
    assert searched and set(searched) == {17}


@pytest.mark.parametrize("name", ["opposing-force", "strato-sphere"])
def test_it_beats_random_from_either_seat(name: str) -> None:
    game, points = get_game(name), 0.0
    for deal in range(6):
        seat = deal % 2
        bots = [IsmctsBot(iterations=60, seed=deal), RandomBot(deal)]
        result = play_local(game, bots if seat == 0 else bots[::-1], deal=deal)
        ranks = result.ranks
        points += 1.0 if ranks[seat] < ranks[1 - seat] else 0.5 if ranks[0] == ranks[1] else 0.0
    assert points >= 5


def _searched(name: str, observer: int | None) -> Node:
    """The tree of 300 iterations from a random game's position after its deal and a few
    decisions, on worlds drawn for seat 0."""
    state, rng, root = position_at(get_game(name), 5, 32), random.Random(7), Node()
    for _ in range(300):
        iterate(root, state.resample(0, rng), rng, observer)
    return root


def _nodes(node: Node) -> Iterator[Node]:
    yield node
    for child in [*node.children.values(), *node.seen.values()]:
        yield from _nodes(child)


def test_split_on_sight_branches_on_the_cards_a_battle_turns_up() -> None:
    """In Capture the Commander an attack turns up cards that differ from world to world: the
    split tree has a branch for each, where plain search (the control) has one node."""
    split = max(len(node.seen) for node in _nodes(_searched("capture-the-commander", 0)))
    assert split >= 2
    assert all(not node.seen for node in _nodes(_searched("capture-the-commander", None)))


def _sight(events: list[Event], observer: int) -> list[pb.Event]:
    """What a split on observer's sight of a step keys its branch on."""
    parent = Node()
    _after_sight(parent, events, observer)
    (branch,) = parent.seen
    return [pb.Event.FromString(raw) for raw in branch]


def test_split_on_sight_splits_on_nothing_its_seat_may_not_see() -> None:
    """Orc Pit Fighting's draws are seen by the drawer alone: seat 0's branches never hold
    seat 1's, while seat 1's do (the control: the same events, the other observer)."""
    steps: list[list[Event]] = []  # the events of each step of a random game
    game = get_game("orc-pit-fighting")
    play_one(game, *game_rngs(11, 0), after_step=lambda _, events: steps.append(events))
    private_to_1 = 0
    for events in steps:
        hidden = [e.message for e in events if not e.visible_to(0)]
        private_to_1 += len(hidden)
        assert not any(e in hidden for e in _sight(events, 0))
        assert all(e in _sight(events, 1) for e in hidden)
    assert private_to_1 > 0


def test_split_on_sight_plays_a_whole_game_and_repeats_it_with_its_seed() -> None:
    game = get_game("capture-the-commander")
    histories = [
        play_local_game(
            game, [IsmctsBot(iterations=40, seed=1, split_on_sight=True), RandomBot(2)], 3
        ).history
        for _ in range(2)
    ]
    assert histories[0] == histories[1]
    assert any(step.seat == 0 for step in histories[0])  # it played, not only the deal
