"""A bot whose act() returns what is not a legal choice, at its first decision: `python
wrong_index_bot.py past|negative|text|raise`. past: an index past the legal list; negative:
-1; text: a string; raise: act() itself raises (what the SDK did with a wrong index before it
sent it on). Later decisions are random legal ones."""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from typing import Any

from arena_sdk.bot import Bot, choice_index
from arena_sdk.client import run

MODE = sys.argv[1]


class WrongIndex(Bot):
    name = "wrong-index"

    def __init__(self) -> None:
        self.decisions = 0

    def act(self, observation: Any, legal_actions: Sequence[Any]) -> Any:
        self.decisions += 1
        if self.decisions > 1:
            return random.randrange(len(legal_actions))
        past = len(legal_actions) + 7
        return {
            "past": lambda: past,
            "negative": lambda: -1,
            "text": lambda: "the second one",
            "raise": lambda: choice_index(past, legal_actions),
        }[MODE]()


if __name__ == "__main__":
    run(WrongIndex())
