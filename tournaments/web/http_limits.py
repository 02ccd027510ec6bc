"""uvicorn's HTTP/1.1 protocol with the limits a public server needs, so that no web client
can take what the ladder's referee needs (serve's file descriptors: a replay, a log, a bot's
pipes). uvicorn alone keeps every connection it accepts, for as long as the client likes: one
that never sends a request is never closed, nor one that sends a byte every few seconds.

- at most MAX_CONNECTIONS open at once, MAX_PER_CLIENT of them from one address: one more is
  closed as soon as it is accepted (it costs its descriptor for that instant only);
- a request (its head and body) must arrive whole within REQUEST_TIMEOUT_S of its first byte,
  or of the connection's opening: a connection that sends nothing, or too slowly, is closed;
- between requests a connection may idle IDLE_TIMEOUT_S (uvicorn's keep-alive timeout);
- the listening socket's backlog is ACCEPT_BURST, which bounds what asyncio accepts in one
  go, before any connection can be closed.

So the web server holds at most MAX_CONNECTIONS + ACCEPT_BURST descriptors, whatever its
clients do: its budget, apart from the referee's (serve's open-file limit must exceed it by
what its matches need).

Live-update streams are connections too: they count against both caps (and have caps of their
own, live.py), and a stream stays open once its request has arrived.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_CONNECTIONS = 256
MAX_PER_CLIENT = 32
REQUEST_TIMEOUT_S = 5.0
IDLE_TIMEOUT_S = 5
ACCEPT_BURST = 64


class Limits:
    """The caps of one server (tests lower them); the counts of its open connections."""

    def __init__(
        self,
        max_connections: int = MAX_CONNECTIONS,
        max_per_client: int = MAX_PER_CLIENT,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self.max_connections = max_connections
        self.max_per_client = max_per_client
        self.request_timeout_s = request_timeout_s
        self.open = 0
        self.per_client: Counter[str] = Counter()
        self.refused = 0  # connections closed at once, for the tests and a curious operator

    def protocol(self) -> type[H11Protocol]:
        """The protocol class for uvicorn.Config(http=...), bound to these limits."""
        limits = self

        class Bound(LimitedH11Protocol):
            pass

        Bound.limits = limits
        return Bound


class LimitedH11Protocol(H11Protocol):
    limits: Limits

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.counted: str | None = None  # the client this connection counts against
        self.deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        limits = self.limits
        client = self.client[0] if self.client else "unknown"
        if limits.open >= limits.max_connections or limits.per_client[client] >= (
            limits.max_per_client
        ):
            limits.refused += 1
            self.connections.discard(self)
            transport.abort()  # at once: no lingering, its descriptor back now
            return
        limits.open += 1
        limits.per_client[client] += 1
        self.counted = client
        self._await_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_deadline()
        if self.counted is not None:
            self.limits.open -= 1
            self.limits.per_client[self.counted] -= 1
            if not self.limits.per_client[self.counted]:
                del self.limits.per_client[self.counted]
            self.counted = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE:
            self._await_request()  # a new request's first bytes: it has the timeout to arrive
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE and self.conn.their_state is not h11.SEND_BODY:
            self._stop_deadline()  # arrived whole (or the connection is ending)

    def _await_request(self) -> None:
        if self.deadline is None:
            self.deadline = self.loop.call_later(self.limits.request_timeout_s, self._too_slow)

    def _stop_deadline(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _too_slow(self) -> None:
        self.deadline = None
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
            self.transport.abort()
