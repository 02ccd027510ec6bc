"""Live updates: one watcher per server tells every open page when the tournament (or the
ladder) moved.

The watcher wakes every `interval_s` while at least one page listens (and not at all when none
does) and asks the read model whether its database changed (read_models/changes.py: cheap, no
query of the tables); only after a change does it get the counts (the Progress) and hand them to
the pages whose view they change. The pages then fetch what they show. However many pages
listen, the database is asked once per interval, and at most `max_clients` pages listen at
once, `max_per_client` of them from one address (so one client cannot take every stream from
the others): one more is refused (Full).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel

from tournaments.read_models.changes import Changes

INTERVAL_S = 0.5
MAX_PER_CLIENT = 4  # live streams from one address
P = TypeVar("P", bound=BaseModel)


class Watched(Protocol[P]):
    """A read model the feed follows: a tournament's or a ladder's."""

    def changes(self) -> Changes[P]:
        """A new watch on its database, closed when the feed stops."""
        ...


class Full(Exception):
    """As many pages as the server allows are listening already."""


class Feed(Generic[P]):
    def __init__(
        self,
        watched: Watched[P],
        max_clients: int,
        interval_s: float = INTERVAL_S,
        what: str = "this tournament",
        max_per_client: int | None = MAX_PER_CLIENT,
    ) -> None:
        self.watched = watched
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
        changes = self.watched.changes()
        try:
            while True:
                progress = await asyncio.to_thread(changes.changed)
                if progress is not None and progress != self._last:
                    self._last = progress
                    for queue in self._listeners:
                        _replace(queue, progress)
                await asyncio.sleep(self.interval_s)
        finally:
            changes.close()


def _replace(queue: asyncio.Queue[P], progress: P) -> None:
    """Only the latest counts matter: a page that has not taken the last ones gets these."""
    with contextlib.suppress(asyncio.QueueEmpty):
        queue.get_nowait()
    queue.put_nowait(progress)
