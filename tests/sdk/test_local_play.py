"""The local-play package (arena_games, docs/local-play.md): a game stepped by hand gives what a
referee's match gives, the terminal stepper plays a game to its end, and a replay file from a
real gRPC match walks back to its recorded result."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from pathlib import Path

import pytest
from arena_games import GAMES, get_game
from arena_games.base import GameError
from arena_games.deals import practice_secret
from arena_games.local_play import LocalMatch, play_local_game
from arena_games.replay_file import ResultRecord, open_replay, steps
from arena_games.tracking import rank_reward

from example_bots.random_bot import RandomBot
from referee.bots.launcher import parse_spec
from referee.hosting.series import SeriesPlan, run_series


class _Replayer(RandomBot):
    """Plays the indices a LocalMatch was given, in order, to compare the two."""

    def __init__(self, choices: list[int]) -> None:
        super().__init__()
        self.choices = choices

    def act(self, observation: object, legal_actions: object) -> int:
        return self.choices.pop(0)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_game_stepped_by_hand_is_the_game_play_local_deals(name: str) -> None:
    game = get_game(name)
    seats = game.seat_counts[-1]
    match = LocalMatch(name, seats, seed=11)
    rng = random.Random(5)
    chosen: list[list[int]] = [[] for _ in range(seats)]
    while not match.is_over():
        for seat in match.to_move():
            index = rng.randrange(len(match.legal(seat)))
            chosen[seat].append(index)
            match.play(index, seat)
    replayed = play_local_game(game, [_Replayer(c) for c in chosen], deal=11)
    assert replayed.history == match.state.history
    assert match.result() == replayed.result()
    assert match.events  # every event kept, with its audience
    assert match.board(None) == replayed.render(None)


def test_a_label_plays_the_action_it_names_and_bad_choices_are_named() -> None:
    match = LocalMatch("opposing-force", 2, seed=3)
    label, action = match.legal()[4].label, match.state.legal_actions(0)[4]
    match.play(label)
    assert [step.action for step in match.state.history if step.seat == 0] == [action]
    with pytest.raises(GameError, match="no legal action is labelled 'fly away'"):
        match.play("fly away")
    with pytest.raises(GameError, match="no legal action 999"):
        match.play(999)
    with pytest.raises(GameError, match="seat 0 is not to move"):
        match.play(0, seat=0)


def test_the_terminal_stepper_plays_to_the_end_and_names_bad_answers(tmp_path: Path) -> None:
    answers = "nonsense\n" + "0\n" * 3000
    run = subprocess.run(
        [sys.executable, "-m", "arena_games", "capture-the-commander", "--seed", "2"],
        input=answers,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "no legal action is labelled 'nonsense'" in run.stdout
    assert "result: ranks" in run.stdout
    unknown = subprocess.run(
        [sys.executable, "-m", "arena_games", "chess"], capture_output=True, text=True, timeout=60
    )
    assert unknown.returncode == 2 and "unknown game 'chess'" in unknown.stderr
    assert "Traceback" not in unknown.stderr


@pytest.mark.timeout(120)
def test_a_replay_of_a_real_match_walks_to_its_recorded_result(tmp_path: Path) -> None:
    bots = [parse_spec("example:random"), parse_spec("example:first")]
    plan = SeriesPlan(get_game("orc-pit-fighting"), bots, 1, practice_secret(4), replays=tmp_path)
    [(outcome, _)] = asyncio.run(run_series(plan))
    [path] = tmp_path.glob("*.jsonl")
    opened = open_replay(path)
    walked = list(steps(opened))
    assert opened.state.is_over() and len(walked) == len(opened.state.history)
    recorded = next(r for r in opened.records if isinstance(r, ResultRecord))
    assert list(opened.state.result().ranks) == recorded.ranks == list(outcome.result.ranks)


def test_rank_reward_is_the_share_of_other_seats_beaten() -> None:
    assert rank_reward([0, 1], 0) == 1.0 and rank_reward([0, 1], 1) == 0.0
    assert rank_reward([0, 0], 1) == 0.5
    assert rank_reward([1, 0, 1, 3], 0) == pytest.approx((0 + 0.5 + 1) / 3)
