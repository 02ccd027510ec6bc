"""Opposing Force at random, telling stderr what it holds, as bot authors do: at each decision a
line `CHATTY-7f3a MATCH_ID hand: Qh Ts ...` (MARKER, the match and its hand), and a terminal
escape that would retitle the window. $ARENA_CHATTY_BYTES (unset: none): that many more bytes
written at its first decision of each match, and their count in a line of its own."""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_games import cards
from arena_sdk.bot import Bot

MARKER = "CHATTY-7f3a"
TITLE = "\x1b]0;owned\x07"


class ChattyBot(Bot):
    name = "chatty"

    def __init__(self) -> None:
        self.rng = random.Random()
        self.match = ""
        self.flood = int(os.environ.get("ARENA_CHATTY_BYTES", "0"))
        self.flooded = False
        print(f"{MARKER} starting, pid {os.getpid()}", file=sys.stderr)

    def on_match_start(self, match: pb.MatchStart) -> None:
        self.match = match.match_id
        self.flooded = False
        print(f"{MARKER} {self.match} begins{TITLE}", file=sys.stderr)

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        hand = " ".join(cards.label(cards.from_message(c)) for c in observation.hand)
        print(f"{MARKER} {self.match} hand: {hand}", file=sys.stderr)
        if self.flood and not self.flooded:
            self.flooded = True
            line = (f"{MARKER} {self.match} flood " + "x" * 90)[:99] + "\n"
            block = (line * (1 + 65536 // len(line))).encode()
            left = self.flood
            while left > 0:
                left -= os.write(2, block[: min(left, len(block))])
            print(f"{MARKER} {self.match} flooded {self.flood} bytes", file=sys.stderr)
        time.sleep(0.02)
        return self.rng.randrange(len(legal_actions))
