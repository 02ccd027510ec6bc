"""Chooses uniformly among the legal actions: plays any game."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_sdk.bot import Bot


class RandomBot(Bot):
    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        return self.rng.randrange(len(legal_actions))
