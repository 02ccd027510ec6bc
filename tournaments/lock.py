"""The one live runner of a tournament folder. A runner holds an flock on `runner.lock` in the
folder for its whole life, and writes its pid and host into it. The kernel drops the lock when
the process ends, however it ends (kill -9 included), so a held lock means a live runner and a
free one means none, whatever the state in the database says; a pid that the system has since
given to another process cannot fake it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

LOCK_FILE = "runner.lock"
# A reader (`standings`) holds the lock shared for an instant: a starting runner tries again.
_TRIES = 40
_PAUSE_S = 0.025


class LockError(Exception):
    """Another runner, alive, holds the folder."""


@dataclass(frozen=True)
class Holder:
    """Who holds (or last held) the folder, and whether it still does."""

    who: str | None  # "pid N on HOST", as the runner wrote it
    alive: bool


class RunnerLock:
    """Held from acquire() until release() or the end of the process."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def acquire(cls, folder: Path) -> RunnerLock:
        """The folder's lock, or LockError naming the live runner that holds it."""
        fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        for _ in range(_TRIES):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                time.sleep(_PAUSE_S)
        else:
            who = _read(fd)
            os.close(fd)
            raise LockError(
                f"{folder} is being run by {who or 'another runner'}: one runner at a time; "
                "wait for it to end, or stop it first"
            )
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        return cls(fd)

    def release(self) -> None:
        # The file stays: removing it would race a runner that is opening it.
        with contextlib.suppress(OSError):
            os.close(self.fd)


def holder(folder: Path) -> Holder:
    """Whether a live runner holds the folder, and who it is (or was)."""
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return Holder(None, alive=False)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return Holder(_read(fd), alive=True)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return Holder(_read(fd), alive=False)
    finally:
        os.close(fd)


def _read(fd: int) -> str | None:
    text = os.pread(fd, 200, 0).decode(errors="replace").strip()
    return text or None


def describe_state(saved: str | None, runner: Holder, folder: Path) -> str:
    """The saved state, checked against the runner lock: a runner killed with kill -9 left
    "running" in the database, and only the lock tells that it is gone."""
    if runner.alive:
        return f"running ({runner.who})"
    if saved == "running":
        who = f"the runner ({runner.who})" if runner.who else "its runner"
        return f"stopped: {who} is gone; `arena tournament resume {folder}` continues it"
    return saved or "unknown"
