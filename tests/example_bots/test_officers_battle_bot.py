"""The Officers' Battle strategy bot: legal, fast, kills whenever it can, and beats the random
bot in at least 80% of 400 seeded games (seats alternating)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_games import get_game
from arena_games.local_play import play_local

from example_bots.officers_battle_bot import OfficersBattleBot
from example_bots.random_bot import RandomBot
from referee.bots.launcher import examples

GAMES = 400
MIN_WIN_RATE = 0.80
# Timed in the CPU time of the deciding thread: other tests on the machine's cores (the suite
# runs on parallel workers) do not make the bot's decisions slower.
MAX_MS_PER_DECISION = 10.0
OFFICERS_BATTLE = get_game("officers-battle")
KILLS = ("ace_kill", "start_series", "finish_series")


class CheckedBot(OfficersBattleBot):
    """The strategy bot, timing its answers and checking that it kills whenever it can."""

    def __init__(self) -> None:
        super().__init__()
        self.decisions = 0
        self.seconds = 0.0
        self.kills_offered = 0

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        start = time.thread_time()
        choice = super().act(observation, legal_actions)
        self.seconds += time.thread_time() - start
        self.decisions += 1
        assert isinstance(choice, int) and 0 <= choice < len(legal_actions)
        kinds = [a.action.officers_battle.WhichOneof("kind") for a in legal_actions]
        if any(kind in KILLS for kind in kinds):
            self.kills_offered += 1
            assert kinds[choice] in KILLS, legal_actions[choice].label
        return choice


def test_registered_as_an_example() -> None:
    assert examples()["officers-battle"] == "example_bots.officers_battle_bot:OfficersBattleBot"
    assert OfficersBattleBot.name == "officers-battle-strategist"


def test_beats_the_random_bot_in_four_games_out_of_five_and_is_fast() -> None:
    wins = decisions = kills = 0
    seconds = 0.0
    for game in range(GAMES):
        strategy, other = CheckedBot(), RandomBot(seed=game)
        seat = game % 2
        bots = [strategy, other] if seat == 0 else [other, strategy]
        result = play_local(OFFICERS_BATTLE, bots, deal=game)
        wins += result.ranks[seat] == 0 and result.ranks[1 - seat] == 1
        decisions += strategy.decisions
        seconds += strategy.seconds
        kills += strategy.kills_offered
    assert kills > GAMES, "the bot should have met many chances to kill"
    assert wins / GAMES >= MIN_WIN_RATE, f"won {wins} of {GAMES}"
    assert 1000 * seconds / decisions < MAX_MS_PER_DECISION
