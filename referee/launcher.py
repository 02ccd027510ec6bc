"""Bot SPECs and the bot processes they start.

A SPEC is a path to a Python file with a Bot class (`bots/mine.py`, or `bots/mine.py:Class`),
`example:NAME` for one of the example bots, or `cmd:COMMAND` for a bot in any language that
reads ARENA_ADDRESS and ARENA_TOKEN from its environment. Every bot is its own process, in its
own process group, so that it and any children it forks can be stopped together, and runs in
the sandbox it is given (referee/sandbox.py). When it ends, its log says how.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from weakref import WeakKeyDictionary

from example_bots import EXAMPLES
from referee.sandbox import Launch, Sandbox, SandboxError, Tier, confine, describe_exit

# Where each started bot logs, and its sandbox: stop_bot notes there how the process ended.
_started: WeakKeyDictionary[asyncio.subprocess.Process, tuple[Path, Sandbox | None]] = (
    WeakKeyDictionary()
)


LOG_TAIL_LINES = 8


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
    bot: BotSpec,
    address: str,
    token: str,
    log_path: Path | None,
    sandbox: Sandbox | None = None,
) -> asyncio.subprocess.Process:
    """Start the bot in its sandbox with the referee's address and its token in its
    environment; its output goes to log_path (or nowhere). A sandbox without network needs a
    unix: address (Sandbox.needs_unix_socket)."""
    env = dict(os.environ, ARENA_ADDRESS=address, ARENA_TOKEN=token, PYTHONUNBUFFERED="1")
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        launch = await _confine(sandbox, bot.argv, env)
    except SandboxError as exc:
        raise SpecError(f"cannot start {bot.spec}: {exc}") from None
    sink = log_path.open("ab") if log_path is not None else None
    try:
        process = await asyncio.create_subprocess_exec(
            *launch.argv,
            env=launch.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=sink if sink is not None else asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.STDOUT if sink is not None else asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        raise SpecError(f"cannot start {bot.spec}: {exc}") from None
    finally:
        if sink is not None:
            sink.close()
    if log_path is not None:
        _started[process] = (log_path, sandbox)
    return process


async def _confine(sandbox: Sandbox | None, argv: tuple[str, ...], env: dict[str, str]) -> Launch:
    if sandbox is None:
        return confine(None, argv, env)
    if sandbox.tier is Tier.BUBBLEWRAP:
        # Created now so bwrap can cover them: one made later would be in plain sight.
        for folder in sandbox.hidden:
            folder.mkdir(parents=True, exist_ok=True)
    if sandbox.tier is Tier.DOCKER:  # asks the engine: not on the event loop
        return await asyncio.to_thread(confine, sandbox, argv, env)
    return confine(sandbox, argv, env)


async def stop_bot(process: asyncio.subprocess.Process, grace_s: float = 2.0) -> int:
    """Let the bot finish on its own for grace_s, then end its whole process group. Whatever
    is left of the group afterwards (children that outlived the bot) is killed too."""
    stopped = False
    try:
        await asyncio.wait_for(process.wait(), grace_s)
    except TimeoutError:
        stopped = await _end_group(process, grace_s)
    returncode = await process.wait()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    _note_exit(process, returncode, stopped)
    return returncode


async def _end_group(process: asyncio.subprocess.Process, grace_s: float) -> bool:
    """SIGTERM, then SIGKILL, to the bot's process group; whether a signal was sent."""
    sent = False
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        sent = True
        try:
            await asyncio.wait_for(process.wait(), grace_s)
            break
        except TimeoutError:
            continue
    return sent


def _note_exit(process: asyncio.subprocess.Process, returncode: int, stopped: bool) -> None:
    """Say in the bot's log how its process ended: a limit that killed it shows there."""
    started = _started.pop(process, None)
    if started is None:
        return
    log_path, sandbox = started
    try:
        with log_path.open("a", encoding="utf-8") as log:
            log.write(f"[arena] the bot's process {describe_exit(returncode, sandbox, stopped)}\n")
    except OSError:
        pass  # the log folder is gone: nothing left to tell


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> list[str]:
    """The last non-blank lines of a bot's log; none when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-lines:]


def describe_log(path: Path | None) -> str:
    """Where a bot's log is and how it ends, for the referee's own console (it names a path of
    this machine: never for the seats)."""
    if path is None:
        return "it had no log"
    tail = log_tail(path)
    if not tail:
        return f"its log {path} is empty"
    return f"the end of its log {path}:\n" + "\n".join(f"  | {line}" for line in tail)
