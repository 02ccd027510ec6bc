"""Tests referee.hosting.series and referee.replays.verify with every game of arena_games.

Every registered game, at every seat count it allows, played over gRPC by real bot
processes, with a replay that verifies. A new game is covered as soon as it is registered."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from arena_games import GAMES
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings

from referee.hosting.series import SeriesPlan, run_series
from referee.replays.verify import verify
from tests.e2e.conftest import rawbot

CASES = [(name, seats) for name, game in sorted(GAMES.items()) for seats in game.seat_counts]


@pytest.mark.timeout(180)
@pytest.mark.parametrize(("game_name", "seats"), CASES)
def test_game_over_grpc(game_name: str, seats: int, tmp_path: Path) -> None:
    game = GAMES[game_name]
    bots = [rawbot("play") for _ in range(seats)]
    plan = SeriesPlan(
        game,
        bots,
        1,
        secret=practice_secret(21),
        replays=tmp_path,
        settings=MatchSettings(decision_ms=5000),
    )
    [(outcome, _)] = asyncio.run(run_series(plan))
    assert not outcome.forfeits, outcome.forfeits
    assert sorted(set(outcome.result.ranks))[0] == 0
    assert outcome.replay_path is not None
    verify(outcome.replay_path)
