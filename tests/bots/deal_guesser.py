"""An attacker: a bot that imports the referee's own engines and tries to rebuild its deal from
everything it receives and from every small seed.

At its first decision of a match, when it moves first, it tries candidate keys: every number in
the match id as a practice seed, the commitment it was sent as a key, and the practice seeds
0..GUESS_SEEDS-1 for the first GUESS_DEALS deals of a series. A candidate fits when dealing
with it gives exactly the observation the bot was sent. It then prints, to its log, the
opponent's observation at that point (cards hidden from its seat):
    FOUND <match id> <candidate> <opponent observation as JSON>
or, when no candidate fits:
    NOTFOUND <match id> <candidates tried>
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Iterator, Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_games import get_game
from arena_games.base import GameOptions, GameState
from arena_games.deals import DealKey, practice_secret
from arena_games.playout import sample_chance
from arena_sdk import Bot
from arena_sdk.bot import unwrap
from google.protobuf import json_format

GUESS_SEEDS = 1000
GUESS_DEALS = 4


class DealGuesser(Bot):
    name = "deal-guesser"

    def __init__(self) -> None:
        self.rng = random.Random(5)
        self.start = pb.MatchStart()
        self.acted = False

    def on_match_start(self, match: pb.MatchStart) -> None:
        self.start = match
        self.acted = False

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        if not self.acted:
            self.acted = True
            self._attack(observation)
        return self.rng.randrange(len(legal_actions))

    def _attack(self, observation: Any) -> None:
        began = time.perf_counter()
        tried = 0
        for name, deal in candidates(self.start):
            tried += 1
            state = first_decision(self.start, deal)
            if state.to_move() != (self.start.seat,):
                print(f"SKIP {self.start.match_id} (not the first to move)", flush=True)
                return
            if unwrap(state.observation(self.start.seat)) == observation:
                other = unwrap(state.observation(1 - self.start.seat))
                shown = json.dumps(json_format.MessageToDict(other), sort_keys=True)
                print(f"FOUND {self.start.match_id} {name} {shown}", flush=True)
                return
        seconds = time.perf_counter() - began
        print(f"NOTFOUND {self.start.match_id} {tried} in {seconds:.1f} s", flush=True)


def candidates(start: pb.MatchStart) -> Iterator[tuple[str, DealKey]]:
    for number in re.findall(r"\d+", start.match_id):
        for deal in range(GUESS_DEALS):
            yield f"id-seed={number}/d{deal}", DealKey.of(practice_secret(int(number)), f"d{deal}")
    if start.deal_commitment:
        committed = bytes.fromhex(start.deal_commitment)
        yield "commitment-as-key", DealKey(committed, b"")
    for seed in range(GUESS_SEEDS):
        for deal in range(GUESS_DEALS):
            yield f"seed={seed}/d{deal}", DealKey.of(practice_secret(seed), f"d{deal}")


def first_decision(start: pb.MatchStart, deal: DealKey) -> GameState[GameOptions]:
    """The match dealt with this key, up to its first decision."""
    options = json_format.MessageToDict(start.options)
    state = get_game(start.game).new_state(options, start.num_seats)
    rng = deal.chance()
    while state.is_chance():
        state.apply_chance(sample_chance(state.chance_outcomes(), rng))
    return state
