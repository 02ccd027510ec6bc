"""What a connection may hold on to before it has proved anything: file descriptors, and streams
that have not said Hello.

Out of file descriptors the referee loses everything at once: bots cannot join, a replay cannot
be written, and `arena play` ends without its results. So the referee raises its soft
RLIMIT_NOFILE to the hard limit, keeps a reserve of descriptors that connections may never take
(replays, SQLite, the pipes of the bots it starts), and asks grpc to close what has not spoken:

- grpc.max_allowed_incoming_connections: per listening address; grpc accepts a connection past
  it and closes it at once, so connections never take the reserve;
- grpc.server_handshake_timeout_ms: a connection that sends nothing, or only the HTTP/2
  preface, is closed once it is this old (grpc's default is 120 s);
- grpc.max_connection_idle_ms: a connection that finished its handshake but has no call open
  is closed once idle this long (a client that wants a call reconnects at once).

It also lets clients ping a connection every MIN_PING_INTERVAL_S while it sends them nothing
(gRPC core's default is 5 minutes, past which it answers GOAWAY too_many_pings): the SDK pings
after 2 s of silence, to find a connection cut on the way dead before a decision's clock runs
out (sdk/arena_sdk/client.py, KEEPALIVE_S). And it pings its own clients after KEEPALIVE_S
with nothing from them, and closes a connection whose ping goes unanswered for as long again:
a bot whose connection was cut on the way and never comes back would otherwise keep its
stream, be taken for present, and be seated in match after match it cannot play, for as long
as TCP takes to give up (minutes).

All three limits were checked against grpcio 1.85 by tests/trust/test_connection_limits.py,
not taken from the documentation. Streams a connection opens are bounded elsewhere: Play
streams until their Hello by HelloWaits below, Watch streams by the spectator cap."""

from __future__ import annotations

import asyncio
import resource

FD_RESERVE_MIN = 256
"""File descriptors no connection may take, at the least; a quarter of the limit when that is
more. A series needs a few per bot process (its pipes and log) and one per replay being
written; a tournament adds its SQLite files."""

HANDSHAKE_TIMEOUT_S = 3.0
IDLE_CONNECTION_S = 10.0
MIN_PING_INTERVAL_S = 0.5
KEEPALIVE_S = 10.0  # 0: the referee never pings

MAX_HELLO_WAITS = 1024
"""Play streams that may wait for their Hello at once. Past it, a new stream ends the one that
has waited longest, never the newcomer: an honest bot says Hello the moment its stream opens,
so the oldest waiting stream is the one that has least excuse. A thousand bots joining at once
(bench.scale) fit."""


def raise_fd_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit, as far as the kernel allows; returns the
    soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = _nr_open() if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < ceiling:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
            soft = ceiling
        except (OSError, ValueError):
            pass
    return _nr_open() if soft == resource.RLIM_INFINITY else soft


def _nr_open() -> int:
    """The kernel's ceiling for RLIMIT_NOFILE (what an unlimited hard limit means in practice)."""
    try:
        with open("/proc/sys/fs/nr_open", encoding="ascii") as ceiling:
            return int(ceiling.read())
    except (OSError, ValueError):
        return 1 << 20


def fd_reserve(limit: int) -> int:
    return max(FD_RESERVE_MIN, limit // 4)


def connection_cap(limit: int, listeners: int) -> int:
    """Connections each listening address may hold, so that all of them together leave the
    reserve free: grpc counts per address."""
    return max(1, (limit - fd_reserve(limit)) // max(1, listeners))


def server_options(listeners: int) -> list[tuple[str, int]]:
    """The grpc server options that bound connections, for a server with that many listening
    addresses; raises the open-file limit first."""
    limit = raise_fd_limit()
    return [
        ("grpc.max_allowed_incoming_connections", connection_cap(limit, listeners)),
        ("grpc.server_handshake_timeout_ms", int(HANDSHAKE_TIMEOUT_S * 1000)),
        ("grpc.max_connection_idle_ms", int(IDLE_CONNECTION_S * 1000)),
        ("grpc.http2.min_ping_interval_without_data_ms", int(MIN_PING_INTERVAL_S * 1000)),
        *keepalive_options(KEEPALIVE_S),
    ]


def keepalive_options(every_s: float) -> list[tuple[str, int]]:
    """Ping after every_s with nothing received, and give the connection up when no answer
    comes within as long again (grpcio 1.85 needs ping_timeout_ms for that, besides
    keepalive_timeout_ms); none for 0."""
    if every_s <= 0:
        return []
    every_ms = max(1, round(every_s * 1000))
    return [
        ("grpc.keepalive_time_ms", every_ms),
        ("grpc.keepalive_timeout_ms", every_ms),
        ("grpc.http2.ping_timeout_ms", every_ms),
        ("grpc.http2.max_pings_without_data", 0),
    ]


class HelloWaits:
    """The Play streams waiting for their Hello, oldest first, at most `limit`."""

    def __init__(self, limit: int = MAX_HELLO_WAITS) -> None:
        if limit < 1:
            raise ValueError(f"at least one stream must be able to wait for its Hello, not {limit}")
        self.limit = limit
        # Each waiting stream's eviction notice, set when a newer stream pushes it out.
        self._waiting: dict[asyncio.Future[None], None] = {}

    def enter(self) -> asyncio.Future[None]:
        """A new stream's place; the future is done once the stream must give it up."""
        while len(self._waiting) >= self.limit:
            oldest = next(iter(self._waiting))
            del self._waiting[oldest]
            oldest.set_result(None)
        notice: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[notice] = None
        return notice

    def leave(self, notice: asyncio.Future[None]) -> None:
        self._waiting.pop(notice, None)

    def __len__(self) -> int:
        return len(self._waiting)
