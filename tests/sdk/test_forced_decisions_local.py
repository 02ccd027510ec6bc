"""Every game: forced decisions are still asked in in-process play
(sdk/games/arena_games/local_play.py) too.
(The match runner over gRPC: tests/e2e/test_forced_decisions.py.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from arena.v1 import referee_pb2 as pb
from arena_games import GAMES
from arena_games.base import GameDefinition, GameOptions, GameState
from arena_games.local_play import play_local

from example_bots.random_bot import RandomBot


class CountingBot(RandomBot):
    """Plays randomly and keeps the size of every legal list it was asked to choose from."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.asked: list[int] = []

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        self.asked.append(len(legal_actions))
        return super().act(observation, legal_actions)


def test_forced_decisions_are_still_asked_in_local_play(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forced decisions are still asked. A decision with a single legal action goes to the bot
    like any other: answering for it at once would tell the other seats, through timing, what
    that seat could not do.

    In every game, each decision in the history was put to its seat's bot (nothing was
    answered for it), and some of those had a single legal action."""
    made: list[GameState[Any]] = []
    new_state = GameDefinition.new_state

    def keep(
        game: GameDefinition[GameOptions],
        options: GameOptions | dict[str, object] | None = None,
        num_seats: int | None = None,
    ) -> GameState[GameOptions]:
        made.append(new_state(game, options, num_seats))
        return made[-1]

    monkeypatch.setattr(GameDefinition, "new_state", keep)
    for name, game in sorted(GAMES.items()):
        forced = 0
        for deal in range(6):
            bots = [CountingBot(deal * 10 + seat) for seat in range(game.default_seats)]
            play_local(game, bots, deal)
            for seat, bot in enumerate(bots):
                decisions = sum(step.seat == seat for step in made[-1].history)
                assert len(bot.asked) == decisions, (name, deal, seat)
                forced += bot.asked.count(1)
        if name in ("officers-battle", "orc-pit-fighting", "strato-sphere"):
            assert forced > 0, name
