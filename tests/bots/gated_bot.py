"""Plays at random, but at the first decision of one match waits until a file exists: a test
holds a tournament at a known point (that match in flight, the ones before it finished) for as
long as it looks, then lets it go on by creating the file. It prints MARKER and the match at each
match's start (stderr), a line of its own in its seat's log.

Usage: python gated_bot.py GATE MATCH_ID, with ARENA_ADDRESS and ARENA_TOKEN set. Give the
match a decision clock longer than the test's wait."""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_sdk import Bot, run

MARKER = "GATED-51c0"  # what it prints at each match's start, unlike chatty_bot.py's
GIVE_UP_S = 120  # a test that never opens the gate must not leave this process behind


class GatedBot(Bot):
    name = "gated"

    def __init__(self, gate: Path, match_id: str) -> None:
        self.gate = gate
        self.match_id = match_id
        self.rng = random.Random(7)
        self.waiting = False

    def on_match_start(self, match: pb.MatchStart) -> None:
        self.waiting = match.match_id == self.match_id
        print(f"{MARKER} {match.match_id} begins", file=sys.stderr)  # its own line in its log

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        if self.waiting:
            self.waiting = False
            deadline = time.monotonic() + GIVE_UP_S
            while not self.gate.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        return self.rng.randrange(len(legal_actions))


if __name__ == "__main__":
    run(GatedBot(Path(sys.argv[1]), sys.argv[2]))
