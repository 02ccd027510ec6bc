"""Strato-Sphere's rules version 3 (the short first round) against replays of version 2: a real
match played by the v2 rules (seat 0's first turn of three moves) and written as v2 is refused
in one line naming both versions, by `arena replay verify` too; the control: the same file
claiming v3 is not silently accepted, it diverges at seat 0's second move, which v3 forbids; a
v3 match verifies."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from arena.v1 import referee_pb2 as pb
from arena_games import get_game
from arena_games import replay_file as replay
from arena_games.deals import DealKey
from arena_games.strato_sphere import rules

from example_bots.random_bot import RandomBot
from referee.hosting.match_table import save_replay
from referee.matches.decisions import EncodedRequest
from referee.matches.match import Match
from referee.replays.verify import Divergence, verify
from tests.tournaments.web.harness import arena

pytestmark = pytest.mark.timeout(120)
GAME = get_game("strato-sphere")
V2, V3 = "strato-sphere/2", "strato-sphere/3"


class RandomSeat:
    """An in-process seat for the match runner: a random bot that never passes while it has
    another move, so that seat 0's first turn under v2 rules takes more than one move."""

    def __init__(self, seed: int) -> None:
        self.name = f"random-{seed}"
        self.bot = RandomBot(seed)

    async def start(self, start: pb.MatchStart) -> None:
        self.bot.on_match_start(start)

    async def decide(self, request: EncodedRequest, on_sent: object = None) -> pb.Decision:
        legal = request.message().legal_actions
        moves = [a.index for a in legal if a.action.strato_sphere.WhichOneof("kind") != "pass_turn"]
        index = moves[0] if moves else self.bot.act(None, legal)
        return pb.Decision(match_id=request.match_id, decision_id=request.decision_id, index=index)

    async def end(self, end: object) -> None:
        return None


def played(folder: Path, name: str) -> Path:
    seats = [RandomSeat(1), RandomSeat(2)]
    match = Match(GAME, seats, deal=DealKey.practice(5), match_id=name)  # type: ignore[arg-type]

    async def run() -> Path | None:
        outcome = await match.run()
        await save_replay(folder, outcome)
        return outcome.replay_path

    path = asyncio.run(run())
    assert path is not None
    return path


def first_turn_moves(path: Path) -> int:
    """Seat 0's decisions before the first turn ended, read from the file."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    decisions = [line for line in lines if line["type"] == "decision" and line["seat"] == 0]
    first_end = next(
        line["step"]
        for line in lines
        if line["type"] == "event" and "turnEnded" in line["event"].get("stratoSphere", {})
    )
    return sum(1 for line in decisions if line["step"] <= first_end)


def claiming(path: Path, version: str) -> Path:
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["rules_version"] = version
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return path


def test_a_v2_replay_is_refused_naming_both_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as v2:
        v2.setattr(rules, "FIRST_ROUND_MOVES", {})  # the engine as it was under v2
        old = claiming(played(tmp_path, "v2"), V2)
    assert first_turn_moves(old) == 3
    message = f"played under strato-sphere rules {V2}; this arena plays {V3} and cannot"
    with pytest.raises(replay.ReplayError, match=message):
        verify(old)
    shown = arena("replay", "verify", old)
    assert shown.returncode != 0 and "Traceback" not in shown.stderr
    said = (shown.stdout + shown.stderr).strip().splitlines()
    assert len(said) == 1 and V2 in said[0] and V3 in said[0], said
    # Control: the same moves claiming v3 diverge at seat 0's second move, which v3 forbids.
    with pytest.raises(Divergence):
        verify(claiming(old, V3))


def test_a_v3_replay_verifies(tmp_path: Path) -> None:
    new = played(tmp_path, "v3")
    assert first_turn_moves(new) == 1
    assert verify(new).state.is_over()
    assert arena("replay", "verify", new).returncode == 0
