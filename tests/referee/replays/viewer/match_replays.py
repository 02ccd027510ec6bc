"""Replays for the viewer's tests: one real match per game at each of its seat counts, played
over gRPC by the example bots in their own processes, with a practice seed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from arena_games import GAMES
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings

from referee.bots.launcher import parse_spec
from referee.hosting.series import SeriesPlan, run_series

# case -> (game, bots). The strategy bot against the random one, except where that ends
# within a few moves (Strato-Sphere's strategy bot can win in its first turn).
CASES: dict[str, tuple[str, list[str]]] = {
    "opposing-force": ("opposing-force", ["example:opposing-force", "example:random"]),
    "capture-the-commander": (
        "capture-the-commander",
        ["example:capture-the-commander", "example:random"],
    ),
    "capture-the-commander-3": (
        "capture-the-commander",
        ["example:capture-the-commander", "example:random", "example:random"],
    ),
    "capture-the-commander-4": (
        "capture-the-commander",
        ["example:capture-the-commander", *["example:random"] * 3],
    ),
    "officers-battle": ("officers-battle", ["example:officers-battle", "example:random"]),
    "orc-pit-fighting": ("orc-pit-fighting", ["example:orc-pit-fighting", "example:random"]),
    "strato-sphere": ("strato-sphere", ["example:random", "example:random"]),
    "strato-sphere-4": ("strato-sphere", ["example:random"] * 4),
}


def play(game: str, bots: list[str], folder: Path, seed: int = 3) -> Path:
    """One match between bot processes; the path of its replay."""
    plan = SeriesPlan(
        GAMES[game],
        [parse_spec(spec) for spec in bots],
        1,
        secret=practice_secret(seed),
        replays=folder,
        settings=MatchSettings(decision_ms=5000),
    )
    [(outcome, _)] = asyncio.run(run_series(plan))
    assert outcome.replay_path is not None
    return outcome.replay_path


@pytest.fixture(scope="session")
def replays(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """case -> the replay of its match, played once for the whole session."""
    folder = tmp_path_factory.mktemp("viewer-replays")
    return {case: play(game, bots, folder / case) for case, (game, bots) in CASES.items()}
