"""The free space of the filesystem a ladder or a tournament writes to, against its reserve.

Anything may fill that disk: a bot's log, a bot at tier none writing files, another program.
Under the reserve, `arena ladder serve` and `arena tournament run` start no match (each writes
a replay and logs) and keep what room is left for the results of the matches in flight.
os.statvfs is a system call that reads no file: cheap enough for every tick, and it answers on
a disk that is full.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MB = 1024 * 1024


@dataclass(frozen=True)
class DiskRoom:
    free_mb: float  # what a process that is not root may still write there
    reserve_mb: float  # under it, nothing new starts; 0: never wait

    @property
    def low(self) -> bool:
        return self.free_mb < self.reserve_mb

    def why_waiting(self) -> str | None:
        """One line for the page, the API and `ladder list`; None while there is room."""
        if not self.low:
            return None
        return (
            f"waiting for disk space: {self.free_mb:.1f} MB free on its folder's disk, under "
            f"its reserve of {self.reserve_mb:g} MB (run.disk_reserve_mb); no match starts "
            "until space returns"
        )


def disk_room(folder: Path, reserve_mb: float) -> DiskRoom:
    """The room on `folder`'s filesystem; a folder that cannot be asked counts as full."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return DiskRoom(0.0, reserve_mb)
    return DiskRoom(stats.f_bavail * stats.f_frsize / MB, reserve_mb)
