"""What a bot process writes (stdout and stderr), read by the referee through a pipe and kept
per match: a process plays many matches, and each match's output goes to that match's file
(`logs/MATCH_ID/SEAT-BOT.log`), the rest to the process's own (`logs/BOT-K.log`).

The referee's event loop reads the pipe as soon as there is something in it, a big chunk at a
time, so the bot never blocks on a full pipe; past a cap it goes on reading and drops what it
read. Two caps: one per file (a match's output of one seat, or a process's own output outside
its matches), and one per bot (every file of every process of the bot, or of a ladder's
version, for as long as the referee process that hosts it runs). The first cut in a file is
noted there once, with the cap; at the file's end, how many bytes were dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

MIB = 1024 * 1024
CHUNK = MIB  # one read takes what the pipe holds, up to this
PIPE_SIZE = MIB  # asked of the kernel: fewer wake-ups when a bot writes a lot
DRAIN_READS = 16  # at a switch of match, the reads of what is already in the pipe, at most


@dataclass(frozen=True)
class OutputCaps:
    """How much of a bot's output is kept (bytes)."""

    match_bytes: int = MIB  # each file: one seat's output in one match, or outside matches
    bot_bytes: int = 64 * MIB  # all of one bot's files, in one referee process
    setting: str | None = None  # the setting that sets a lone file's cap (a build's log)


@dataclass
class OutputBudget:
    """The bytes of a bot kept so far, shared by its processes."""

    caps: OutputCaps = field(default_factory=OutputCaps)
    kept: int = 0

    def left(self) -> int:
        return max(0, self.caps.bot_bytes - self.kept)


_UNSAFE = re.compile(r"[^\w.@+-]")  # in a file's name


def match_file(folder: Path, match_id: str, seat: int, bot: str) -> Path:
    """Where one seat's output of a match is kept."""
    return folder / match_id / f"{seat}-{_UNSAFE.sub('_', bot)}.log"


def _size(count: int) -> str:
    if count % MIB == 0:
        return f"{count // MIB} MiB"
    return f"{count // 1024} KiB" if count % 1024 == 0 else f"{count} bytes"


class _File:
    """One file of output: what went in, what was dropped."""

    def __init__(self, path: Path, budget: OutputBudget) -> None:
        self.path = path
        self.budget = budget
        self.kept = self.dropped = 0
        self.noted = False
        self.handle: BinaryIO | None = None
        self.line_open = False  # the last byte written was not a newline

    def room(self) -> int:
        return max(0, min(self.budget.caps.match_bytes - self.kept, self.budget.left()))

    def take(self, data: bytes) -> None:
        kept = data[: self.room()]
        if kept:
            self._write(kept)
            self.kept += len(kept)
            self.budget.kept += len(kept)
        self.drop(len(data) - len(kept))

    def drop(self, count: int) -> None:
        if count and not self.noted:
            self.noted = True
            self.note(self._why_cut())
        self.dropped += count

    def _why_cut(self) -> str:
        caps = self.budget.caps
        if caps.setting is not None:
            return f"output past {_size(caps.match_bytes)} here is dropped ({caps.setting})"
        if self.kept >= caps.match_bytes:
            return (
                f"output past {_size(caps.match_bytes)} here is dropped "
                "(the cap of a match, [bot_output] per_match_kib)"
            )
        return (
            f"the bot has written its {_size(caps.bot_bytes)}: its output is dropped from here "
            "(the cap of a bot, [bot_output] per_bot_mib)"
        )

    def note(self, text: str) -> None:
        """A line of the referee's own, on a line of its own."""
        self._write(("\n" if self.line_open else "") + f"[arena] {text}\n")

    def _write(self, data: bytes | str) -> None:
        raw = data.encode() if isinstance(data, str) else data
        try:
            if self.handle is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.handle = self.path.open("ab")
            self.handle.write(raw)
            self.handle.flush()
        except OSError:
            return  # a log that cannot be written costs the log, never the match
        self.line_open = not raw.endswith(b"\n")

    def pause(self) -> None:
        """Close the file for now; the next write opens it again."""
        if self.handle is not None:
            with contextlib.suppress(OSError):
                self.handle.close()
            self.handle = None

    def finish(self) -> None:
        if self.dropped:
            self.note(f"{self.dropped} bytes of output were dropped here")
        self.pause()


class BotOutput:
    """The pipe a bot process writes to and the file its output goes to now; made by
    `BotOutput.start` from the pipe's read end."""

    def __init__(self, fd: int, own: Path, budget: OutputBudget) -> None:
        self.fd = fd
        self.budget = budget
        self.own = _File(own, budget)
        self.current = self.own
        self.ended = asyncio.Event()  # the pipe's end: every writer closed it
        self.closed = False
        with contextlib.suppress(OSError):  # a folder gone costs the log, never the bot
            own.parent.mkdir(parents=True, exist_ok=True)
            own.touch()  # a process has its file from the start, whatever it writes

    @classmethod
    def pipe(cls) -> tuple[int, int]:
        """A pipe (read end, write end) for a bot's stdout and stderr."""
        read, write = os.pipe()
        with contextlib.suppress(OSError, AttributeError):
            fcntl.fcntl(read, fcntl.F_SETPIPE_SZ, PIPE_SIZE)  # Linux; a small pipe works too
        os.set_blocking(read, False)
        return read, write

    @classmethod
    def start(cls, fd: int, own: Path, budget: OutputBudget) -> BotOutput:
        output = cls(fd, own, budget)
        asyncio.get_running_loop().add_reader(fd, output._readable)
        return output

    def _readable(self) -> None:
        self._read()

    def _read(self) -> bool:
        """One read; whether there was anything."""
        if self.ended.is_set():
            return False
        try:
            data = os.read(self.fd, CHUNK)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            data = b""
        if not data:
            self._end_of_pipe()
            return False
        self.current.take(data)
        return True

    def _drain(self) -> None:
        """What is in the pipe now belongs to the file it was written for."""
        for _ in range(DRAIN_READS):
            if not self._read():
                return

    def _end_of_pipe(self) -> None:
        self.ended.set()
        with contextlib.suppress(ValueError, RuntimeError):  # the loop is closed
            asyncio.get_running_loop().remove_reader(self.fd)
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def playing(self, path: Path) -> None:
        """From now on the output goes to the match's file at path."""
        self._drain()
        self._switch(_File(path, self.budget))

    def between(self) -> None:
        """The match is over: from now on the output goes to the process's own file."""
        self._drain()
        self._switch(self.own)

    def _switch(self, to: _File) -> None:
        if self.closed:
            return
        if self.current is self.own:
            self.own.pause()
        else:
            self.current.finish()
        self.current = to

    async def settled(self, timeout_s: float) -> None:
        """Wait (timeout_s at most) for the pipe's end, so that all the process wrote is in
        its files: a child that outlived it may hold the pipe open."""
        if not self.ended.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.ended.wait(), timeout_s)

    def close(self, note: str | None = None) -> None:
        """Stop reading; note, and close the files."""
        if self.closed:
            return
        self.closed = True
        if not self.ended.is_set():
            self._drain()
            if not self.ended.is_set():
                self._end_of_pipe()
        if note is not None:
            self.current.note(note)
        self.current.finish()
        if self.current is not self.own:
            self.own.finish()
