"""Building a submitted bot version: its build command, run once in bubblewrap, into a fresh
working copy of the stored version, with limits on time, CPU, memory, processes and disk, its
output kept (capped) in a log, and how it ended said in plain words.

Uploaded code never runs below bubblewrap, whatever tier the ladder's bots use: the build has no
network, sees the machine's programs and libraries read-only (so `cc` and `make` work), its own
folder read-write, a private /tmp, and nothing else (not the stored version, not the ladder's
folder, not $HOME). Under a root referee it runs as a uid of its own, in a memory control group
(its whole tree within memory_mb), a pids group (a fork bomb is stopped and named), on a tmpfs
of its own for a disk (referee/bots/build_disk.py); when it ends, every process of its uid is
killed (referee/bots/uid_sweep.py). The pieces are the bot sandbox's (referee/bots/sandbox.py).

    result = await build(stored_version, ["make"], BuildLimits(), Path("builds/abc123"))
    result.ok, result.reason, result.folder, result.log
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from referee.bots.build_disk import BuildDisk, DiskError, clear, drop, keep, make_disk
from referee.bots.launcher import log_tail
from referee.bots.memory_group import MemoryGroup, make_memory_group
from referee.bots.output import BotOutput, OutputBudget, OutputCaps
from referee.bots.pids_group import PidsGroup, make_pids_group
from referee.bots.sandbox import (
    EXEC_WRAPPER,
    Drop,
    Sandbox,
    SandboxError,
    Tier,
    View,
    bubblewrap_argv,
    check_readable,
    confined_env,
    describe_exit,
    fresh_id,
    join_argv,
    limits_argv,
    python_runtime,
    referee_is_root,
    show,
    system_view,
)
from referee.bots.uid_sweep import processes_of, sweep
from referee.printable import visible

LOG_NAME = "build.log"
TAIL_LINES = 12
TAIL_LINE_CHARS = 300  # of each of those lines: one line may be all of the log
POLL_S = 0.1  # how often the guards are read while the build runs
NPROC_SLACK = 8  # RLIMIT_NPROC above the pids group's limit: the group, which counts, trips first
# What a build sees of /etc besides the loader's cache: the Debian alternatives (cc is
# /usr/bin/cc -> /etc/alternatives/cc -> /usr/bin/gcc). Links only, nothing secret.
BUILD_SYSTEM_FILES = (Path("/etc/alternatives"),)


class BuildLimits(BaseModel):
    """What one build may take; the ladder's TOML gives them, with these defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_seconds: float = Field(default=300, gt=0, description="the build's time, on the clock")
    cpu_seconds: int = Field(default=300, ge=1, description="CPU time of each of its processes")
    memory_mb: int = Field(default=2048, ge=64, description="memory of its whole process tree")
    processes: int = Field(default=128, ge=4, description="processes and threads at once")
    disk_mb: int = Field(default=256, ge=1, description="what its folder may hold")
    files: int = Field(default=20_000, ge=64, description="files and folders its folder may hold")
    tmp_mb: int = Field(default=64, ge=1, description="its private /tmp and /dev/shm")
    open_files: int = Field(default=256, ge=16, description="open file descriptors per process")
    log_kib: int = Field(default=256, ge=1, description="of its output kept in its log")

    def sandbox(self, base: Sandbox, pids_group: bool) -> Sandbox:
        """The bot sandbox's settings for a build: bubblewrap, these limits, base's uids."""
        processes = self.processes + (NPROC_SLACK if pids_group else 0)
        return base.model_copy(
            update={
                "tier": Tier.BUBBLEWRAP,
                "cpu_seconds": self.cpu_seconds,
                "memory_mb": self.memory_mb,
                "processes": processes,
                "open_files": self.open_files,
                "tmp_mb": self.tmp_mb,
                "hidden": (),
            }
        )


