"""A webhook receiver for the tests: a real HTTP server on 127.0.0.1 in a thread of the test,
which keeps every POST (its headers and body) and answers with the status it is told to."""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest


@dataclass(frozen=True)
class Received:
    event: str
    delivery: str
    signature: str
    content_type: str
    body: bytes

    @property
    def payload(self) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.body)
        return found

    def signed_with(self, secret: str) -> bool:
        """The check a receiver makes: the HMAC of the body with its secret, in constant time."""
        mac = hmac.new(secret.encode(), self.body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(self.signature, f"sha256={mac}")


@dataclass
class Receiver:
    port: int
    got: list[Received] = field(default_factory=list)
    status: int = 204
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook?from=arena"

    def events(self) -> list[str]:
        with self.lock:
            return [r.event for r in self.got]

    def wait_for(self, what: str, events: list[str], wait_s: float = 90.0) -> None:
        """Until the events received are at least these (each as often), in any order."""
        deadline = time.monotonic() + wait_s
        while True:
            have = self.events()
            if all(have.count(e) >= events.count(e) for e in events):
                return
            if time.monotonic() > deadline:
                pytest.fail(f"{what}: no {events} within {wait_s:g} s, got {have}")
            time.sleep(0.1)


def _handler(receiver: Receiver) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with receiver.lock:
                status = receiver.status
                if 200 <= status < 300:
                    receiver.got.append(
                        Received(
                            self.headers.get("X-Arena-Event", ""),
                            self.headers.get("X-Arena-Delivery", ""),
                            self.headers.get("X-Arena-Signature", ""),
                            self.headers.get("Content-Type", ""),
                            body,
                        )
                    )
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


@contextmanager
def receiving(port: int = 0, receiver: Receiver | None = None) -> Iterator[Receiver]:
    """A receiver listening on 127.0.0.1:port (0: one the system picks) until the end."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _handler(Receiver(0)))
    found = receiver or Receiver(server.server_address[1])
    server.RequestHandlerClass = _handler(found)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def free_port() -> int:
    """A port nothing listens on now (a receiver that is down)."""
    with receiving() as probe:
        return probe.port
