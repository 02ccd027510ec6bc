"""Plays at random, but stops to think for PAUSE_S seconds at the first decision of its second
match: a series is caught mid-match with matches finished before it.

Usage: python pausing_bot.py PAUSE_S, with ARENA_ADDRESS and ARENA_TOKEN set."""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_sdk import Bot, run


class PausingBot(Bot):
    name = "pausing"

    def __init__(self, pause_s: float) -> None:
        self.pause_s = pause_s
        self.rng = random.Random(5)
        self.matches = 0
        self.paused = False

    def on_match_start(self, match: pb.MatchStart) -> None:
        self.matches += 1

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        if self.matches == 2 and not self.paused:
            self.paused = True
            time.sleep(self.pause_s)
        return self.rng.randrange(len(legal_actions))


if __name__ == "__main__":
    run(PausingBot(float(sys.argv[1])))