class BuildEnd(StrEnum):
    """How a build ended."""

    OK = "ok"
    EXITED = "exited"  # with a code other than 0, or a signal of its own
    TIME = "time"
    CPU = "cpu"
    MEMORY = "memory"
    PROCESSES = "processes"
    DISK = "disk"
    KEPT_NOT = "not kept"  # it ended well, but left what cannot be kept (a link out)
    SANDBOX = "sandbox"  # it could not be started here


@dataclass(frozen=True)
class BuildResult:
    """How the build went: reason in plain words for its author; folder the built copy (only
    when ok); log its output, capped; output_tail the log's last lines, made printable."""

    end: BuildEnd
    reason: str
    seconds: float
    output_tail: tuple[str, ...]
    log: Path
    folder: Path | None = None

    @property
    def ok(self) -> bool:
        return self.end is BuildEnd.OK


@dataclass
class _Guards:
    """The build's process tree's bounds that say when they were passed."""

    uid: int | None = None
    memory: MemoryGroup | None = None
    pids: PidsGroup | None = None
    disk: BuildDisk | None = None

    def tripped(self) -> BuildEnd | None:
        if self.pids is not None and self.pids.refused_forks() > 0:
            return BuildEnd.PROCESSES
        if self.memory is not None and self.memory.oom_kills() > 0:
            return BuildEnd.MEMORY
        if self.disk is not None and self.disk.full():
            return BuildEnd.DISK
        return None

    def end_all(self) -> list[int]:
        """Kill what is left of the build: its groups, every process of its uid; the pids of
        any still there after."""
        for group in (self.memory, self.pids):
            if group is not None:
                group.remove()
        self.memory = self.pids = None
        if self.uid is None:
            return []
        sweep(self.uid, None)
        return processes_of(self.uid)


async def build(
    source: Path,
    argv: list[str],
    limits: BuildLimits,
    output: Path,
    sandbox: Sandbox | None = None,
) -> BuildResult:
    """Run argv in a fresh working copy of source (never written) at output/bot, in
    bubblewrap within limits; its output goes to output/build.log. output is emptied first (a
    build started again after a crash starts afresh). sandbox: the ladder's, for its uid range
    (the tier is bubblewrap whatever it says)."""
    log = output / LOG_NAME
    if not argv:
        return _failed(BuildEnd.SANDBOX, "the build command is empty", 0.0, log)
    if not source.is_dir():
        return _failed(BuildEnd.SANDBOX, f"there is no version to build at {source}", 0.0, log)
    await asyncio.to_thread(clear, output)
    output.mkdir(mode=0o700, parents=True, exist_ok=True)
    guards = _Guards()
    try:
        return await _build(source, argv, limits, output, sandbox or Sandbox(), guards)
    except BaseException:  # cancelled: nothing of the build stays, running or mounted
        await asyncio.to_thread(guards.end_all)
        if guards.disk is not None:
            drop(guards.disk)
        raise
    finally:
        await asyncio.to_thread(guards.end_all)


async def _build(
    source: Path, argv: list[str], limits: BuildLimits, output: Path, base: Sandbox, guards: _Guards
) -> BuildResult:
    log = output / LOG_NAME
    as_root = referee_is_root()
    try:
        guards.uid = fresh_id(base) if as_root else None
        guards.disk = await asyncio.to_thread(
            make_disk, source, output, limits.disk_mb, limits.files, guards.uid
        )
        command = _confined(argv, limits, base, guards)
    except (SandboxError, DiskError) as exc:
        if guards.disk is not None:
            drop(guards.disk)
        return _failed(BuildEnd.SANDBOX, f"the build could not be started: {exc}", 0.0, log)
    started = time.monotonic()
    try:
        end, returncode = await _run(command, guards, limits, log)
    except SandboxError as exc:
        drop(guards.disk)
        return _failed(BuildEnd.SANDBOX, f"the build could not be started: {exc}", 0.0, log)
    seconds = time.monotonic() - started
    left = await asyncio.to_thread(guards.end_all)
    if left:
        end = BuildEnd.SANDBOX  # never keep a folder something may still be writing
    return await _conclude(end, returncode, seconds, limits, guards, log, left)


