"""Tests the engines' world samplers (arena_games) in a bot's process, over referee.wire.

Worlds built from a seat's view in a bot's own process, from the messages of a real gRPC
match: every sample shows the seat exactly what the referee sent it, at a thousand decisions or
more in every game and seat count (issue: search from a bot process). The same checks over
thousands of in-process views: tests/games/test_world_samplers.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from arena_games import GAMES, get_game
from arena_games.deals import practice_secret
from arena_games.tracking import rank_reward

from referee.bots.launcher import parse_spec
from referee.hosting.series import SeriesPlan, run_series

CHECKER = Path(__file__).resolve().parent.parent / "bots" / "view_checker_bot.py"
# Matches per game and seat count: enough for a thousand decisions or more in each (random play;
# a Capture the Commander match asks a seat about 20 times, an Officers' Battle one about 470).
MATCHES = {
    ("capture-the-commander", 2): 80,
    ("capture-the-commander", 3): 60,
    ("capture-the-commander", 4): 40,
    ("officers-battle", 2): 4,
    ("opposing-force", 2): 30,
    ("orc-pit-fighting", 2): 10,
    ("strato-sphere", 2): 26,
    ("strato-sphere", 4): 80,
}
VIEWS = 1000
SETUPS = [
    (name, seats)
    for name, game in sorted(GAMES.items())
    if game.builds_from_views
    for seats in game.seat_counts
]


@pytest.mark.timeout(240)
@pytest.mark.parametrize(("name", "num_seats"), SETUPS)
def test_worlds_from_a_bots_own_view_agree_with_what_it_was_sent(
    name: str, num_seats: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = tmp_path / "counts"
    records.mkdir()
    monkeypatch.setenv("ARENA_RECORD_DIR", str(records))
    bots = [parse_spec(str(CHECKER)) for _ in range(num_seats)]
    matches = MATCHES[(name, num_seats)]
    plan = SeriesPlan(get_game(name), bots, matches, secret=practice_secret(3), replays=tmp_path)
    outcomes = asyncio.run(run_series(plan))
    assert all(not outcome.forfeits for outcome, _ in outcomes)
    counts = [json.loads(path.read_text()) for path in records.glob("*.json")]
    assert sum(c["views"] for c in counts) >= VIEWS
    assert sum(c["samples"] for c in counts) == 3 * sum(c["views"] for c in counts)
    assert sum(c["disagreements"] for c in counts) == 0
    # Each seat's reward, read by its tracker from the MatchEnd, comes from its rank.
    ranks = [outcome.result.ranks for outcome, _ in outcomes]
    rewards = sum(rank_reward(r, seat) for r in ranks for seat in range(num_seats))
    assert sum(c["reward"] for c in counts) == pytest.approx(rewards)
