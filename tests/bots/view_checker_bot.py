"""An SDK bot that, at every decision, builds worlds from its own view in its own process (the
SeatTracker fed with exactly the messages it received over the wire), checks that each shows it
what it was sent, byte for byte, and plays randomly. It writes its counts to
$ARENA_RECORD_DIR/<pid>.json at each match end, for tests/e2e/test_views_over_grpc.py."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_games.legal_actions import legal_action_messages
from arena_games.tracking import SeatTracker
from arena_sdk import Bot

SAMPLES = 3


class ViewCheckerBot(Bot):
    name = "view-checker"

    def __init__(self) -> None:
        self.rng = random.Random(11)
        self.tracker = SeatTracker()
        self.path = Path(os.environ["ARENA_RECORD_DIR"]) / f"{os.getpid()}.json"
        self.counts = {"views": 0, "samples": 0, "disagreements": 0}

    def on_match_start(self, match: pb.MatchStart) -> None:
        self.tracker.on_match_start(match)

    def on_event(self, event: pb.Event) -> None:
        self.tracker.on_event(event)

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        view = self.tracker.view(observation, legal_actions)
        sampler = self.tracker.sampler(observation, legal_actions)
        sent = view.observation.SerializeToString(deterministic=True)
        self.counts["views"] += 1
        for _ in range(SAMPLES):
            world = sampler.sample(self.rng)
            shown = world.observation(view.seat).SerializeToString(deterministic=True)
            legal = legal_action_messages(world, view.seat)
            self.counts["samples"] += 1
            self.counts["disagreements"] += shown != sent or legal != list(legal_actions)
            ids = world.legal_actions(view.seat)
            labels = [world.action_label(action) for action in ids]
            self.counts["disagreements"] += labels != [legal.label for legal in legal_actions]
        return self.rng.randrange(len(legal_actions))

    def on_match_end(self, end: pb.MatchEnd) -> None:
        self.counts["reward"] = self.counts.get("reward", 0) + self.tracker.reward(end)
        self.path.write_text(json.dumps(self.counts))
