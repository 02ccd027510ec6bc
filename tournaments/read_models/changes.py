"""Whether a folder's database changed, asked cheaply and often: the live feed of the web pages
asks it every half second while a page listens.

It asks SQLite's `PRAGMA data_version` on one read-only connection whether any other connection
has committed since it last asked: a read of the WAL index, no query of the tables. Only then,
or when the runner's lock changes hands (a runner killed with kill -9 commits nothing), does it
read the progress (the counts a read model gives) and hand it back.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

from tournaments.lock import holder
from tournaments.read_models.errors import FolderError

P = TypeVar("P", bound=BaseModel)


class Changes(Generic[P]):
    """Asks the database whether it changed, from a worker thread. The lock keeps close() (from
    a watcher being cancelled) from pulling the connection out from under a call.

    folder: where the runner's lock is; database: the file to watch; progress: the counts the
    pages show, FolderError when the folder cannot be read."""

    def __init__(self, folder: Path, database: Path, progress: Callable[[], P]) -> None:
        self.folder = folder
        self.database = database
        self.progress = progress
        self.db: sqlite3.Connection | None = None
        self.version: int | None = None
        self.alive: bool | None = None
        self.lock = threading.Lock()

    def changed(self) -> P | None:
        """The progress after a change (or at the first call), else None."""
        with self.lock:
            return self._changed()

    def _changed(self) -> P | None:
        try:
            if self.db is None:
                uri = self.database.as_uri() + "?mode=ro"
                self.db = sqlite3.connect(uri, uri=True, check_same_thread=False)
            version = int(self.db.execute("PRAGMA data_version").fetchone()[0])
            alive = holder(self.folder).alive
            if version == self.version and alive == self.alive:
                return None
            progress = self.progress()
        except (sqlite3.Error, FolderError):
            self._close()  # a database replaced or broken: connect again next time
            return None
        self.version, self.alive = version, alive
        return progress

    def close(self) -> None:
        with self.lock:
            self._close()

    def _close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
        self.version = None
