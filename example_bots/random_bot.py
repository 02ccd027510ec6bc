"""Chooses uniformly among the legal actions: plays any game.

Its choices come from a generator seeded per match from what MatchStart says of the match (the
deal's commitment and the seat) and from the seed it was made with, if any: a series replayed
with the same practice seed, or a match a tournament plays again after a lost worker, repeats
move for move. The commitment is public, so anyone at the table could foresee this bot's
choices: harmless in a baseline."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_sdk.bot import Bot


class RandomBot(Bot):
    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def on_match_start(self, match: pb.MatchStart) -> None:
        # A match without a deal key has an empty commitment: its id stands in.
        deal = match.deal_commitment or match.match_id
        keyed = f"{deal}:{match.seat}:{self.seed}".encode()
        self.rng = random.Random(hashlib.sha256(keyed).digest())

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        return self.rng.randrange(len(legal_actions))