def _confined(argv: list[str], limits: BuildLimits, base: Sandbox, guards: _Guards) -> list[str]:
    """The command line that runs argv in bubblewrap: as root, the wrapper outside joins the
    build's groups, bwrap does the mounts, the wrapper inside sets the limits and becomes the
    build's uid; otherwise bwrap in a user namespace of its own."""
    assert guards.disk is not None
    folder = guards.disk.folder
    if guards.uid is None:
        box = limits.sandbox(base, pids_group=False)
        view = _build_view(folder, wrapper_inside=False)
        outer = limits_argv(box, file_mb=limits.disk_mb)
        return [*outer, *bubblewrap_argv(view, box, drop=False), *argv]
    guards.memory = make_memory_group(limits.memory_mb)
    guards.pids = make_pids_group(limits.processes)
    box = limits.sandbox(base, pids_group=guards.pids is not None)
    view = _build_view(folder, wrapper_inside=True)
    check_readable(view, guards.uid, skip=folder)
    groups = [g.path for g in (guards.memory, guards.pids) if g is not None]
    outside = join_argv(*groups) if groups else ()
    drop_to = Drop(guards.uid, guards.uid)
    inside = limits_argv(box, drop_to, no_user_namespaces=True, file_mb=limits.disk_mb)
    return [*outside, *bubblewrap_argv(view, box, drop=True), *inside, *argv]


def _build_view(folder: Path, wrapper_inside: bool) -> View:
    """The system, read-only; the build's folder, read-write, where it starts; as root the
    wrapper and the Python it runs on. Never what the command line names: it is the author's."""
    view = system_view()
    for extra in BUILD_SYSTEM_FILES:
        if extra.exists():
            show(view, extra)
    if wrapper_inside:
        for needed in python_runtime():
            show(view, needed)
        show(view, EXEC_WRAPPER)
    view.writable.append(Path(os.path.abspath(folder)))
    view.workdir = Path(os.path.abspath(folder))
    return view


def _environment() -> dict[str, str]:
    """The build's: how to find programs, the locale, a HOME in its /tmp; none of the
    referee's secrets, nor what it tells its bots."""
    kept = {k: v for k, v in confined_env(dict(os.environ)).items() if not k.startswith("ARENA_")}
    return kept | {"HOME": "/tmp", "TMPDIR": "/tmp"}


