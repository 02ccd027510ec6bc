"""Bot SPECs and the bot processes they start.

A SPEC is a path to a Python file with a Bot class (`bots/mine.py`, or `bots/mine.py:Class`),
`example:NAME` for one of the example bots, or `cmd:COMMAND` for a bot in any language that
reads ARENA_ADDRESS and ARENA_TOKEN from its environment; `cmd@FOLDER:COMMAND` runs COMMAND in
FOLDER (absolute; shell-quoted when it holds a ':', a quote or a backslash: folder_in_spec),
which every sandbox shows it, read-only: what an uploaded bot's manifest command becomes. A
Python file bot runs in its own folder (its working directory, and first on its sys.path), on
arena's Python, or on its own with `FILE.py@PYTHON` (referee/bots/interpreters.py). Every bot
is its own process, in its own process group, so that it and any children it forks can be
stopped together, and runs in the sandbox it is given (referee/bots/sandbox.py), dying with the
referee that started it. Its output comes to the referee through a pipe, capped and kept per
match (referee/bots/output.py). When it ends, its log says how.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import os
import re
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from weakref import WeakKeyDictionary

from referee.bots.cpu_group import CpuClockError, CpuGroup, give_equal_share, make_cpu_group
from referee.bots.interpreters import BOOTSTRAP, InterpreterError, interpreter, locate
from referee.bots.output import BotOutput, OutputBudget
from referee.bots.sandbox import (
    Launch,
    Sandbox,
    SandboxError,
    Tier,
    confine,
    describe_exit,
    join_argv,
    release,
)
from referee.printable import visible

# Each started bot's output, and its sandbox: stop_bot notes in its log how the process ended.
_started: WeakKeyDictionary[asyncio.subprocess.Process, tuple[BotOutput, Sandbox | None]] = (
    WeakKeyDictionary()
)
SETTLE_S = 1.0  # how long a stopped bot's last output may take to come out of its pipe
# What each confined bot may leave behind (its uid's processes, files, memory group): stop_bot
# releases it.
_launches: WeakKeyDictionary[asyncio.subprocess.Process, Launch] = WeakKeyDictionary()
# Each bot's CPU accounting group, under the CPU clock: stop_bot removes it.
_cpu_groups: WeakKeyDictionary[asyncio.subprocess.Process, CpuGroup] = WeakKeyDictionary()


LOG_TAIL_LINES = 8


class SpecError(ValueError):
    """A bot SPEC that names nothing runnable."""


@dataclass(frozen=True)
class BotSpec:
    spec: str
    name: str
    argv: tuple[str, ...]
    workdir: Path | None = None  # a Python file bot's (or cmd@'s) own folder; None: the referee's


# The SPECs of a command, in the referee's folder or in one of its own: not Python file bots.
COMMAND_PREFIXES = ("cmd:", "cmd@")
# FILE.py, FILE.py:Class, either with @PYTHON: the bot's own interpreter.
_SPEC_TAIL = r"(?::(?P<cls>[A-Za-z_]\w*))?(?:@(?P<python>.+))?"
_PYTHON_FILE = re.compile(r"(?P<file>.+?\.py)" + _SPEC_TAIL)
_PYTHON_FILE_LONGEST = re.compile(r"(?P<file>.+\.py)" + _SPEC_TAIL)


def parse_spec(spec: str) -> BotSpec:
    if spec.startswith("cmd:"):
        argv = _command(spec, spec[4:])
        return BotSpec(spec, Path(argv[0]).name, argv)
    if spec.startswith("cmd@"):
        folder, command = _folder_and_command(spec)
        if not Path(folder).is_absolute():
            raise SpecError(f"{spec!r}: cmd@FOLDER needs an absolute FOLDER, not {folder!r}")
        argv = _command(spec, command)
        return BotSpec(spec, Path(argv[0]).name, argv, workdir=Path(folder))
    if spec.startswith("example:"):
        name, at, _ = spec[8:].partition("@")
        if at:
            raise SpecError(f"{spec!r}: example bots run on arena's own Python (no @PYTHON)")
        found = examples()
        if name not in found:
            known = ", ".join(sorted(found)) or "none (is the arena installed? `make demo`)"
            raise SpecError(f"no example bot {name!r}; known: {known}")
        return BotSpec(spec, name, _launch(found[name]))
    return _python_file(spec)


@dataclass(frozen=True)
class PythonFileSpec:
    """The parts of FILE.py[:Class][@PYTHON]."""

    file: str
    class_name: str | None
    python: str | None

    def __str__(self) -> str:
        named = f":{self.class_name}" if self.class_name else ""
        return f"{self.file}{named}{f'@{self.python}' if self.python else ''}"


def python_file_spec(spec: str) -> PythonFileSpec | None:
    """The parts of a Python file bot's SPEC; None when spec is not of that form. A FILE whose
    folders hold `.py@` or `.py:` (a ladder kept in `/srv/a.py@b`) reads two ways: the longest
    FILE that is a file wins, else the shortest (`bot.py@/usr/bin/python3.11`)."""
    if spec.startswith((*COMMAND_PREFIXES, "example:")):
        return None
    found = _PYTHON_FILE.fullmatch(spec)
    if found is None:
        return None
    longest = _PYTHON_FILE_LONGEST.fullmatch(spec)
    if longest is not None and Path(longest["file"]).is_file():
        found = longest
    return PythonFileSpec(found["file"], found["cls"], found["python"])


_FOLDER_QUOTING = ":'\"\\"  # what a cmd@ FOLDER is quoted for


def folder_in_spec(folder: Path) -> str:
    """FOLDER as cmd@FOLDER:COMMAND writes it: as it is, or shell-quoted when it holds a ':'
    (which would end it), a quote or a backslash (which would be taken for quoting)."""
    text = str(folder)
    if not any(c in text for c in _FOLDER_QUOTING):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _folder_and_command(spec: str) -> tuple[str, str]:
    """cmd@FOLDER:COMMAND's FOLDER and COMMAND: FOLDER ends at the first ':' outside quotes,
    and is unquoted as a shell would when it holds quotes or backslashes."""
    rest = spec[4:]
    quote, escaped, end = "", False, -1
    for at, char in enumerate(rest):
        if escaped:
            escaped = False
        elif quote:
            quote = "" if char == quote else quote
            escaped = char == "\\" and quote == '"'
        elif char in "'\"":
            quote = char
        elif char == "\\":
            escaped = True
        elif char == ":":
            end = at
            break
    if end < 0:
        raise SpecError(f"{spec!r}: give cmd@FOLDER:COMMAND, e.g. cmd@/abs/bot:'./mybot'")
    folder = rest[:end]
    if any(c in folder for c in "'\"\\"):
        words = _command(spec, folder)
        if len(words) != 1:
            raise SpecError(f"{spec!r}: FOLDER must be one path, quoted as a whole")
        folder = words[0]
    return folder, rest[end + 1 :]


def _command(spec: str, command: str) -> tuple[str, ...]:
    """COMMAND split as a shell would (no shell runs it), or SpecError."""
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:  # an unclosed quote
        raise SpecError(f"{spec!r}: {exc}") from None
    if not argv:
        raise SpecError(f"{spec!r} needs a command, e.g. cmd:'./mybot --fast'")
    return argv


def _python_file(spec: str) -> BotSpec:
    found = python_file_spec(spec)
    if found is None or not Path(found.file).is_file():
        raise SpecError(
            f"{spec!r} is not a bot: give a Python file with a Bot class (FILE.py or "
            "FILE.py:Class, FILE.py@PYTHON for its own interpreter), example:NAME, "
            "cmd:COMMAND or cmd@FOLDER:COMMAND"
        )
    path = Path(found.file).resolve()
    target = str(path) + (f":{found.class_name}" if found.class_name else "")
    argv = _launch(target)
    if found.python is not None:
        try:
            python = interpreter(locate(found.python))
        except InterpreterError as exc:
            raise SpecError(f"{spec!r}: {exc}") from None
        argv = (python.path, str(BOOTSTRAP), target)
    return BotSpec(spec, bot_name(path, found.class_name), argv, workdir=path.parent)


NAME_SOURCE_LIMIT = 1 << 20  # a bot file larger than this is named after its stem unread


def bot_name(path: Path, class_name: str | None) -> str:
    """A Python file bot's name: that of the class the SPEC names; else of the one Bot class
    the file defines (a top-level class with a base called Bot), or of its only class; else
    the file's stem. A class's name is the `name = "..."` it sets, as the SDK's Hello says,
    else the class's own name. Read with ast, never run: the referee imports no bot's code.
    Every `bot.py` of a bot folder would otherwise be called "bot"."""
    try:
        with path.open("rb") as source:
            text = source.read(NAME_SOURCE_LIMIT + 1)
        if len(text) > NAME_SOURCE_LIMIT:
            return class_name or path.stem
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):  # the bot's own process will say what is wrong
        return class_name or path.stem
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    if class_name:
        named = [c for c in classes if c.name == class_name]
        return _given_name(named[0]) if len(named) == 1 else class_name
    bots = [c for c in classes if any(_called_bot(base) for base in c.bases)]
    for found in (bots, classes):
        if len(found) == 1:
            return _given_name(found[0])
    return path.stem


# A name a bot file gives itself goes into log file names and onto terminals: plain words only
# (no '/', no leading '.', no control or escape characters), else the class's own name.
_FILE_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _given_name(cls: ast.ClassDef) -> str:
    """The class's `name = "..."` when it is a plain file-safe word, else its own name."""
    for node in cls.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        named = any(isinstance(t, ast.Name) and t.id == "name" for t in targets)
        if named and isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value if _FILE_SAFE_NAME.fullmatch(value.value) else cls.name
    return cls.name


