"""The Opposing Force strategy bot: legal, claims at once, and far stronger than random."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_games import get_game
from arena_games.local_play import play_local
from arena_games.opposing_force import formation_value

from example_bots.opposing_force_bot import (
    OpposingForceBot,
    binomial_at_least,
    encode,
    three_of_four,
    two_of_three,
)
from example_bots.random_bot import RandomBot
from referee.bots.launcher import examples

GAMES = 400
MIN_WIN_RATE = 0.80
OPPOSING_FORCE = get_game("opposing-force")


class CheckedBot(OpposingForceBot):
    """The strategy bot, checking each of its own answers."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.decisions = 0
        self.claims_offered = 0

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        choice = super().act(observation, legal_actions)
        assert isinstance(choice, int) and 0 <= choice < len(legal_actions)
        kinds = [a.action.opposing_force.WhichOneof("kind") for a in legal_actions]
        if "claim" in kinds:
            self.claims_offered += 1
            assert kinds[choice] == "claim", legal_actions[choice].label
            assert legal_actions[choice].label.startswith("claim ")
        if kinds.count("pass_turn") and set(kinds) <= {"claim", "pass_turn"}:
            assert kinds[choice] in ("claim", "pass_turn")
        self.decisions += 1
        return choice


def test_registered_as_an_example() -> None:
    assert examples()["opposing-force"] == "example_bots.opposing_force_bot:OpposingForceBot"
    assert OpposingForceBot.name == "opposing-force-strategy"


def test_its_formation_values_match_the_engine() -> None:
    for three in list(combinations(range(52), 3))[::97]:
        ranks = sorted((c % 13 + 2 for c in three), reverse=True)
        category = formation_value(three) >> 12
        assert encode(category, *ranks) == formation_value(three)
    assert abs(binomial_at_least(2, 0.5, 1) - 0.75) < 1e-12
    assert abs(binomial_at_least(3, 0.5, 2) - 0.5) < 1e-12
    assert abs(binomial_at_least(10, 0.15, 2) - (1 - 0.85**10 - 10 * 0.15 * 0.85**9)) < 1e-12
    assert abs(two_of_three(0.5, 0.5, 0.5) - 0.5) < 1e-12
    assert abs(three_of_four(0.5, 0.5, 0.5, 0.5) - 5 / 16) < 1e-12


def test_always_legal_and_always_claims_when_it_can() -> None:
    claims = decisions = 0
    for game in range(12):
        strategy = CheckedBot(game)
        # Against itself as well as against random, so that both sides make formations.
        other: OpposingForceBot | RandomBot = (
            CheckedBot(game + 1) if game % 3 == 0 else RandomBot(game)
        )
        bots = [strategy, other] if game % 2 == 0 else [other, strategy]
        play_local(OPPOSING_FORCE, bots, deal=1000 + game)
        for bot in bots:
            if isinstance(bot, CheckedBot):
                claims += bot.claims_offered
                decisions += bot.decisions
    assert decisions > 100
    assert claims > 10


def test_deterministic_given_the_seed() -> None:
    results = [
        play_local(OPPOSING_FORCE, [OpposingForceBot(3), RandomBot(4)], deal=5) for _ in range(2)
    ]
    assert results[0] == results[1]


def test_beats_random_by_a_wide_margin() -> None:
    score = 0.0
    for game in range(GAMES):
        strategy, random_bot = OpposingForceBot(game), RandomBot(10_000 + game)
        seat = game % 2
        bots = [strategy, random_bot] if seat == 0 else [random_bot, strategy]
        score += play_local(OPPOSING_FORCE, bots, deal=game).scores[seat]
    assert score / GAMES >= MIN_WIN_RATE, f"win rate {score / GAMES:.3f}"
