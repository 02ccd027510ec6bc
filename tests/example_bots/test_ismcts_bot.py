"""example:ismcts: searches with the engines from its own process over gRPC in every game and
seat count, within its iteration budget, and is far stronger than random. Its measured strength
per game and budget: bench/ismcts_strength.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from arena_games import GAMES, get_game
from arena_games.deals import practice_secret
from arena_games.local_play import play_local

from example_bots.ismcts_bot import IsmctsBot
from example_bots.random_bot import RandomBot
from referee.bots.launcher import parse_spec
from referee.series.series_host import SeriesPlan, run_series

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
