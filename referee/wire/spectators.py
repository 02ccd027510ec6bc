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
import hmac
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from arena.v1 import referee_pb2 as pb

from referee.wire.refusals import (
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

MAX_SPECTATORS = 64
# How far behind a Watch stream may fall, in messages published after the last one it was
# handed, before it is ended: a spectator that far behind sees the past, not the match.
QUEUE_LIMIT = 1_000
# Messages all Watch streams together are handed a second, in turns of at most TURN_MESSAGES
# per stream and TURN_BURST in all: spectators' share of the referee's event loop, whatever
# their number (bench.spectator_load measures what it costs the bots).
WRITES_PER_S = 5_000
TURN_MESSAGES = 8
TURN_BURST = 16
# A stream ended for falling behind while in a write: how long its client has to take the
# write before the stream is cancelled rather than told why.
WRITE_GRACE_S = 1.0


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


@dataclass(slots=True)
class _Entry:
    """A published message, serialized the first time a stream takes it: once, however many
    streams send it."""

    match_id: str
    message: pb.WatchResponse
    data: bytes | None = None

    def encoded(self) -> bytes:
        if self.data is None:
            self.data = self.message.SerializeToString()
        return self.data


@dataclass(eq=False)
class Watcher:
    """One open Watch stream: the match it wants ('' for all), the next message it has to
    look at, and, while it waits for the hub, the future that hands it its next batch."""

    match_id: str
    cursor: int
    task: asyncio.Task[object] | None = None  # the stream's handler
    turn: asyncio.Future[list[bytes] | None] | None = None
    dropped: bool = False  # fell QUEUE_LIMIT messages behind: ended, gets nothing more


class SpectatorHub:
    """Public messages of every match, in one log, and the Watch streams reading it.

    Publishing costs the match the same with one spectator or a thousand: the message is
    appended to the log, nothing more. Streams are handed their messages in turns, round-robin,
    at most WRITES_PER_S messages a second for all of them together (each write costs the
    referee's event loop some tens of microseconds, and the bots' answers wait behind it), so
    spectators can only ever take a bounded share of the referee. A stream that falls more than
    QUEUE_LIMIT published messages behind, because it does not read or because the referee
    cannot serve so many streams so much, is ended, even in the middle of a write that does
    not finish, and frees its place."""

    def __init__(self, max_watchers: int = MAX_SPECTATORS) -> None:
        if max_watchers < 0:
            raise ValueError(f"max_spectators must be 0 or more, not {max_watchers}")
        self.max_watchers = max_watchers
        # Every open stream, dropped ones too until their stream has ended: the cap counts
        # streams, so a spectator cannot get past it by reading too slowly to be kept.
        self._watchers: dict[Watcher, None] = {}
        self._everything = 0  # live watchers of every match
        self._of_match: dict[str, int] = {}  # live watchers of one match, by match
        self._log: list[_Entry] = []
        self._base = 0  # the number of the log's first entry
        self._slowest = 0  # no live watcher's cursor is below this (it may lag the truth)
        self._waiting: deque[Watcher] = deque()  # watchers whose turn is pending, in order
        self._ending: deque[Watcher] = deque()  # dropped, their stream still to be ended
        self._tokens = float(TURN_BURST)
        self._refilled: float | None = None
        self._pump: asyncio.Handle | None = None
        self._closed = False
        self.handed = 0  # messages handed to streams, in all

    @property
    def _head(self) -> int:
        return self._base + len(self._log)

    def subscribe(self, match_id: str) -> Watcher:
        """A new stream's watcher, which sees what is published from now on; raises Refused
        when max_watchers streams are open."""
        if len(self._watchers) >= self.max_watchers:
            raise Refused(
                "RESOURCE_EXHAUSTED",
                f"{len(self._watchers)} Watch streams are open, the most this referee serves "
                f"(max_spectators={self.max_watchers}): try again later",
            )
        if not self._live_watchers():  # what is logged is nobody's any more
            self._base, self._log, self._slowest = self._head, [], self._head
        watcher = Watcher(match_id, cursor=self._head, task=asyncio.current_task())
        self._watchers[watcher] = None
        self._count(watcher, 1)
        return watcher

    def unsubscribe(self, watcher: Watcher) -> None:
        if watcher not in self._watchers:
            return
        del self._watchers[watcher]
        if not watcher.dropped:
            self._count(watcher, -1)

    def open_streams(self) -> int:
        return len(self._watchers)

    def watching(self, match_id: str) -> bool:
        return self._everything > 0 or self._of_match.get(match_id, 0) > 0

    def publish(self, match_id: str, message: pb.WatchResponse) -> None:
        if not self.watching(match_id):
            return
        self._log.append(_Entry(match_id, message))
        if self._head - self._slowest > QUEUE_LIMIT:
            self._drop_behind()
        if self._waiting:
            self._schedule()

    async def next_batch(self, watcher: Watcher) -> list[bytes] | None:
        """The watcher's next messages, serialized, when its turn comes; None once its stream
        must end (it fell behind, or the hub closed)."""
        if watcher.dropped or (self._closed and watcher.cursor >= self._head):
            return None
        turn: asyncio.Future[list[bytes] | None] = asyncio.get_running_loop().create_future()
        watcher.turn = turn
        self._waiting.append(watcher)
        self._schedule()
        try:
            return await turn
        finally:
            watcher.turn = None

    def close(self) -> None:
        """Each stream is handed what was published before, then ends."""
        self._closed = True
        if self._waiting:
            self._schedule()

    # -- turns --------------------------------------------------------------------------------
    def _schedule(self) -> None:
        """Run the turns now if a write is due, else when the bucket holds a burst again."""
        if self._pump is not None:
            return
        loop = asyncio.get_running_loop()
        self._refill(loop.time())
        if self._tokens >= 1:
            self._pump = loop.call_soon(self._turns)
        else:
            wait_s = (TURN_BURST - self._tokens) / WRITES_PER_S
            self._pump = loop.call_later(wait_s, self._turns)

    def _refill(self, now: float) -> None:
        if self._refilled is not None:
            self._tokens = min(TURN_BURST, self._tokens + (now - self._refilled) * WRITES_PER_S)
        self._refilled = now

    def _turns(self) -> None:
        """Hand each waiting watcher, in order, what it has to send, until the bucket is empty;
        a watcher with nothing to send waits on, at the back."""
        self._pump = None
        self._refill(asyncio.get_running_loop().time())
        while self._ending and self._tokens >= 1:
            self._tokens -= 1
            self._end(self._ending.popleft())
        still: list[Watcher] = []
        for _ in range(len(self._waiting)):
            if self._tokens < 1:
                break  # the watchers not yet visited wait for the next turns
            watcher = self._waiting.popleft()
            if watcher.turn is None or watcher.turn.done() or watcher.dropped:
                continue  # its stream ended meanwhile, or is being ended
            batch = self._take(watcher, min(TURN_MESSAGES, int(self._tokens)))
            if batch:
                self._tokens -= len(batch)
                self.handed += len(batch)
                watcher.turn.set_result(batch)
            elif self._closed:
                watcher.turn.set_result(None)
            else:
                still.append(watcher)
        unvisited = bool(self._waiting)
        self._waiting.extend(still)
        if unvisited or self._ending:
            self._schedule()

    def _take(self, watcher: Watcher, most: int) -> list[bytes]:
        """Up to most of the watcher's messages, moving its cursor past what it skips."""
        batch: list[bytes] = []
        log, base = self._log, self._base
        while watcher.cursor < self._head and len(batch) < most:
            entry = log[watcher.cursor - base]
            watcher.cursor += 1
            if not watcher.match_id or entry.match_id == watcher.match_id:
                batch.append(entry.encoded())
        return batch

    # -- falling behind -----------------------------------------------------------------------
    def _drop_behind(self) -> None:
        """End every stream more than QUEUE_LIMIT messages behind, and let go of the log that
        no stream still needs."""
        slowest = self._head
        for watcher in self._live_watchers():
            if self._head - watcher.cursor > QUEUE_LIMIT:
                self._drop(watcher)
            else:
                slowest = min(slowest, watcher.cursor)
        self._slowest = slowest
        if slowest > self._base:
            del self._log[: slowest - self._base]
            self._base = slowest

    def _drop(self, watcher: Watcher) -> None:
        """Stop a stream that fell behind: it gets nothing more at once, and is ended in the
        next turns (ending a stream costs a write: a thousand at once would stall the bots)."""
        watcher.dropped = True
        self._count(watcher, -1)
        self._ending.append(watcher)
        self._schedule()

    def _end(self, watcher: Watcher) -> None:
        """End a dropped stream, with a status that says why: one waiting for its turn is told
        so at once; one in the middle of a write is told when the write is taken, and
        cancelled if its client has not taken it within WRITE_GRACE_S."""
        if watcher.turn is not None and not watcher.turn.done():
            watcher.turn.set_result(None)
        else:
            asyncio.get_running_loop().call_later(WRITE_GRACE_S, self._cancel, watcher)

    def _cancel(self, watcher: Watcher) -> None:
        if watcher in self._watchers and watcher.turn is None and watcher.task is not None:
            watcher.task.cancel()

    def _live_watchers(self) -> list[Watcher]:
        return [w for w in self._watchers if not w.dropped]

    def _count(self, watcher: Watcher, change: int) -> None:
        if not watcher.match_id:
            self._everything += change
            return
        left = self._of_match.get(watcher.match_id, 0) + change
        if left > 0:
            self._of_match[watcher.match_id] = left
        else:
            self._of_match.pop(watcher.match_id, None)
