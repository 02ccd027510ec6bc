"""A bot whose children take memory together, each within a per-process limit: `python
memory_tree_bot.py CHILDREN MB [--play]`.

First, before it imports anything large, it forks CHILDREN processes that each touch MB
megabytes and hold them for a few seconds, all at once; each says `tree: child N: holds MB MB`
when it has them. It waits for them all and says `tree: children done`, then plays random legal
moves (--play, with ARENA_ADDRESS and ARENA_TOKEN set) or exits. A limit on the whole process
tree kills it before it gets there; a limit per process (RLIMIT_AS) lets every child have its
memory.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import Any

HOLD_S = 3.0


def take(number: int, megabytes: int) -> None:
    held = b"\x01" * (megabytes * 1024 * 1024)  # written, so used and not only reserved
    said = f"tree: child {number}: holds {len(held) // (1024 * 1024)} MB\n"
    # One write: with PYTHONUNBUFFERED, print writes the line and its newline apart, and the
    # children's lines could interleave in the pipe they share.
    os.write(1, said.encode())
    time.sleep(HOLD_S)


def main() -> int:
    children, megabytes = int(sys.argv[1]), int(sys.argv[2])
    pids = []
    for number in range(children):
        pid = os.fork()
        if pid == 0:
            try:
                take(number, megabytes)
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    print("tree: children done", flush=True)
    if "--play" not in sys.argv:
        return 0
    import random

    from arena_sdk.bot import Bot
    from arena_sdk.client import run

    class RandomBot(Bot):
        name = "memory-tree"

        def act(self, observation: Any, legal_actions: Sequence[Any]) -> int:
            return random.randrange(len(legal_actions))

    run(RandomBot())
    return 0


if __name__ == "__main__":
    sys.exit(main())
