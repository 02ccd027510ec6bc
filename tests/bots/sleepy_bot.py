"""Plays at random after a short think ($ARENA_SLEEPY_S, 10 ms by default): tournaments in
tests last long enough to interrupt. With $ARENA_SLEEPY_GATE (a file's path) it thinks on for as
long as that file is missing: a test holds its matches in flight for as long as it needs."""

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
        self.gate = os.environ.get("ARENA_SLEEPY_GATE")

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        time.sleep(self.think_s)
        while self.gate is not None and not os.path.exists(self.gate):
            time.sleep(0.02)
        return self.rng.randrange(len(legal_actions))
