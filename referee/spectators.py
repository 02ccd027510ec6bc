"""Spectators: who may open a Watch stream, and the fan-out of public match information to the
streams that were let in.

Public information is not harmless to a bot: in a duplicate series the other seating of a
bot's own deal may be played at the same time, and its public events show cards hidden from the
bot's seat. So Watch needs the server's spectator token, is never served on the Unix socket
(that is how sandboxed bots reach the referee), and a server serves a bounded number of streams.
A slow spectator is dropped, never waited for: a match must not slow down because someone is
watching."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn

from arena.v1 import referee_pb2 as pb

from referee.refusals import (
    FAILURE_WINDOW_S,
    LOG_INTERVAL_S,
    LOG_LINES,
    MAX_FAILURES,
    MAX_TRACKED,
    TCP_PEERS,
    Refusals,
    peer_address,
    peer_kind,
)

# Re-exported: the gate's limits are the server's refusal limits.
__all__ = [
    "FAILURE_WINDOW_S",
    "LOG_INTERVAL_S",
    "LOG_LINES",
    "MAX_FAILURES",
    "MAX_TRACKED",
    "Refused",
    "SpectatorGate",
    "SpectatorHub",
    "Watcher",
    "peer_address",
]

QUEUE_LIMIT = 10_000
MAX_SPECTATORS = 64


class Refused(Exception):
    """A Watch the referee refuses; code is the gRPC status name to answer with."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class SpectatorGate:
    """Lets in a Watch over TCP with the server's spectator token; refuses everything else
    with a status that names what was wrong. Refusals are counted and logged by the server's
    Refusals (shared with Hello); an address over its budget is refused without a look at its
    token until its window ends."""

    def __init__(
        self,
        token: str,
        tcp_served: bool = True,
        clock: Callable[[], float] = time.monotonic,
        refusals: Refusals | None = None,
    ) -> None:
        if not token:
            raise ValueError("the spectator token must not be empty")
        self._token = token.encode()
        self._tcp_served = tcp_served
        self.refusals = refusals or Refusals(clock)

    def admit(self, peer: str, token: str) -> None:
        """Return when peer may watch; raise Refused otherwise."""
        if peer_kind(peer) not in TCP_PEERS:
            self._refuse(peer, "PERMISSION_DENIED", self._not_over_tcp(peer))
        locked_s = self.refusals.over_budget_for(peer)
        if locked_s is not None:
            self._refuse(
                peer,
                "UNAUTHENTICATED",
                f"too many refused Watch calls from this address ({MAX_FAILURES} in "
                f"{FAILURE_WINDOW_S:.0f} s): try again in {locked_s:.0f} s",
            )
        if not token:
            self._refuse(
                peer,
                "UNAUTHENTICATED",
                "no spectator token: set WatchRequest.token to the token the referee's "
                "operator hands out (`arena serve` prints it)",
            )
        # compare_digest takes str only when ASCII: bytes, so any string is merely wrong.
        if not hmac.compare_digest(token.encode(), self._token):
            self._refuse(peer, "UNAUTHENTICATED", "wrong spectator token")

    def tracked_addresses(self) -> int:
        """How many addresses' refusals are remembered (at most MAX_TRACKED)."""
        return self.refusals.tracked_addresses()

    def _not_over_tcp(self, peer: str) -> str:
        where = "a Unix socket" if peer_kind(peer) == "unix" else f"this transport ({peer})"
        if self._tcp_served:
            return (
                f"Watch is not served over {where}: that is how sandboxed bots reach the "
                "referee. Spectators connect to the referee's TCP address"
            )
        return (
            f"Watch is not served over {where}: that is how sandboxed bots reach the referee, "
            "and this referee listens on no TCP address, so it serves no spectators"
        )

    def _refuse(self, peer: str, code: str, detail: str) -> NoReturn:
        self.refusals.refuse("watch_refused", peer, code, detail)
        raise Refused(code, detail)


@dataclass(eq=False)
class Watcher:
    """One open Watch stream: its queue (None ends it) and the match it wants ('' for all)."""

    match_id: str
    queue: asyncio.Queue[pb.WatchResponse | None] = field(
        default_factory=lambda: asyncio.Queue(QUEUE_LIMIT)
    )
    dropped: bool = False  # fell QUEUE_LIMIT messages behind: ended, gets nothing more


class SpectatorHub:
    def __init__(self, max_watchers: int = MAX_SPECTATORS) -> None:
        if max_watchers < 0:
            raise ValueError(f"max_spectators must be 0 or more, not {max_watchers}")
        self.max_watchers = max_watchers
        # Every open stream, dropped ones too until their stream has ended: the cap counts
        # streams, so a spectator cannot get past it by reading too slowly to be kept.
        self._watchers: dict[Watcher, None] = {}

    def subscribe(self, match_id: str) -> Watcher:
        """A new stream's watcher; raises Refused when max_watchers streams are open."""
        if len(self._watchers) >= self.max_watchers:
            raise Refused(
                "RESOURCE_EXHAUSTED",
                f"{len(self._watchers)} Watch streams are open, the most this referee serves "
                f"(max_spectators={self.max_watchers}): try again later",
            )
        watcher = Watcher(match_id)
        self._watchers[watcher] = None
        return watcher

    def unsubscribe(self, watcher: Watcher) -> None:
        self._watchers.pop(watcher, None)

    def open_streams(self) -> int:
        return len(self._watchers)

    def watching(self, match_id: str) -> bool:
        return any(
            not w.dropped and (not w.match_id or w.match_id == match_id) for w in self._watchers
        )

    def publish(self, match_id: str, message: pb.WatchResponse) -> None:
        for watcher in list(self._watchers):
            if watcher.dropped or (watcher.match_id and watcher.match_id != match_id):
                continue
            try:
                watcher.queue.put_nowait(message)
            except asyncio.QueueFull:
                self._drop(watcher)

    def _drop(self, watcher: Watcher) -> None:
        """End a stream that fell behind: what it has not read is let go, so its memory is too,
        and its stream ends at once with a status that says why."""
        watcher.dropped = True
        while not watcher.queue.empty():
            watcher.queue.get_nowait()
        watcher.queue.put_nowait(None)

    def close(self) -> None:
        for watcher in list(self._watchers):
            with contextlib.suppress(asyncio.QueueFull):
                watcher.queue.put_nowait(None)
        self._watchers.clear()
