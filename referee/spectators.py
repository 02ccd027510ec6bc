"""Fan-out of public match information to Watch streams. A slow spectator is dropped, never
waited for: a match must not slow down because someone is watching."""

from __future__ import annotations

import asyncio
import contextlib

from arena.v1 import referee_pb2 as pb

QUEUE_LIMIT = 10_000


class SpectatorHub:
    def __init__(self) -> None:
        self._watchers: dict[asyncio.Queue[pb.WatchResponse | None], str] = {}

    def subscribe(self, match_id: str) -> asyncio.Queue[pb.WatchResponse | None]:
        queue: asyncio.Queue[pb.WatchResponse | None] = asyncio.Queue(QUEUE_LIMIT)
        self._watchers[queue] = match_id
        return queue

    def unsubscribe(self, queue: asyncio.Queue[pb.WatchResponse | None]) -> None:
        self._watchers.pop(queue, None)

    def watching(self, match_id: str) -> bool:
        return any(not wanted or wanted == match_id for wanted in self._watchers.values())

    def publish(self, match_id: str, message: pb.WatchResponse) -> None:
        for queue, wanted in list(self._watchers.items()):
            if wanted and wanted != match_id:
                continue
            try:
                queue.put_nowait(message)
            except asyncio.QueueFull:
                self.unsubscribe(queue)

    def close(self) -> None:
        for queue in list(self._watchers):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)
        self._watchers.clear()
