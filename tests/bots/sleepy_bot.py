"""Plays at random after a short think ($ARENA_SLEEPY_S, 10 ms by default): tournaments in
tests last long enough to interrupt."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_sdk.bot import Bot


class SleepyBot(Bot):
    name = "sleepy"

    def __init__(self) -> None:
        self.rng = random.Random(3)
        self.think_s = float(os.environ.get("ARENA_SLEEPY_S", "0.01"))

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        time.sleep(self.think_s)
        return self.rng.randrange(len(legal_actions))
