"""A web client cannot hold what others need: connections are capped in all and per address, a
connection that sends no whole request in time is closed, and one address cannot take every
live-update stream. A real uvicorn server on 127.0.0.1 with lowered caps; other addresses of
127.0.0.0/8 stand for other clients. Each beside uvicorn's own protocol, or the cap off."""

from __future__ import annotations

import http.client
import select
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from uvicorn.protocols.http.h11_impl import H11Protocol

from tournaments.ladder.config_file import write_new_ladder
from tournaments.ladder.database import LadderStore
from tournaments.web.http_limits import Limits
from tournaments.web.webserver import BackgroundServer, serve_ladder, split_address

Where = tuple[str, int]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_new_ladder(tmp_path, "opposing-force", 2, "127.0.0.1:0")
    LadderStore.create(tmp_path).close()
    return tmp_path


@contextmanager
def web(folder: Path, limits: Limits | None = None) -> Iterator[tuple[Where, BackgroundServer]]:
    server = serve_ladder(folder, "127.0.0.1:0", limits=limits)
    try:
        yield split_address(server.address.removeprefix("http://").rstrip("/")), server
    finally:
        server.stop()


def connect(where: Where, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection(where, timeout=10, source_address=(source, 0))
    return sock


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes the connection within seconds (it sends nothing before)."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def none_closed(socks: list[socket.socket], seconds: float) -> bool:
    """Whether all stay open (nothing to read, no end) for seconds, waited on together."""
    readable, _, _ = select.select(socks, [], [], seconds)
    return not readable


def page_status(where: Where, source: str) -> int:
    connection = http.client.HTTPConnection(*where, timeout=10, source_address=(source, 0))
    try:
        connection.request("GET", "/api/ladder")
        return connection.getresponse().status
    finally:
        connection.close()


LIMITS = Limits(max_connections=12, max_per_client=6, request_timeout_s=1.0)


def test_idle_connections_beyond_the_caps_are_closed_and_the_page_answers(folder: Path) -> None:
    with web(folder, LIMITS) as (where, _), ExitStack() as held:
        mine = [held.enter_context(connect(where)) for _ in range(10)]
        assert [closed_within(s, 0.3) for s in mine[6:]] == [True] * 4  # past 6 from one address
        others = [
            held.enter_context(connect(where, f"127.0.0.{n}")) for n in (2, 2, 3, 3, 4, 4, 5, 5)
        ]
        assert none_closed(others[:6], 0.3)
        assert all(closed_within(s, 0.3) for s in others[6:])  # past 12 in all
        # Within the second the idle ones hold their places, then the timeout frees them all.
        assert all(closed_within(s, 3.0) for s in mine[:6] + others[:6])
        assert page_status(where, "127.0.0.6") == 200


def test_a_request_that_trickles_in_is_closed_at_its_timeout(folder: Path) -> None:
    with web(folder, LIMITS) as (where, _), connect(where) as slow:
        slow.sendall(b"GET /api/ladder HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        start = time.monotonic()
        closed = False
        while time.monotonic() - start < 5 and not closed:
            try:
                slow.sendall(b"X")  # a byte at a time, each in time for uvicorn's own timers
            except OSError:
                closed = True
                break
            closed = closed_within(slow, 0.2)
        assert closed and time.monotonic() - start < 3
        # A request that arrives whole is answered, and its connection may idle between requests.
        connection = http.client.HTTPConnection(*where, timeout=10)
        for _ in range(2):
            connection.request("GET", "/api/ladder")
            assert connection.getresponse().read()
        connection.close()


def test_control_uvicorns_own_protocol_keeps_every_idle_connection(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Limits, "protocol", lambda self: H11Protocol)
    with web(folder, LIMITS) as (where, _), ExitStack() as held:
        mine = [held.enter_context(connect(where)) for _ in range(16)]
        assert none_closed(mine, 2.5)  # past the caps and past the timeout: all still held
        mine[0].sendall(b"GET /api/ladder HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for _ in range(10):  # a request trickling in for 2 s, past the timeout: still held
            mine[0].sendall(b"X")
            assert none_closed(mine[:1], 0.2)


def stream(where: Where, source: str) -> http.client.HTTPConnection | int:
    """A live-update stream from the source address, open; or the status that refused it."""
    connection = http.client.HTTPConnection(*where, timeout=10, source_address=(source, 0))
    connection.request("GET", "/api/events")
    answer = connection.getresponse()
    if answer.status != 200:
        answer.read()
        connection.close()
        return answer.status
    assert answer.readline() == b"event: progress\r\n"
    return connection


def test_one_address_cannot_take_every_live_stream(folder: Path) -> None:
    with web(folder) as (where, _), ExitStack() as held:
        mine = [stream(where, "127.0.0.1") for _ in range(5)]
        for opened in mine:
            if isinstance(opened, http.client.HTTPConnection):
                held.callback(opened.close)
        assert [isinstance(s, int) and s for s in mine] == [False] * 4 + [503]
        theirs = stream(where, "127.0.0.2")
        assert isinstance(theirs, http.client.HTTPConnection)
        theirs.close()


def test_control_without_the_per_address_cap_one_client_takes_them_all(folder: Path) -> None:
    with web(folder) as (where, server), ExitStack() as held:
        server.server.config.app.app.state.site.feed.max_per_client = None
        mine = [stream(where, "127.0.0.1") for _ in range(16)]
        for opened in mine:
            assert isinstance(opened, http.client.HTTPConnection)
            held.callback(opened.close)
        assert stream(where, "127.0.0.2") == 503
