"""uvicorn's HTTP/1.1 protocol with the limits a public server needs, so that no web client
can take what the ladder's referee needs (serve's file descriptors: a replay, a log, a bot's
pipes). uvicorn alone keeps every connection it accepts, for as long as the client likes: one
that never sends a request is never closed, nor one that sends a byte every few seconds.

- at most MAX_CONNECTIONS open at once, MAX_PER_CLIENT of them from one address: one more is
  closed as soon as it is accepted (it costs its descriptor for that instant only);
- a request (its head and body) must arrive whole within REQUEST_TIMEOUT_S of its first byte,
  or of the connection's opening: a connection that sends nothing, or too slowly, is closed;
- but a long body (LongBody: an author's upload, which a slow link takes minutes to send) has
  no such deadline once its head has arrived: it must come at min_bytes_per_s at least, over
  each REQUEST_TIMEOUT_S, or it is cut (a trickle still is: slowloris stays closed). Its
  declared Content-Length over max_bytes is answered 413 at once, before any of the body is
  read, and the connection closed; answered before its body is in (a 401, the app's 413 of a
  chunked body past the limit), the rest of it is not read: the connection is closed;
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
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_CONNECTIONS = 256
MAX_PER_CLIENT = 32
REQUEST_TIMEOUT_S = 5.0
IDLE_TIMEOUT_S = 5
ACCEPT_BURST = 64
# After an answer given before the body was in: how long the rest of it is read and dropped
# before the connection is cut, so that the client reads the answer rather than a reset.
LINGER_S = 2.0


@dataclass(frozen=True)
class LongBody:
    """A route whose body may take longer than the request timeout (an upload): at most
    max_bytes, arriving at min_bytes_per_s at least; too_large is its 413's one line."""

    method: str
    path: re.Pattern[str]
    max_bytes: int
    min_bytes_per_s: float
    too_large: str

    def matches(self, method: str, path: str) -> bool:
        return method == self.method and self.path.fullmatch(path) is not None


class Limits:
    """The caps of one server (tests lower them); the counts of its open connections."""

    def __init__(
        self,
        max_connections: int = MAX_CONNECTIONS,
        max_per_client: int = MAX_PER_CLIENT,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
        long_bodies: Sequence[LongBody] = (),
    ) -> None:
        self.max_connections = max_connections
        self.max_per_client = max_per_client
        self.request_timeout_s = request_timeout_s
        self.long_bodies = tuple(long_bodies)
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
        self.long_body: LongBody | None = None  # the current request's, if its route has one
        self.long_cycle: object = None  # the request (uvicorn's cycle) it was looked up for
        self.window: asyncio.TimerHandle | None = None  # the long body's rate, checked at its end
        self.window_bytes = 0
        self.draining = False

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
        self._stop_window()
        if self.counted is not None:
            self.limits.open -= 1
            self.limits.per_client[self.counted] -= 1
            if not self.limits.per_client[self.counted]:
                del self.limits.per_client[self.counted]
            self.counted = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.draining:
            return  # answered already: the rest of the body is dropped
        if self.conn.their_state is h11.IDLE:
            self._await_request()  # a new request's first bytes: it has the timeout to arrive
            self.long_body = None
        tasks = set(self.tasks)
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.SEND_BODY and self.cycle is not None and self.cycle is not self.long_cycle:
            self._head_arrived(self.tasks - tasks)
        elif self.long_body is not None:
            self.window_bytes += len(data)
        if state is not h11.IDLE and state is not h11.SEND_BODY:
            self._stop_deadline()  # arrived whole (or the connection is ending)
            self._stop_window()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.long_body is not None and self.conn.their_state is h11.SEND_BODY:
            self._drain()  # answered before its body was in: the rest is not wanted

    def _head_arrived(self, app_tasks: set[asyncio.Task[None]]) -> None:
        """A request's head is in, its body not yet: is its route one with a long body?"""
        self.long_cycle = self.cycle
        scope = self.cycle.scope
        rule = next(
            (b for b in self.limits.long_bodies if b.matches(scope["method"], scope["path"])),
            None,
        )
        self.long_body = rule
        if rule is None:
            return
        declared = dict(self.headers).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > rule.max_bytes:
            for task in app_tasks:  # not started yet: the app never sees the request
                task.cancel()
            self._refuse(413, b"Content Too Large", rule.too_large)
            return
        self._stop_deadline()  # the body has its rate to keep instead
        self._start_window()

    def _refuse(self, status: int, reason: bytes, error: str) -> None:
        body = json.dumps({"error": error}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        self.cycle.response_started = self.cycle.response_complete = True
        for event in (
            h11.Response(status_code=status, headers=headers, reason=reason),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event))
        self._drain()

    def _drain(self) -> None:
        """The answer is out: say so (FIN), drop what more comes, and cut after LINGER_S."""
        self.draining = True
        self._stop_deadline()
        self._stop_window()
        self.flow.resume_reading()
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_S, self._cut)

    def _cut(self) -> None:
        if not self.transport.is_closing():
            self.transport.abort()

    def _start_window(self) -> None:
        self.window_bytes = 0
        self.window = self.loop.call_later(self.limits.request_timeout_s, self._window_ends)

    def _stop_window(self) -> None:
        if self.window is not None:
            self.window.cancel()
            self.window = None

    def _window_ends(self) -> None:
        """Cut a long body that came slower than its rate over the last window; not one the
        server itself stopped reading (its app had not taken what came before)."""
        self.window = None
        rule = self.long_body
        if rule is None or self.conn.their_state is not h11.SEND_BODY:
            return
        if self.transport.is_closing():
            return
        wanted = rule.min_bytes_per_s * self.limits.request_timeout_s
        if self.window_bytes < wanted and not self.flow.read_paused:
            self.transport.abort()
            return
        self._start_window()

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