async def _run(
    command: list[str], guards: _Guards, limits: BuildLimits, log: Path
) -> tuple[BuildEnd | None, int]:
    """Run the command, its output to log; stop it at once when a guard trips or its time is
    up. Which stopped it (None: it ended on its own), and its exit status."""
    caps = OutputCaps(limits.log_kib * 1024, limits.log_kib * 1024, "a build's log, log_kib")
    read, write = BotOutput.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            env=_environment(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        os.close(read)
        raise SandboxError(f"cannot run {command[0]}: {exc}") from None
    finally:
        os.close(write)
    output = BotOutput.start(read, log, OutputBudget(caps))
    try:
        stopped = await _watch(process, guards, limits.wall_seconds)
    except BaseException:  # the build itself cancelled (the ladder stopping): it ends too
        _kill(process)
        output.close()
        raise
    if stopped is not None:
        _kill(process)
    returncode = await process.wait()
    # Read before the groups go: a fork refused or an OOM kill the last poll missed.
    stopped = stopped or guards.tripped()
    await output.settled(1.0)
    output.close()
    return stopped, returncode


def _kill(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the build's outer process group; bwrap --die-with-parent takes its sandbox with
    it, and end_all the rest."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


async def _watch(
    process: asyncio.subprocess.Process, guards: _Guards, wall_seconds: float
) -> BuildEnd | None:
    deadline = time.monotonic() + wall_seconds
    ended = asyncio.ensure_future(process.wait())
    while True:
        done, _ = await asyncio.wait({ended}, timeout=POLL_S)
        if done:
            return None
        tripped = guards.tripped()
        if tripped is not None:
            return tripped
        if time.monotonic() >= deadline:
            return BuildEnd.TIME


async def _conclude(
    stopped: BuildEnd | None,
    returncode: int,
    seconds: float,
    limits: BuildLimits,
    guards: _Guards,
    log: Path,
    left: list[int],
) -> BuildResult:
    """The build's end, in words; the folder kept when it went well."""
    assert guards.disk is not None
    end = stopped or _by_status(returncode)
    if end is BuildEnd.EXITED and await asyncio.to_thread(guards.disk.file_cut):
        end = BuildEnd.DISK
    if end is BuildEnd.OK:
        try:
            await asyncio.to_thread(keep, guards.disk)
        except DiskError as exc:
            end = BuildEnd.DISK if "limit" in str(exc) else BuildEnd.KEPT_NOT
            return _failed(end, str(exc), seconds, log)
        built = f"built in {seconds:.1f} s"
        return BuildResult(end, built, seconds, _tail(log), log, guards.disk.folder)
    await asyncio.to_thread(drop, guards.disk)
    reason = _reason(end, returncode, limits, left)
    _note(log, reason)
    return _failed(end, reason, seconds, log)


def _by_status(returncode: int) -> BuildEnd:
    signum = returncode - 128 if 128 < returncode < 128 + signal.NSIG else -returncode
    if returncode == 0:
        return BuildEnd.OK
    if signum == signal.SIGXCPU:
        return BuildEnd.CPU
    if signum == signal.SIGXFSZ:
        return BuildEnd.DISK
    return BuildEnd.EXITED


def _reason(end: BuildEnd, returncode: int, limits: BuildLimits, left: list[int]) -> str:
    if left:
        return f"processes of the build outlived it ({len(left)}): it is not kept"
    if end is BuildEnd.EXITED:
        box = Sandbox(tier=Tier.BUBBLEWRAP)
        return f"the build failed: it {describe_exit(returncode, box)}"
    return {
        BuildEnd.TIME: f"the build was stopped at its time limit of {limits.wall_seconds:g} s",
        BuildEnd.CPU: f"the build used up its CPU-time limit of {limits.cpu_seconds} s",
        BuildEnd.MEMORY: f"the build ran out of memory: it passed its limit of "
        f"{limits.memory_mb} MB and was stopped",
        BuildEnd.PROCESSES: f"the build tried to run more than {limits.processes} processes "
        "at once (a fork bomb?) and was stopped",
        BuildEnd.DISK: f"the build filled its disk limit of {limits.disk_mb} MB "
        f"({limits.files} files) and was stopped",
    }.get(end, f"the build ended: {end.value}")


def _note(log: Path, reason: str) -> None:
    """The end, on the log's last line, as the referee's."""
    with contextlib.suppress(OSError), log.open("a", encoding="utf-8") as handle:
        handle.write(f"[arena] {reason}\n")


def _tail(log: Path) -> tuple[str, ...]:
    lines = [line for line in log_tail(log, TAIL_LINES + 2) if not line.startswith("[arena]")]
    return tuple(_shortened(visible(line)) for line in lines[-TAIL_LINES:])


def _shortened(line: str) -> str:
    if len(line) <= TAIL_LINE_CHARS:
        return line
    return f"{line[:TAIL_LINE_CHARS]}... ({len(line) - TAIL_LINE_CHARS} more characters)"


def _failed(end: BuildEnd, reason: str, seconds: float, log: Path) -> BuildResult:
    tail = _tail(log)
    if end is BuildEnd.EXITED and tail:
        reason += "; its output ends:\n" + "\n".join(f"  | {line}" for line in tail)
    return BuildResult(end, reason, seconds, tail, log)
