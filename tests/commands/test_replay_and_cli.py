"""Replays: verified by re-simulation, divergences and corrupt files named clearly; and the
`arena` command line driven as a user would, in its own process."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from arena_games import get_game
from arena_games import replay_file as replay
from arena_games.deals import DealKey
from arena_games.local_play import play_local

from example_bots.random_bot import RandomBot
from referee.hosting.match_table import save_replay
from referee.matches.decisions import EncodedRequest
from referee.matches.match import Match
from referee.replays.verify import Divergence, verify

GAME = get_game("opposing-force")


class _LocalSeat:
    """An in-process seat for the match runner: a random bot with no wire."""

    def __init__(self, seed: int) -> None:
        self.name = f"local-{seed}"
        self.bot = RandomBot(seed)

    async def start(self, start: object) -> None:
        from arena.v1 import referee_pb2 as pb

        assert isinstance(start, pb.MatchStart)
        self.bot.on_match_start(start)  # as the SDK does

    async def decide(self, request: object, on_sent: object = None) -> object:
        from arena.v1 import referee_pb2 as pb

        assert isinstance(request, EncodedRequest)
        sent = request.message()
        index = self.bot.act(None, sent.legal_actions)
        return pb.Decision(match_id=request.match_id, decision_id=request.decision_id, index=index)

    async def end(self, end: object) -> None:
        return None


def _replay(tmp_path: Path, seed: int = 4) -> Path:
    match = Match(
        GAME,
        [_LocalSeat(1), _LocalSeat(2)],  # type: ignore[list-item]
        deal=DealKey.practice(seed),
        match_id="match",
    )

    async def played() -> Path | None:
        outcome = await match.run()
        await save_replay(tmp_path, outcome)
        return outcome.replay_path

    path = asyncio.run(played())
    assert path == tmp_path / "match.jsonl"
    return path


def test_a_match_replay_verifies_and_matches_the_in_process_result(tmp_path: Path) -> None:
    path = _replay(tmp_path)
    replayed = verify(path)
    assert replayed.state.is_over()
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "header"
    assert json.loads(lines[-1])["type"] == "result"
    assert not list(tmp_path.glob(".*.tmp"))  # the atomic write left no temporary file
    # The same seed and the same bots in process give the same result.
    local = play_local(GAME, [RandomBot(1), RandomBot(2)], deal=4)
    assert list(local.ranks) == json.loads(lines[-1])["ranks"]


def _rewrite(path: Path, change: object) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    change(lines)  # type: ignore[operator]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_changed_decision_is_a_divergence_naming_its_line(tmp_path: Path) -> None:
    path = _replay(tmp_path)

    def swap_first_play(lines: list[dict[str, object]]) -> None:
        for line in lines:
            if line["type"] == "decision":
                line["action"] = 0
                line["label"] = "pass"
                return

    _rewrite(path, swap_first_play)
    with pytest.raises(Divergence, match=r"match.jsonl:\d+: seat 0's 'pass' is not legal"):
        verify(path)


def test_another_key_with_its_own_commitment_deals_other_cards(tmp_path: Path) -> None:
    path = _replay(tmp_path)
    other = DealKey.practice(99)
    _rewrite(
        path,
        lambda lines: lines[0].update(
            deal_key=other.key.hex(), deal_salt=other.salt.hex(), deal_commitment=other.commitment
        ),
    )
    with pytest.raises(Divergence, match="chance outcome"):
        verify(path)


def test_a_key_that_was_not_committed_to_is_a_divergence(tmp_path: Path) -> None:
    """The cards were fixed before the first move: a key swapped in afterwards is caught."""
    path = _replay(tmp_path)
    sent = DealKey.practice(4).commitment
    verify(path, commitment=sent)
    with pytest.raises(Divergence, match="seats were sent commitment"):
        verify(path, commitment="ab" * 32)
    other = DealKey.practice(99)
    _rewrite(path, lambda lines: lines[0].update(deal_key=other.key.hex()))
    with pytest.raises(Divergence, match="does not match its commitment"):
        verify(path)


def test_a_changed_event_is_a_divergence(tmp_path: Path) -> None:
    path = _replay(tmp_path)

    def edit_event(lines: list[dict[str, object]]) -> None:
        for line in lines:
            if line["type"] == "event":
                line["audience"] = None
                return

    _rewrite(path, edit_event)
    with pytest.raises(Divergence, match="event"):
        verify(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "line 1 is not a replay header"),
        ("{not json\n", "not JSON"),
        ('{"type": "header"}\n', "bad record"),
        ('{"bad": 1}\n', r"bad record \(it has no 'type' field\)"),
        ('{"type": "nope"}\n', r"bad record \(Input tag 'nope' found using 'type'"),
        ('{"type": "chance", "step": 0, "outcome": 3}\n', "line 1 is not a replay header"),
    ],
)
def test_corrupt_replays_are_clear_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(replay.ReplayError, match=message):
        replay.read(path)


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tournaments.cli.arena_app", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.mark.timeout(180)
def test_cli_play_show_and_verify(tmp_path: Path) -> None:
    played = arena(
        "play",
        "opposing-force",
        "--bot",
        "example:random",
        "--bot",
        "example:random",
        "--games",
        "2",
        "--seed",
        "3",
        "--replays",
        "out",
        cwd=tmp_path,
    )
    assert played.returncode == 0, played.stderr
    assert "wins" in played.stdout and "replays:" in played.stdout
    files = sorted((tmp_path / "out").glob("*.jsonl"))
    assert len(files) == 2
    verified = arena("replay", "verify", *map(str, files), cwd=tmp_path)
    assert verified.returncode == 0 and verified.stdout.count("ok") == 2
    shown = arena("replay", "show", str(files[0]), "--as", "1", "--step", "30", cwd=tmp_path)
    assert shown.returncode == 0
    assert "seat 1 holds:" in shown.stdout and "seat 0 holds:" not in shown.stdout
    public = arena("replay", "show", str(files[0]), "--as", "public", cwd=tmp_path)
    assert "holds:" not in public.stdout and "result:" in public.stdout
    referee = arena("replay", "show", str(files[0]), "--as", "referee", cwd=tmp_path)
    assert "seat 0 holds:" in referee.stdout and "chance:" in referee.stdout
    files[1].write_text(files[1].read_text().replace('"label":"play', '"label":"xplay', 1))
    broken = arena("replay", "verify", *map(str, files), cwd=tmp_path)
    assert broken.returncode == 1
    assert "FAIL" in broken.stderr and "Traceback" not in broken.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["play", "chess", "--bot", "example:random"], "unknown game 'chess'"),
        (["play", "opposing-force", "--bot", "example:random"], "needs 2 bots"),
        (["play", "opposing-force", "--bot", "nope.py", "--bot", "example:random"], "is not a bot"),
        (
            ["play", "opposing-force", "--bot", "example:zzz", "--bot", "example:random"],
            "no example bot",
        ),
        (
            [
                "play",
                "opposing-force",
                "--bot",
                "example:random",
                "--bot",
                "example:random",
                "--option",
                "speed=3",
            ],
            "speed",
        ),
        (["replay", "show", "missing.jsonl"], "cannot read"),
        (["replay", "show", "x.jsonl", "--as", "7"], "x.jsonl"),
    ],
)
def test_cli_bad_input_is_a_clear_error(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "x.jsonl").write_text("")
    result = arena(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_lists_games(tmp_path: Path) -> None:
    result = arena("games", cwd=tmp_path)
    assert result.returncode == 0 and "opposing-force" in result.stdout


@pytest.mark.timeout(120)
def test_cli_plays_a_three_seat_game_with_options(tmp_path: Path) -> None:
    bots = ["--bot", "example:random"] * 2 + ["--bot", "example:capture-the-commander"]
    played = arena(
        "play",
        "capture-the-commander",
        *bots,
        "--option",
        "twos_beat_aces=true",
        "--option",
        "target_score=3",
        "--games",
        "1",
        "--replays",
        "out",
        cwd=tmp_path,
    )
    assert played.returncode == 0, played.stderr
    [file] = (tmp_path / "out").glob("*.jsonl")
    header = json.loads(file.read_text().splitlines()[0])
    assert header["options"]["twos_beat_aces"] is True and header["options"]["target_score"] == 3
    assert len(header["seats"]) == 3
    assert arena("replay", "verify", str(file), cwd=tmp_path).returncode == 0


def test_a_replay_of_other_rules_is_refused_naming_both_versions(tmp_path: Path) -> None:
    path = _replay(tmp_path)
    _rewrite(path, lambda lines: lines[0].update(rules_version="opposing-force/0"))
    with pytest.raises(
        replay.ReplayError, match=r"played under opposing-force rules opposing-force/0;"
    ):
        verify(path)
