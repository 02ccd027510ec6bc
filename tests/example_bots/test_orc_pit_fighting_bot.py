"""The Orc Pit Fighting strategy bot: legal, deterministic, fast, and far stronger than random."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_games import get_game
from arena_games.local_play import play_local

from example_bots.orc_pit_fighting_bot import OrcPitFightingBot, run_value
from example_bots.random_bot import RandomBot
from referee.bots.launcher import examples

GAMES = 400
MIN_WIN_RATE = 0.70
# Timed in the CPU time of the deciding thread: other tests on the machine's cores (the suite
# runs on parallel workers) do not make the bot's decisions slower.
MAX_MS_PER_DECISION = 10.0
ORC_PIT_FIGHTING = get_game("orc-pit-fighting")


class CheckedBot(OrcPitFightingBot):
    """The strategy bot, checking and timing each of its own answers."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.decisions = 0
        self.seconds = 0.0
        self.kinds: set[str] = set()

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        start = time.thread_time()
        choice = super().act(observation, legal_actions)
        self.seconds += time.thread_time() - start
        assert isinstance(choice, int) and 0 <= choice < len(legal_actions)
        action = legal_actions[choice].action.orc_pit_fighting
        self.kinds.add(action.WhichOneof("kind") or "")
        labels = [a.label for a in legal_actions]
        if any(label == "attack Ac" for label in labels):
            assert labels[choice] == "attack Ac", "the ace of clubs attacks at once"
        if "pit Ac" in labels and observation.phase in (13, 14):
            assert labels[choice] == "pit Ac", "the ace of clubs is played at once"
        self.decisions += 1
        return choice


def test_registered_as_an_example() -> None:
    assert examples()["orc-pit-fighting"] == "example_bots.orc_pit_fighting_bot:OrcPitFightingBot"
    assert OrcPitFightingBot.name == "orc-pit-fighting-strategy"


def test_run_values_follow_the_combat_value_rule() -> None:
    assert run_value({9, 8, 7}, []) == 11
    assert run_value({7}, [8, 9]) == 11
    assert run_value({2, 3, 11, 12, 13}, []) == 14
    assert run_value(set(), [5]) == 5
    assert run_value(set(), []) == 0


def test_always_legal_fast_and_uses_every_kind_of_answer() -> None:
    kinds: set[str] = set()
    decisions = 0
    seconds = 0.0
    for game in range(16):
        strategy = CheckedBot(game)
        other: OrcPitFightingBot | RandomBot = (
            CheckedBot(game + 1) if game % 4 == 0 else RandomBot(game)
        )
        bots = [strategy, other] if game % 2 == 0 else [other, strategy]
        play_local(ORC_PIT_FIGHTING, bots, deal=2000 + game)
        for bot in bots:
            if isinstance(bot, CheckedBot):
                kinds |= bot.kinds
                decisions += bot.decisions
                seconds += bot.seconds
    assert decisions > 500
    assert 1000 * seconds / decisions < MAX_MS_PER_DECISION
    assert {"play", "pass_turn", "decline", "defend", "counterattack", "choose_turn"} <= kinds


def test_deterministic_given_the_seed() -> None:
    results = [
        play_local(ORC_PIT_FIGHTING, [OrcPitFightingBot(3), RandomBot(4)], deal=5) for _ in range(2)
    ]
    assert results[0] == results[1]


def test_beats_random_in_at_least_seventy_percent_of_400_games() -> None:
    score = 0.0
    for game in range(GAMES):
        strategy, random_bot = OrcPitFightingBot(game), RandomBot(10_000 + game)
        seat = game % 2
        bots = [strategy, random_bot] if seat == 0 else [random_bot, strategy]
        score += play_local(ORC_PIT_FIGHTING, bots, deal=game).scores[seat]
    assert score / GAMES >= MIN_WIN_RATE, f"win rate {score / GAMES:.3f}"
