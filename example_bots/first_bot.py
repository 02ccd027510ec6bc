"""Always plays the first legal action: a deterministic baseline for any game."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_sdk.bot import Bot


class FirstLegalBot(Bot):
    name = "first"

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        return 0