def _called_bot(base: ast.expr) -> bool:
    """`Bot` or `anything.Bot`."""
    if isinstance(base, ast.Attribute):
        return base.attr == "Bot"
    return isinstance(base, ast.Name) and base.id == "Bot"


EXAMPLE_BOTS = "arena.example_bots"  # the entry-point group pyproject.toml registers them in


@cache
def examples() -> dict[str, str]:
    """Each example bot's NAME and its "module:Class", as the installed arena registers them:
    the referee finds the example bots by name and imports none of them itself (the bot's own
    process does)."""
    return {point.name: point.value for point in entry_points(group=EXAMPLE_BOTS)}


def _launch(target: str) -> tuple[str, ...]:
    return (sys.executable, "-m", "arena_sdk.launch", target)


async def start_bot(
    bot: BotSpec,
    address: str,
    token: str,
    log_path: Path | None,
    sandbox: Sandbox | None = None,
    budget: OutputBudget | None = None,
    count_cpu: bool = False,
) -> asyncio.subprocess.Process:
    """Start the bot in its sandbox with the referee's address and its token in its
    environment; its output goes through a pipe to log_path, or to a match's file while it
    plays one (output_of), within the caps of budget (the bot's, shared by its processes), or
    nowhere without a log_path. A sandbox without network needs a unix: address
    (Sandbox.needs_unix_socket). count_cpu: the bot's tree runs in a CPU accounting group of
    its own (the CPU clock; cpu_group_of), or it is not started (SpecError)."""
    if bot.workdir is not None and not bot.workdir.is_dir():
        raise SpecError(f"cannot start {bot.spec}: its folder {bot.workdir} is not there")
    env = dict(os.environ, ARENA_ADDRESS=address, ARENA_TOKEN=token, PYTHONUNBUFFERED="1")
    # A bot the referee starts ends with it: it does not wait for a referee that went away.
    env["ARENA_RECONNECT_S"] = "0"
    try:
        launch = await _confine(sandbox, bot.argv, env, bot.workdir)
    except SandboxError as exc:
        raise SpecError(f"cannot start {bot.spec}: {exc}") from None
    cpu = None
    if count_cpu:
        try:
            cpu, launch = _count_cpu(sandbox, launch)
        except CpuClockError as exc:
            release(launch)
            raise SpecError(f"cannot start {bot.spec}: {exc}") from None
    read, write = BotOutput.pipe() if log_path is not None else (None, None)
    try:
        process = await asyncio.create_subprocess_exec(
            *launch.argv,
            env=launch.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write if write is not None else asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.STDOUT if write is not None else asyncio.subprocess.DEVNULL,
            start_new_session=True,
            cwd=launch.workdir,
        )
    except OSError as exc:
        if read is not None:
            os.close(read)
        release(launch)
        if cpu is not None and cpu.owned:
            cpu.remove()
        raise SpecError(f"cannot start {bot.spec}: {exc}") from None
    finally:
        if write is not None:
            os.close(write)  # the bot holds it now: the pipe ends when the bot's copies do
    _launches[process] = launch
    if cpu is not None:
        _cpu_groups[process] = cpu
    if read is not None and log_path is not None:
        output = BotOutput.start(read, log_path, budget or OutputBudget())
        _started[process] = (output, sandbox)
    return process


