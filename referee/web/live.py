"""Live updates: one watcher per server tells every open page when the tournament (or the
ladder) moved.

The watcher wakes every `interval_s` while at least one page listens (and not at all when none
does) and asks SQLite's `PRAGMA data_version` on one read-only connection whether any other
connection has committed since it last asked: a read of the WAL index, no query of the tables.
Only then, or when the runner's lock changes hands (a runner killed with kill -9 commits
nothing), does it read the counts (Progress) and hand them to the pages whose view they change.
The pages then fetch what they show. However many pages listen, the database is asked once per
interval, and at most `max_clients` pages listen at once, `max_per_client` of them from one
address (so one client cannot take every stream from the others): one more is refused (Full).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel

from referee.web.folder import FolderError
from tournaments.lock import holder

INTERVAL_S = 0.5
MAX_PER_CLIENT = 4  # live streams from one address
P = TypeVar("P", bound=BaseModel)
P_co = TypeVar("P_co", bound=BaseModel, covariant=True)


class Watched(Protocol[P_co]):
    """A folder the feed follows: a tournament's or a ladder's."""

    @property
    def path(self) -> Path: ...  # the folder, where the runner's lock is

    @property
    def database(self) -> Path: ...

    def progress(self) -> P_co:
        """What the pages show, in counts: FolderError when the folder cannot be read."""
        ...


class Full(Exception):
    """As many pages as the server allows are listening already."""


class Feed(Generic[P]):
    def __init__(
        self,
        folder: Watched[P],
        max_clients: int,
        interval_s: float = INTERVAL_S,
        what: str = "this tournament",
        max_per_client: int | None = MAX_PER_CLIENT,
    ) -> None:
        self.folder = folder
        self.what = what
        self.max_clients = max_clients
        self.max_per_client = max_per_client
        self.interval_s = interval_s
        self._listeners: set[asyncio.Queue[P]] = set()
        self._per_client: Counter[str] = Counter()
        self._task: asyncio.Task[None] | None = None
        self._last: P | None = None

    @property
    def listening(self) -> int:
        return len(self._listeners)

    def room(self, client: str) -> None:
        """Full when the server has max_clients listeners already, or the client its
        max_per_client."""
        if self.max_per_client is not None and self._per_client[client] >= self.max_per_client:
            raise Full(
                f"{client} follows {self.what} live on {self.max_per_client} pages already, the "
                "most this server allows one address"
            )
        if len(self._listeners) >= self.max_clients:
            raise Full(
                f"{self.max_clients} pages are following {self.what} live already, the most "
                "this server allows (arena web --max-live)"
            )

    @contextlib.asynccontextmanager
    async def listen(self, client: str) -> AsyncIterator[asyncio.Queue[P]]:
        """A queue that receives the Progress now, then each time it changes; Full when the
        server or the client has all the listeners it may."""
        self.room(client)
        queue: asyncio.Queue[P] = asyncio.Queue(maxsize=1)
        self._listeners.add(queue)
        self._per_client[client] += 1
        if self._last is not None:
            queue.put_nowait(self._last)
        if self._task is None:
            self._task = asyncio.create_task(self._watch())
        try:
            yield queue
        finally:
            self._listeners.discard(queue)
            self._per_client[client] -= 1
            if not self._per_client[client]:
                del self._per_client[client]
            if not self._listeners and self._task is not None:
                self._task.cancel()
                self._task = None
                self._last = None

    async def _watch(self) -> None:
        probe: _Probe[P] = _Probe(self.folder)
        try:
            while True:
                progress = await asyncio.to_thread(probe.changed)
                if progress is not None and progress != self._last:
                    self._last = progress
                    for queue in self._listeners:
                        _replace(queue, progress)
                await asyncio.sleep(self.interval_s)
        finally:
            probe.close()


def _replace(queue: asyncio.Queue[P], progress: P) -> None:
    """Only the latest counts matter: a page that has not taken the last ones gets these."""
    with contextlib.suppress(asyncio.QueueEmpty):
        queue.get_nowait()
    queue.put_nowait(progress)


class _Probe(Generic[P]):
    """Asks the database whether it changed, from a worker thread. The lock keeps close() (from
    a watcher being cancelled) from pulling the connection out from under a call."""

    def __init__(self, folder: Watched[P]) -> None:
        self.folder = folder
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
                uri = self.folder.database.as_uri() + "?mode=ro"
                self.db = sqlite3.connect(uri, uri=True, check_same_thread=False)
            version = int(self.db.execute("PRAGMA data_version").fetchone()[0])
            alive = holder(self.folder.path).alive
            if version == self.version and alive == self.alive:
                return None
            progress = self.folder.progress()
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
