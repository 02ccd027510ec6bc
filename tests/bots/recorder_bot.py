"""An SDK bot that plays randomly and writes every message it receives to
$ARENA_RECORD_DIR/<bot name>.jsonl, so tests can check what a seat was told."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_sdk import Bot
from google.protobuf import json_format
from google.protobuf.message import Message


class RecorderBot(Bot):
    name = "recorder"

    def __init__(self) -> None:
        self.rng = random.Random(3)
        self.path = Path(os.environ["ARENA_RECORD_DIR"]) / f"{os.getpid()}.jsonl"
        self.match_id = ""
        self.seat = -1

    def _write(self, kind: str, message: Message) -> None:
        line = {
            "kind": kind,
            "match": self.match_id,
            "seat": self.seat,
            "message": json_format.MessageToDict(message),
        }
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def on_match_start(self, match: pb.MatchStart) -> None:
        self.match_id, self.seat = match.match_id, match.seat
        self._write("start", match)

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        self._write("observation", observation)
        return self.rng.randrange(len(legal_actions))

    def on_event(self, event: pb.Event) -> None:
        self._write("event", event)

    def on_match_end(self, end: pb.MatchEnd) -> None:
        self._write("end", end)
