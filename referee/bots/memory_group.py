"""A memory control group per bot process: memory_mb for the bot and every child it forks.

RLIMIT_AS bounds each process alone: a bot with three children may use four times its memory.
A control group bounds the whole tree. The referee (as root) makes one per bot process under
its own group, the wrapper (referee/bots/sandbox_exec.py) moves itself into it before it drops
root and execs the bot, so every child the bot ever forks is in it too, and the referee removes
it when the bot's processes are gone.

cgroup v2 (a `cgroup2` mount at /sys/fs/cgroup with the memory controller) gets memory.max and
memory.oom.group: over the limit the kernel kills the whole group. cgroup v1 (the memory
controller at /sys/fs/cgroup/memory) has no group kill: the kernel kills one process, and a
thread here, woken by the group's OOM notification, kills the rest. Where neither can be
written (an ordinary user, a read-only /sys), there is no group, and each process has only its
RLIMIT_AS.

A group's name carries its referee's pid and start time (owner_tag): a referee killed with
SIGKILL removes nothing, and what its bots forked may still run in its groups. The next referee
to make a group under the same parent kills the tasks of every group whose referee is gone,
and removes it (remove_stale).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
V1_MEMORY = CGROUP_ROOT / "memory"
GROUP_PREFIX = "arena-bot-"
REMOVE_TRIES = 50  # a killed process leaves its group a moment after it is reaped
LATER_TRIES = 120  # then every half second for a minute, in a thread of its own
STALE_S = 600.0  # an empty bot group this old was left by a referee that was killed
# GROUP_PREFIX, then the pid and start time (clock ticks since boot) of the referee that made it.
_OWNED = re.compile(rf"{GROUP_PREFIX}(?P<pid>\d+)\.(?P<started>\d+)-.+")


@dataclass
class MemoryGroup:
    """One bot process's control group: the folder the wrapper joins."""

    path: Path
    version: int
    stopping: threading.Event = field(default_factory=threading.Event)
    watcher: threading.Thread | None = None
    fds: tuple[int, ...] = ()  # cgroup v1: the OOM notification's eventfd, then what it watches
    ooms_seen: int = 0  # cgroup v1: the OOMs its watcher ended the group for

    def pids(self) -> list[int]:
        try:
            text = (self.path / "cgroup.procs").read_text(encoding="ascii")
        except OSError:
            return []
        return [int(line) for line in text.split()]

    def oom_kills(self) -> int:
        """How many times the group passed its limit and processes were killed for it: by the
        kernel, or (cgroup v1) by the watcher, whose kill may come first, and then the
        kernel's own count stays 0."""
        if self.version == 2:
            return max(_counter(self.path / "memory.events", n) for n in ("oom", "oom_kill"))
        return max(_counter(self.path / "memory.oom_control", "oom_kill"), self.ooms_seen)

    def kill_all(self) -> None:
        """SIGKILL every process in the group, until none is left (one may be forking)."""
        for _ in range(REMOVE_TRIES):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        """Kill what is left in it and remove it; its OOM watcher ends with it. A process that
        takes long to die (a loaded machine) leaves it to a thread that tries again."""
        self.stopping.set()
        self.kill_all()
        if not self._try_rmdir(REMOVE_TRIES, 0.02):
            later = threading.Thread(target=self._try_rmdir, args=(LATER_TRIES, 0.5), daemon=True)
            later.start()
        if self.watcher is not None:
            os.eventfd_write(self.fds[0], 1)  # wakes it if the removal did not
            self.watcher.join(5)
        for fd in self.fds:
            os.close(fd)
        self.fds = ()

    def _try_rmdir(self, tries: int, pause_s: float) -> bool:
        for _ in range(tries):
            try:
                self.path.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError:  # EBUSY: a process not yet dead, or not yet reaped
                self.kill_all()
                time.sleep(pause_s)
        return False


def remove_stale(parent: Path) -> None:
    """Remove the bot groups under parent that a killed referee left: those whose referee is
    gone, their tasks killed first (what its bots forked, which outlived them); and those
    without an owner in their name left empty long ago (a live bot is in its group within ms
    of its making)."""
    try:
        groups = list(parent.glob(f"{GROUP_PREFIX}*"))
    except OSError:
        return
    for group in groups:
        try:
            if orphaned(group.name):
                MemoryGroup(group, 0).remove()  # kills what is left in it first
                continue
            if time.time() - group.stat().st_mtime < STALE_S:
                continue
            if not (group / "cgroup.procs").read_text(encoding="ascii").strip():
                group.rmdir()
        except OSError:
            continue  # in use again, or removed meanwhile


