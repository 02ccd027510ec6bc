"""Tests referee.matches.match, referee.wire.server and referee.hosting.series end to end.

Opposing Force end to end: bot processes over gRPC, replays that verify, and every kind of
misbehaviour meeting its configured outcome while the referee keeps serving other matches."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from arena_games import get_game
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings, Policies, Policy

from referee.bots.launcher import BotSpec, parse_spec
from referee.hosting.series import SeriesPlan, run_series
from referee.matches.match import MatchOutcome
from referee.replays.verify import verify
from referee.wire.server import start_server
from tests.e2e.conftest import rawbot

# Honest bots held to deadlines of a few hundred ms, or floods and refusals timed: these run
# alone, after the rest of the suite (make test), where no other test takes their cores.
pytestmark = pytest.mark.realtime
GAME = get_game("opposing-force")
FAST = MatchSettings(decision_ms=2000, time_bank_ms=1000)


def plan(bots: list[BotSpec], replays: Path, games: int = 2, **kw: object) -> SeriesPlan:
    return SeriesPlan(GAME, bots, games, secret=practice_secret(11), replays=replays, **kw)  # type: ignore[arg-type]


def seat_of(lineup: list[int], bot: int) -> int:
    return lineup.index(bot)


@pytest.mark.timeout(120)
def test_two_sdk_bots_play_and_every_replay_verifies(tmp_path: Path) -> None:
    bots = [parse_spec("example:opposing-force"), parse_spec("example:random")]
    outcomes = asyncio.run(run_series(plan(bots, tmp_path, games=4, settings=FAST)))
    assert len(outcomes) == 4
    for outcome, _lineup in outcomes:
        assert not outcome.forfeits
        assert outcome.replay_path is not None and outcome.replay_path.exists()
        verify(outcome.replay_path)
    # Every deal is played with the seats both ways round.
    assert [lineup for _, lineup in outcomes] == [[0, 1], [1, 0], [0, 1], [1, 0]]


def _forfeited(outcome: MatchOutcome, seat: int, cause: str) -> None:
    assert [(f.seat, f.cause.value) for f in outcome.forfeits] == [(seat, cause)]
    assert outcome.result.ranks[seat] == 1
    assert outcome.result.ranks[1 - seat] == 0
    assert outcome.replay_path is not None
    verify(outcome.replay_path)


@pytest.mark.timeout(120)
def test_misbehaving_bots_forfeit_with_their_cause_while_others_play(tmp_path: Path) -> None:
    settings = MatchSettings(decision_ms=300, time_bank_ms=200)

    async def scenario() -> list[list[tuple[MatchOutcome, list[int]]]]:
        server = await start_server("127.0.0.1:0")
        try:
            runs = [
                plan([rawbot("play"), rawbot("play")], tmp_path / "normal", 4, settings=FAST),
                plan(
                    [rawbot("illegal"), rawbot("play")], tmp_path / "illegal", 1, settings=settings
                ),
                plan([rawbot("hang"), rawbot("play")], tmp_path / "hang", 1, settings=settings),
                plan([rawbot("exit"), rawbot("play")], tmp_path / "exit", 1, settings=settings),
            ]
            return list(await asyncio.gather(*(run_series(p, server=server) for p in runs)))
        finally:
            await server.stop()

    normal, illegal, hang, exited = asyncio.run(scenario())
    assert len(normal) == 4 and all(not o.forfeits for o, _ in normal)
    for outcome, _ in normal:
        assert outcome.replay_path is not None
        verify(outcome.replay_path)
    _forfeited(illegal[0][0], 0, "illegal_action")
    _forfeited(hang[0][0], 0, "timeout")
    _forfeited(exited[0][0], 0, "crash")
    assert "index 0 of" not in illegal[0][0].forfeits[0].detail
    assert "ms + bank" in hang[0][0].forfeits[0].detail


@pytest.mark.timeout(120)
def test_random_policy_plays_for_a_misbehaving_bot_until_its_strikes_run_out(
    tmp_path: Path,
) -> None:
    policies = Policies(illegal_action=Policy.RANDOM, crash=Policy.RANDOM, max_strikes=3)
    settings = MatchSettings(decision_ms=1000, time_bank_ms=0, policies=policies)
    illegal = asyncio.run(
        run_series(plan([rawbot("illegal"), rawbot("play")], tmp_path / "i", 1, settings=settings))
    )
    outcome = illegal[0][0]
    assert [(f.seat, f.cause.value) for f in outcome.forfeits] == [(0, "illegal_action")]
    substituted = [
        r for r in outcome.records if getattr(r, "substituted_for", None) == "illegal_action"
    ]
    assert len(substituted) == 2  # the third strike forfeits
    exited = asyncio.run(
        run_series(plan([rawbot("exit"), rawbot("play")], tmp_path / "e", 1, settings=settings))
    )
    outcome = exited[0][0]
    assert not outcome.forfeits  # a dead bot under the random policy plays on, by the referee
    assert any(getattr(r, "substituted_for", None) == "crash" for r in outcome.records)
    assert outcome.replay_path is not None
    verify(outcome.replay_path)


@pytest.mark.timeout(120)
def test_a_bot_that_died_in_an_earlier_match_is_played_for_under_the_random_policy(
    tmp_path: Path,
) -> None:
    """Issue 16: a seat whose stream broke between matches came to its first decision under the
    random crash policy, and the referee failed with AttributeError ('NoneType' object has no
    attribute 'kind') instead of playing for it."""
    policies = Policies(crash=Policy.RANDOM)
    settings = MatchSettings(decision_ms=1000, time_bank_ms=0, policies=policies)
    # Match 2 is played by the process of match 0 (the same rotation), which exited there.
    outcomes = asyncio.run(
        run_series(plan([rawbot("exit"), rawbot("play")], tmp_path, 3, settings=settings))
    )
    assert len(outcomes) == 3 and all(not outcome.forfeits for outcome, _ in outcomes)
    third = outcomes[2][0]
    chosen = [getattr(r, "substituted_for", None) for r in third.records if hasattr(r, "seat")]
    assert chosen and "crash" in chosen
    for outcome, _ in outcomes:
        assert outcome.replay_path is not None
        verify(outcome.replay_path)


@pytest.mark.timeout(60)
def test_typed_answers_are_accepted(tmp_path: Path) -> None:
    outcomes = asyncio.run(
        run_series(plan([rawbot("typed"), rawbot("play")], tmp_path, 2, settings=FAST))
    )
    assert all(not o.forfeits for o, _ in outcomes)
