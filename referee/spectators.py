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

import structlog
from arena.v1 import referee_pb2 as pb

log = structlog.get_logger("referee.spectators")

QUEUE_LIMIT = 10_000
MAX_SPECTATORS = 64
# A token-guessing flood must not fill the disk: each address is logged at most once per
# interval, and all addresses together at most LOG_LINES times per interval.
LOG_INTERVAL_S = 60.0
LOG_LINES = 20
# After MAX_FAILURES refusals within FAILURE_WINDOW_S an address is refused at once, without a
# look at its token, until the window ends.
FAILURE_WINDOW_S = 60.0
MAX_FAILURES = 20
# Addresses remembered at most; past it the least recently refused are forgotten, so that memory
# stays bounded whatever the number of addresses (IPv6 gives an attacker plenty).
MAX_TRACKED = 4096
# grpc's context.peer() for a TCP client is 'ipv4:127.0.0.1:47836' or 'ipv6:%5B::1%5D:47664';
# for a Unix-socket client (named path or abstract) it is 'unix:' (or 'unix:PATH' for a client
# that bound its socket to a name).
TCP_PEERS = ("ipv4", "ipv6")


class Refused(Exception):
    """A Watch the referee refuses; code is the gRPC status name to answer with."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def peer_kind(peer: str) -> str:
    """'ipv4', 'ipv6', 'unix', ... : how the client reached the server."""
    return peer.partition(":")[0]


def peer_address(peer: str) -> str:
    """What refusals are counted by: a TCP client's host without its port (every connection
    gets a new port), and one key for all clients of a Unix socket (a client may name its end
    as it likes)."""
    kind, _, rest = peer.partition(":")
    if kind in TCP_PEERS:
        return f"{kind}:{rest.rpartition(':')[0]}"
    return kind


@dataclass
class _Strikes:
    """One address's refusals in the current window, and when it was last logged."""

    window_start: float
    failures: int = 0
    logged_at: float | None = None


class SpectatorGate:
    """Lets in a Watch over TCP with the server's spectator token; refuses everything else
    with a status that names what was wrong, logging refusals sparingly."""

    def __init__(
        self,
        token: str,
        tcp_served: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not token:
            raise ValueError("the spectator token must not be empty")
        self._token = token.encode()
        self._tcp_served = tcp_served
        self._clock = clock
        self._strikes: dict[str, _Strikes] = {}
        self._log_window_start = clock()
        self._log_lines = 0
        self._unlogged = 0

    def admit(self, peer: str, token: str) -> None:
        """Return when peer may watch; raise Refused otherwise."""
        if peer_kind(peer) not in TCP_PEERS:
            self._refuse(peer, "PERMISSION_DENIED", self._not_over_tcp(peer))
        locked_s = self._locked_for(peer_address(peer))
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
        return len(self._strikes)

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

    def _locked_for(self, address: str) -> float | None:
        """Seconds the address is still refused without a look at its token, or None."""
        strikes = self._strikes.get(address)
        if strikes is None or strikes.failures < MAX_FAILURES:
            return None
        left_s = strikes.window_start + FAILURE_WINDOW_S - self._clock()
        return left_s if left_s > 0 else None

    def _refuse(self, peer: str, code: str, detail: str) -> NoReturn:
        strikes = self._strikes_of(peer_address(peer))
        strikes.failures += 1
        self._note(peer, strikes, code, detail)
        raise Refused(code, detail)

    def _strikes_of(self, address: str) -> _Strikes:
        now = self._clock()
        # Taken out and put back: the dict's order is least recently refused first.
        strikes = self._strikes.pop(address, None) or _Strikes(window_start=now)
        self._strikes[address] = strikes
        if now - strikes.window_start >= FAILURE_WINDOW_S:
            strikes.window_start, strikes.failures = now, 0
        while len(self._strikes) > MAX_TRACKED:
            del self._strikes[next(iter(self._strikes))]
        return strikes

    def _note(self, peer: str, strikes: _Strikes, code: str, detail: str) -> None:
        """Log the refusal unless this address, or all of them together, logged lately; the
        next line says how many refusals went unlogged since the one before."""
        now = self._clock()
        if now - self._log_window_start >= LOG_INTERVAL_S:
            self._log_window_start, self._log_lines = now, 0
        recent = strikes.logged_at is not None and now - strikes.logged_at < LOG_INTERVAL_S
        if recent or self._log_lines >= LOG_LINES:
            self._unlogged += 1
            return
        log.warning("watch_refused", peer=peer, code=code, reason=detail, unlogged=self._unlogged)
        strikes.logged_at = now
        self._log_lines += 1
        self._unlogged = 0


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