def owner_tag() -> str:
    """This referee's pid and start time, which the name of each group it makes carries: a
    pid alone may be a new process's by the time another referee looks."""
    pid = os.getpid()
    return f"{pid}.{_start_time(pid)}"


def orphaned(name: str) -> bool:
    """Whether a group of this name was made by a referee that no longer runs."""
    found = _OWNED.fullmatch(name)
    if found is None:
        return False
    return _start_time(int(found["pid"])) != int(found["started"])


def _start_time(pid: int) -> int | None:
    """When the process started, in clock ticks since boot (/proc/PID/stat's 22nd field);
    None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # the command's name may hold spaces and ')'
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


def own_group(controller: str) -> str | None:
    """This process's group in the hierarchy of controller ('' for cgroup v2)."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(",") or controllers == controller:
            return path
    return None


def memory_hierarchy() -> tuple[Path, int] | None:
    """Where this process's memory groups go, and the cgroup version; None without one."""
    controllers = CGROUP_ROOT / "cgroup.controllers"
    if controllers.exists():
        if "memory" not in controllers.read_text(encoding="ascii").split():
            return None
        path = own_group("")
        return (CGROUP_ROOT / path.lstrip("/"), 2) if path is not None else None
    if (V1_MEMORY / "memory.limit_in_bytes").exists():
        path = own_group("memory")
        return (V1_MEMORY / path.lstrip("/"), 1) if path is not None else None
    return None


def make_memory_group(memory_mb: int) -> MemoryGroup | None:
    """A fresh group limited to memory_mb, for one bot process; None where no group can be
    made here (the bot then has its per-process RLIMIT_AS only)."""
    found = memory_hierarchy()
    if found is None or os.geteuid() != 0:
        return None
    parent, version = found
    remove_stale(parent)
    path = parent / f"{GROUP_PREFIX}{owner_tag()}-{secrets.token_hex(6)}"
    limit = str(memory_mb * 1024 * 1024)
    try:
        if version == 2:
            # Children's groups get the memory controller only if the parent hands it down.
            (parent / "cgroup.subtree_control").write_text("+memory", encoding="ascii")
        path.mkdir(mode=0o755)
    except OSError:
        return None
    group = MemoryGroup(path, version)
    try:
        if version == 2:
            _write(path / "memory.max", limit)
            _write(path / "memory.swap.max", "0", optional=True)
            _write(path / "memory.oom.group", "1")
        else:
            _write(path / "memory.limit_in_bytes", limit)
            _write(path / "memory.memsw.limit_in_bytes", limit, optional=True)
            _watch_oom(group)
    except OSError:
        group.remove()
        return None
    return group


def _write(path: Path, value: str, optional: bool = False) -> None:
    try:
        path.write_text(value, encoding="ascii")
    except OSError:
        if not optional:
            raise


def _watch_oom(group: MemoryGroup) -> None:
    """cgroup v1: on the group's first OOM kill, kill every other process in it, so that the
    bot ends whole rather than playing on without the child the kernel chose."""
    notify = os.eventfd(0, os.EFD_CLOEXEC)
    control = os.open(group.path / "memory.oom_control", os.O_RDONLY | os.O_CLOEXEC)
    group.fds = (notify, control)
    _write(group.path / "cgroup.event_control", f"{notify} {control}")

    def watch() -> None:
        while not group.stopping.is_set():
            os.eventfd_read(notify)  # an OOM in the group, its removal, or remove()
            if group.stopping.is_set() or not group.path.exists():
                return
            group.ooms_seen += 1  # before the kill: whoever sees the bot die sees it counted
            group.kill_all()

    group.watcher = threading.Thread(target=watch, name=f"oom-{group.path.name}", daemon=True)
    group.watcher.start()


def _counter(path: Path, name: str) -> int:
    """The value of a 'name N' line of a control group's file; 0 when it cannot be read."""
    try:
        lines = path.read_text(encoding="ascii").splitlines()
    except OSError:
        return 0
    for line in lines:
        key, _, value = line.partition(" ")
        if key == name and value.strip().isdigit():
            return int(value)
    return 0
