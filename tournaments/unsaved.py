"""Results the disk refused, for a tournament's runner and a live ladder alike.

A full disk fails a commit (`database or disk is full`, or an OSError writing): the result is
kept in memory, behind any other kept before it, and committed again later, oldest first, so
that results (and a ladder's ratings) are recorded in the order they came. A commit that
reported failing but reached the disk after all is the owner's to recognise (its commit
function returns quietly then): a result counts once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import structlog

from tournaments.match_jobs import Played

log = structlog.get_logger("tournaments.unsaved")

# What a full disk raises out of a commit, or a write of a log or schedule.
STORE_FAULTS = (sqlite3.OperationalError, OSError)


class Unsaved:
    """The results waiting for the disk; `commit` writes one (raising one of STORE_FAULTS when
    the disk refuses it), `recorded` is told of each once it is written."""

    def __init__(
        self, commit: Callable[[Played], None], recorded: Callable[[Played], None]
    ) -> None:
        self.commit = commit
        self.recorded = recorded
        self.waiting: list[Played] = []  # in the order they came

    def __bool__(self) -> bool:
        return bool(self.waiting)

    def take(self, played: Played) -> None:
        """Write a result now, or keep it behind those still waiting."""
        if self.waiting or not self.save(played):
            self.waiting.append(played)
            match_id = played.record.match_id
            log.warning("result_kept_in_memory", match_id=match_id, unsaved=len(self.waiting))
            return
        self.recorded(played)

    def retry(self) -> int:
        """Write what waits, oldest first, until the disk refuses one; how many were written."""
        saved = 0
        while self.waiting and self.save(self.waiting[0]):
            self.recorded(self.waiting.pop(0))
            saved += 1
        return saved

    def save(self, played: Played) -> bool:
        """Commit a result; False when it could not reach the disk."""
        try:
            self.commit(played)
        except STORE_FAULTS as exc:
            if not self.waiting:
                log.warning("result_not_saved", match_id=played.record.match_id, error=str(exc))
            return False
        return True
