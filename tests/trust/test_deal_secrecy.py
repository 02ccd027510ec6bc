"""Tests arena_games.deals and referee.hosting.series: the deal's secrecy.

No bot can compute the cards it may not see: chance comes from a secret key, the match id
carries nothing of it, no bot process plays two seatings of one deal, and every deal can be
checked after the fact against the commitment its seats were sent.

Real referee, real bot processes over gRPC on 127.0.0.1; each attack runs beside a control in
which it succeeds (a practice seed, or the bot's processes taken together)."""

from __future__ import annotations

import asyncio
import json
import os
from collections import defaultdict
from pathlib import Path

import pytest
from arena.v1 import referee_pb2 as pb
from arena_games import get_game
from arena_games import replay_file as replay
from arena_games.deals import DealKey, KeyedRandom, commitment_of, practice_secret
from arena_games.match_messages import options_struct
from arena_games.match_settings import MatchSettings
from arena_sdk.bot import unwrap
from google.protobuf import json_format

from referee.bots.launcher import parse_spec
from referee.hosting.series import SeriesPlan, run_series
from tests.bots.deal_guesser import first_decision
from tests.commands.test_replay_and_cli import arena
from tests.tournaments.test_runner import config, play

BOTS = Path(__file__).resolve().parent.parent / "bots"
GUESSER = BOTS / "deal_guesser.py"
RECORDER = BOTS / "recorder_bot.py"


def guesses(folder: Path) -> dict[str, list[str]]:
    """FOUND/NOTFOUND lines of the guesser's logs, by kind."""
    found: dict[str, list[str]] = defaultdict(list)
    for log in (folder / "logs").rglob("*.log"):  # a match's output is in a folder of its own
        for line in log.read_text().splitlines():
            kind = line.split(" ", 1)[0]
            if kind in ("FOUND", "NOTFOUND"):
                found[kind].append(line)
    return found


def hidden_truth(replay_file: Path, seat: int) -> dict[str, object]:
    """What the seat's opponent held at the first decision, from the replay's key."""
    header = replay.read(replay_file)[0]
    assert isinstance(header, replay.Header)
    game = get_game(header.game)
    start = pb.MatchStart(
        game=header.game,
        num_seats=len(header.seats),
        options=options_struct(game.options(header.options)),
    )
    state = first_decision(start, DealKey.from_hex(header.deal_key, header.deal_salt))
    shown: dict[str, object] = json_format.MessageToDict(unwrap(state.observation(1 - seat)))
    return shown


def play_guesser(folder: Path, *extra: str) -> dict[str, list[str]]:
    done = arena(
        "play",
        "opposing-force",
        "--bot",
        str(GUESSER),
        "--bot",
        "example:random",
        "--games",
        "2",
        "--decision-ms",
        "30000",
        "--replays",
        str(folder),
        *extra,
        cwd=folder.parent,
    )
    assert done.returncode == 0, done.stderr
    return guesses(folder)


@pytest.mark.timeout(300)
def test_a_bot_that_imports_the_engines_cannot_rebuild_its_deal(tmp_path: Path) -> None:
    """The attack of the audit: every number in the match id, the commitment and the small
    seeds, each tried as the key; none deals the hand the bot holds."""
    found = play_guesser(tmp_path / "secret")
    assert not found["FOUND"], found["FOUND"]
    assert len(found["NOTFOUND"]) == 1, found  # the one match in which it moved first


@pytest.mark.timeout(300)
def test_control_the_same_bot_rebuilds_a_practice_seeds_deal(tmp_path: Path) -> None:
    """With --seed (practice), the same attack finds the seed and reads the opponent's hand."""
    folder = tmp_path / "practice"
    found = play_guesser(folder, "--seed", "7")
    [line] = found["FOUND"]
    _, match_id, candidate, shown = line.split(" ", 3)
    # The practice seed (or, when the random series id happens to hold a 7, that number).
    assert candidate.split("/")[0].endswith("seed=7"), candidate
    assert json.loads(shown) == hidden_truth(folder / f"{match_id}.jsonl", seat=0)


def test_match_ids_carry_no_seed_and_the_key_alone_makes_the_deal() -> None:
    game = get_game("opposing-force")
    bots = [parse_spec("example:random")] * 2
    practice = SeriesPlan(game, bots, 4, secret=practice_secret(7))
    again = SeriesPlan(game, bots, 4, secret=practice_secret(7))
    # The series id names the matches and is drawn afresh: nothing of the seed is in it.
    assert practice.series != again.series
    assert practice.match_id(0).startswith(f"opposing-force-{practice.series}-")
    assert [practice.lineup(i)[0] for i in range(4)] == [again.lineup(i)[0] for i in range(4)]
    fresh = SeriesPlan(game, bots, 4, secret=os.urandom(32))
    assert fresh.lineup(0)[0] != practice.lineup(0)[0]
    # Both seatings of a deal share its key; the next deal's key is unrelated.
    assert practice.lineup(0)[0] == practice.lineup(1)[0] != practice.lineup(2)[0]


