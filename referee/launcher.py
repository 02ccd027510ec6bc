"""Bot SPECs and the bot processes they start.

A SPEC is a path to a Python file with a Bot class (`bots/mine.py`, or `bots/mine.py:Class`),
`example:NAME` for one of the example bots, or `cmd:COMMAND` for a bot in any language that
reads ARENA_ADDRESS and ARENA_TOKEN from its environment. Every bot is its own process, in its
own process group, so that it and any children it forks can be stopped together.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from example_bots import EXAMPLES


class SpecError(ValueError):
    """A bot SPEC that names nothing runnable."""


@dataclass(frozen=True)
class BotSpec:
    spec: str
    name: str
    argv: tuple[str, ...]


def parse_spec(spec: str) -> BotSpec:
    if spec.startswith("cmd:"):
        command = spec[4:].strip()
        if not command:
            raise SpecError("cmd: needs a command, e.g. cmd:'./mybot --fast'")
        argv = tuple(shlex.split(command))
        return BotSpec(spec, Path(argv[0]).name, argv)
    if spec.startswith("example:"):
        name = spec[8:]
        if name not in EXAMPLES:
            known = ", ".join(sorted(EXAMPLES))
            raise SpecError(f"no example bot {name!r}; known: {known}")
        return BotSpec(spec, name, _launch(EXAMPLES[name]))
    path, _, class_name = spec.partition(".py:")
    path = f"{path}.py" if class_name else spec
    if not path.endswith(".py") or not Path(path).is_file():
        raise SpecError(
            f"{spec!r} is not a bot: give a Python file with a Bot class (FILE.py or "
            "FILE.py:Class), example:NAME, or cmd:COMMAND"
        )
    target = str(Path(path).resolve()) + (f":{class_name}" if class_name else "")
    return BotSpec(spec, Path(path).stem, _launch(target))


def _launch(target: str) -> tuple[str, ...]:
    return (sys.executable, "-m", "arena_sdk.launch", target)


async def start_bot(
    bot: BotSpec, address: str, token: str, log_path: Path | None
) -> asyncio.subprocess.Process:
    """Start the bot with the referee's address and its token in its environment; its output
    goes to log_path (or nowhere)."""
    env = dict(os.environ, ARENA_ADDRESS=address, ARENA_TOKEN=token, PYTHONUNBUFFERED="1")
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        sink = log_path.open("ab")
    try:
        return await asyncio.create_subprocess_exec(
            *bot.argv,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=sink if log_path is not None else asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.STDOUT
            if log_path is not None
            else asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        raise SpecError(f"cannot start {bot.spec}: {exc}") from None
    finally:
        if log_path is not None:
            sink.close()


async def stop_bot(process: asyncio.subprocess.Process, grace_s: float = 2.0) -> int:
    """Let the bot finish on its own for grace_s, then end its whole process group."""
    try:
        return await asyncio.wait_for(process.wait(), grace_s)
    except TimeoutError:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            return await asyncio.wait_for(process.wait(), grace_s)
        except TimeoutError:
            continue
    return await process.wait()