def _count_cpu(sandbox: Sandbox | None, launch: Launch) -> tuple[CpuGroup, Launch]:
    """The launch, run by a wrapper that first joins a fresh CPU group (as root, before
    anything of the bot runs), and the group. Under cgroup v2 a process is in one group only:
    a bot with a memory group is counted in that one (its cpu.stat), which release() removes."""
    if sandbox is not None and sandbox.tier is Tier.DOCKER:
        # The container's processes are the engine's children, not the client's we start.
        raise CpuClockError(
            'clock = "cpu" cannot count a docker container\'s CPU: use another tier'
        )
    if launch.memory is not None and launch.memory.version == 2:
        shared = CpuGroup(launch.memory.path, 2, owned=False)
        try:
            give_equal_share(shared)
        except OSError as exc:
            raise CpuClockError(f'clock = "cpu": cannot set a bot\'s CPU share: {exc}') from None
        return shared, launch
    cpu = make_cpu_group()
    return cpu, replace(launch, argv=join_argv(*cpu.paths()) + launch.argv)


def cpu_group_of(process: asyncio.subprocess.Process) -> CpuGroup | None:
    """The CPU accounting group of a bot start_bot started with count_cpu, until stop_bot."""
    return _cpu_groups.get(process)


def process_end(
    process: asyncio.subprocess.Process, sandbox: Sandbox | None
) -> Callable[[float], Awaitable[str | None]]:
    """How the process ended, in describe_exit's words, once it has (waiting up to the given
    seconds); None while it still runs. What a session says when its stream ends
    (BotSession.process_end)."""

    async def ended(wait_s: float) -> str | None:
        if process.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(process.wait()), wait_s)
        if process.returncode is None:
            return None
        return exit_words(process, sandbox)

    return ended