def test_the_keyed_generator_is_reproducible_and_uniform() -> None:
    key = DealKey.practice(3)
    first, second = key.chance(), key.chance()
    draws = [first.random() for _ in range(20_000)]
    assert draws == [second.random() for _ in range(20_000)]
    assert all(0.0 <= d < 1.0 for d in draws)
    counts = [0] * 10
    for d in draws:
        counts[int(d * 10)] += 1
    chi2 = sum((c - 2000) ** 2 / 2000 for c in counts)
    assert chi2 < 30, counts  # 9 degrees of freedom: p < 0.001 above 27.9
    assert KeyedRandom(b"k" * 32).getrandbits(200).bit_length() <= 200
    assert key.substitutes().random() != key.chance().random()


def _seen_by_process(record_dir: Path) -> dict[str, list[str]]:
    """pid -> the deal commitments of the matches that process played."""
    seen: dict[str, list[str]] = {}
    for file in record_dir.glob("*.jsonl"):
        lines = [json.loads(line) for line in file.read_text().splitlines()]
        seen[file.stem] = [
            line["message"]["dealCommitment"] for line in lines if line["kind"] == "start"
        ]
    return seen


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("game", "seats"), [("opposing-force", 2), ("capture-the-commander", 3)])
def test_no_process_of_arena_play_sees_two_seatings_of_a_deal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, game: str, seats: int
) -> None:
    monkeypatch.setenv("ARENA_RECORD_DIR", str(tmp_path))
    bots = [parse_spec(str(RECORDER))] + [parse_spec("example:random")] * (seats - 1)
    plan = SeriesPlan(
        get_game(game),
        bots,
        2 * seats,  # two deals, each in every rotation
        secret=os.urandom(32),
        settings=MatchSettings(decision_ms=5000),
    )
    outcomes = asyncio.run(run_series(plan))
    assert all(not outcome.forfeits for outcome, _ in outcomes)
    seen = _seen_by_process(tmp_path)
    assert len(seen) == seats  # one recorder process per rotation
    for deals in seen.values():
        assert len(deals) == len(set(deals)) == 2, seen  # two deals, never one twice
    # Control: the bot's processes together did see every seating of both deals, so a single
    # process playing them all would have seen each deal `seats` times.
    every = [deal for deals in seen.values() for deal in deals]
    assert len(every) == 2 * seats and len(set(every)) == 2


@pytest.mark.timeout(180)
def test_no_process_of_a_tournament_sees_two_seatings_of_a_deal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_RECORD_DIR", str(tmp_path / "records"))
    (tmp_path / "records").mkdir()
    recorders = [{"spec": str(RECORDER), "name": f"rec{i}"} for i in range(3)]
    summary = play(tmp_path / "t", config("opposing-force", recorders, games_per_pairing=4))
    assert summary.state == "finished" and len(summary.ledger.finished) == 12
    seen = _seen_by_process(tmp_path / "records")
    for deals in seen.values():
        assert len(deals) == len(set(deals)), seen
    # Control: every deal was played in both seatings by each of its two bots (4 sightings),
    # so each bot did meet every deal twice, spread over two processes.
    every = [deal for deals in seen.values() for deal in deals]
    assert len(every) == 24 and all(every.count(deal) == 4 for deal in every)


@pytest.mark.timeout(120)
def test_the_commitment_sent_is_the_key_the_replay_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_RECORD_DIR", str(tmp_path))
    plan = SeriesPlan(
        get_game("opposing-force"),
        [parse_spec(str(RECORDER)), parse_spec("example:random")],
        1,
        secret=os.urandom(32),
        replays=tmp_path / "replays",
    )
    [(outcome, _)] = asyncio.run(run_series(plan))
    [sent] = [deal for deals in _seen_by_process(tmp_path).values() for deal in deals]
    [record] = tmp_path.glob("*.jsonl")
    ends = [json.loads(line)["message"] for line in record.read_text().splitlines()]
    assert ends and all("replayPath" not in end for end in ends)  # no path of the referee's
    assert outcome.replay_path is not None
    header = replay.read(outcome.replay_path)[0]
    assert isinstance(header, replay.Header)
    key, salt = bytes.fromhex(header.deal_key), bytes.fromhex(header.deal_salt)
    assert sent == header.deal_commitment == commitment_of(key, salt)
    good = arena("replay", "verify", str(outcome.replay_path), "--commitment", sent, cwd=tmp_path)
    assert good.returncode == 0, good.stderr
    wrong = "0" * 64
    bad = arena("replay", "verify", str(outcome.replay_path), "--commitment", wrong, cwd=tmp_path)
    assert bad.returncode == 1 and "commitment" in bad.stderr and "Traceback" not in bad.stderr
