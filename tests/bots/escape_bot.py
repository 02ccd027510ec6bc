"""A bot that tries to break out of its sandbox, says on its output how each try went, then
plays random legal moves (or burns a resource until a limit stops it).

Usage: python escape_bot.py [--tcp HOST:PORT] [--write PATH] [--tmp-file PATH] [--grab-mb N]
[--peek FOLDER] [--secret-env NAME] [--read NAME=PATH ...] [--fork N] [--hog memory|cpu], with
ARENA_ADDRESS and ARENA_TOKEN set. Each try prints one line `escape: NAME: blocked: WHY` or
`escape: NAME: ESCAPED: WHAT` (`allowed` for what the sandbox permits on purpose, like its
private /tmp); first of all it says which uid it runs as (`escape: uid: N`).

Give paths as `--peek=PATH`: a sandbox shows a bot the paths its command line names, and an
attacker knows where to look without being told.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_sdk.bot import Bot
from arena_sdk.client import run

CHUNK_MB = 16
CHUNK = CHUNK_MB * 1024 * 1024


def attempt(name: str, try_it: Callable[[], str], escaped: str = "ESCAPED") -> None:
    """Run one try: what it returns means it got through; an OSError or MemoryError, not."""
    try:
        outcome = f"{escaped}: {try_it()}"
    except (OSError, MemoryError) as exc:
        outcome = f"blocked: {type(exc).__name__}: {exc}"
    print(f"escape: {name}: {outcome}", flush=True)


def connect(target: str) -> str:
    host, _, port = target.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=3):
        return f"connected to {target}"


def write(path: str) -> str:
    with open(path, "w", encoding="utf-8") as out:
        out.write("out of the sandbox\n")
    return f"wrote {path}"


def grab(megabytes: int) -> str:
    """Allocate memory in chunks and write to it, so it is really used, not only reserved."""
    chunks = [b"\x01" * CHUNK for _ in range(megabytes // CHUNK_MB)]
    return f"holds {len(chunks) * CHUNK_MB} MB"


def peek(folder: str) -> str:
    entries = os.listdir(folder)
    if not entries:
        raise OSError(f"{folder} looks empty")
    return f"{folder} holds {sorted(entries)}"


def read(path: str) -> str:
    with open(path, "rb") as source:
        data = source.read()
    return f"read {len(data)} bytes of {path}"


def fork(count: int) -> str:
    """Run count children at once (each waits for a pipe to close), then end them all."""
    read_end, write_end = os.pipe()
    children = []
    try:
        for _ in range(count):
            pid = os.fork()
            if pid == 0:
                os.close(write_end)
                os.read(read_end, 1)
                os._exit(0)
            children.append(pid)
    except OSError as exc:
        raise OSError(exc.errno, f"{exc.strerror} after {len(children)} children") from None
    finally:
        os.close(write_end)
        os.close(read_end)
        for pid in children:
            os.waitpid(pid, 0)
    return f"ran {count} children at once"


def secret(name: str) -> str:
    if name not in os.environ:
        raise OSError(f"${name} is not set")
    return f"${name} is readable"


def hog(resource: str) -> None:
    """Use the resource without end: only a limit can stop this."""
    if resource == "memory":
        kept = []
        while True:
            kept.append(b"\x01" * CHUNK)
    while True:
        pass


class EscapeBot(Bot):
    name = "escape"

    def __init__(self, hog_at_first_decision: str | None) -> None:
        self.hog = hog_at_first_decision
        self.rng = random.Random(3)

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        if self.hog:
            hog(self.hog)
        return self.rng.randrange(len(legal_actions))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tcp")
    parser.add_argument("--write")
    parser.add_argument("--tmp-file")
    parser.add_argument("--grab-mb", type=int)
    parser.add_argument("--peek")
    parser.add_argument("--secret-env")
    parser.add_argument("--read", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--fork", type=int)
    parser.add_argument("--hog", choices=["memory", "cpu"])
    args = parser.parse_args()
    address = os.environ.get("ARENA_ADDRESS", "")
    print(f"escape: uid: {os.getuid()}", flush=True)
    print(f"escape: address: {address.partition(':')[0]}", flush=True)
    if args.tcp:
        attempt("tcp", lambda: connect(args.tcp))
    if args.write:
        attempt("write", lambda: write(args.write))
    if args.tmp_file:
        attempt("tmp", lambda: write(args.tmp_file), escaped="allowed")
    if args.grab_mb:
        attempt("memory", lambda: grab(args.grab_mb))
    if args.peek:
        attempt("peek", lambda: peek(args.peek))
    if args.secret_env:
        attempt("secret", lambda: secret(args.secret_env))
    for target in args.read:
        name, _, path = target.partition("=")
        attempt(f"read {name}", lambda path=path: read(path))
    if args.fork:
        attempt("fork", lambda: fork(args.fork))
    summary = run(EscapeBot(args.hog))
    print(f"escape: played {summary.matches} matches, {summary.decisions} decisions", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