def exit_words(process: asyncio.subprocess.Process, sandbox: Sandbox | None) -> str:
    """describe_exit's words for a process that has ended, naming its memory limit when its
    group passed it: a SIGKILL alone does not say the limit killed it."""
    said = describe_exit(process.returncode or 0, sandbox)
    launch = _launches.get(process)
    if sandbox is not None and launch is not None and launch.memory is not None:
        with contextlib.suppress(OSError):  # read before stop_bot removes the group
            if launch.memory.oom_kills() > 0:
                said += f": its processes together passed its memory of {sandbox.memory_mb} MB"
    return said


def output_of(process: asyncio.subprocess.Process) -> BotOutput | None:
    """The output of a bot start_bot started with a log, until stop_bot."""
    started = _started.get(process)
    return started[0] if started is not None else None


async def output_settled(process: asyncio.subprocess.Process) -> None:
    """Once the process has ended: wait until its last output is in its log (SETTLE_S at
    most), to read its log's end."""
    output = output_of(process)
    if output is not None:
        await output.settled(SETTLE_S)


async def _confine(
    sandbox: Sandbox | None, argv: tuple[str, ...], env: dict[str, str], workdir: Path | None
) -> Launch:
    if sandbox is None:
        return confine(None, argv, env, workdir)
    if sandbox.tier is Tier.BUBBLEWRAP:
        # Created now so bwrap can cover them: one made later would be in plain sight.
        for folder in sandbox.hidden:
            folder.mkdir(parents=True, exist_ok=True)
    if sandbox.tier is Tier.DOCKER:  # asks the engine: not on the event loop
        return await asyncio.to_thread(confine, sandbox, argv, env, workdir)
    return confine(sandbox, argv, env, workdir)


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
    launch = _launches.pop(process, None)
    if launch is not None:  # what left the group: a setsid child, files in /tmp
        await asyncio.to_thread(release, launch)
    cpu = _cpu_groups.pop(process, None)
    if cpu is not None and cpu.owned:
        await asyncio.to_thread(cpu.remove)
    await output_settled(process)
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
    """Say in the bot's log how its process ended (a limit that killed it shows there), and
    stop reading its output."""
    started = _started.pop(process, None)
    if started is None:
        return
    output, sandbox = started
    output.close(f"the bot's process {describe_exit(returncode, sandbox, stopped)}")


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> list[str]:
    """The last non-blank lines of a bot's log; none when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-lines:]


def describe_log(path: Path | None) -> str:
    """Where a bot's log is and how it ends, for the referee's own console (it names a path of
    this machine: never for the seats), with the log's control characters made visible: the
    bot wrote them, and they would reach the organiser's terminal."""
    if path is None:
        return "it had no log"
    tail = log_tail(path)
    if not tail:
        return f"its log {path} is empty"
    return visible(f"the end of its log {path}:\n" + "\n".join(f"  | {line}" for line in tail))
