"""Plays at random, and fills its runner's disk when told: at tier none a bot writes wherever
its runner may. While $ARENA_FILL_DIR/fill exists, each of its decisions first appends to
$ARENA_FILL_DIR/bot_filler until the disk refuses (ENOSPC), so the match it plays ends on a
full disk."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_sdk.bot import Bot


class DiskFillerBot(Bot):
    name = "disk-filler"

    def __init__(self) -> None:
        self.rng = random.Random(5)
        self.where = Path(os.environ["ARENA_FILL_DIR"])

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        if (self.where / "fill").exists():
            chunk = b"\0" * (1024 * 1024)
            try:
                with (self.where / "bot_filler").open("ab", buffering=0) as out:
                    while out.write(chunk):
                        pass
            except OSError:
                pass  # full: what it meant to do
        return self.rng.randrange(len(legal_actions))
