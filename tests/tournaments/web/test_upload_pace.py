"""An upload's body is not held to the web's 5 s request timeout, over the ladder's real web
server (uvicorn on 127.0.0.1, real sockets, a real SQLite file): a slow but steady upload of a
few MB over more than 5 s is taken (the control: the same pace to another route is cut at
5 s); a trickle below [submissions] upload_kib_per_s is cut all the same; a declared
Content-Length over archive_mb is answered 413 at once, before any body, and the connection
closed, with nothing stored (the control: a length within the limit gets no answer until its
body has come); an upload answered before its body is in (a 401) is closed at once, not read
on for the rest of its body."""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
from pathlib import Path

import pytest

from tests.tournaments.ladder.upload_kit import packed, python_bot, stored
from tests.tournaments.web.test_version_uploads import make, rows, where

pytestmark = pytest.mark.timeout(120)
KIB = 1024


def head(base: str, path: str, length: int, token: str = "") -> tuple[socket.socket, bytes]:
    host, port = base.removeprefix("http://").split(":")
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    said = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{auth}"
        f"Content-Type: application/octet-stream\r\nContent-Length: {length}\r\n\r\n"
    ).encode()
    return socket.create_connection((host, int(port)), timeout=30), said


def paced(sock: socket.socket, said: bytes, body: bytes, bytes_per_s: float) -> float | None:
    """Send the head, then the body at this pace; the seconds after which the server cut the
    connection, or None when all of it went."""
    sock.sendall(said)
    started = time.monotonic()
    step = 8 * KIB
    for offset in range(0, len(body), step):
        try:
            sock.sendall(body[offset : offset + step])
        except (BrokenPipeError, ConnectionResetError):
            return time.monotonic() - started
        time.sleep(max(0.0, started + (offset + step) / bytes_per_s - time.monotonic()))
    return None


def answer(sock: socket.socket) -> tuple[int, dict[str, object]]:
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response.status, json.loads(response.read())


def big_bot(tmp_path: Path, megabytes: float) -> bytes:
    folder = python_bot(tmp_path / "big")
    (folder / "weights.bin").write_bytes(os.urandom(int(megabytes * 1024 * KIB)))
    return packed(folder)


def test_a_slow_steady_upload_is_taken_and_the_same_pace_elsewhere_is_cut_at_5_s(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ladder"
    tokens = make(folder, upload_kib_per_s=64)
    archive = big_bot(tmp_path, 2)
    pace = 256 * KIB  # about 8 s for the whole archive, four times the least rate
    for base in where(folder):
        sock, said = head(base, "/api/bots/slowly/versions", len(archive), tokens["alice"])
        with sock:
            started = time.monotonic()
            assert paced(sock, said, archive, pace) is None
            status, body = answer(sock)
            took = time.monotonic() - started
        assert status == 202 and body["version"] == "slowly@1", body
        assert took > 6, took
        # The control: the same pace, to a route without a long body, is cut at 5 s.
        sock, said = head(base, "/api/authors", len(archive))
        with sock:
            cut = paced(sock, said, archive, pace)
        assert cut is not None and 4 < cut < 7.5, cut
    assert len(stored(folder)) == 1


def test_a_trickle_is_cut(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "ladder"
    tokens = make(folder, upload_kib_per_s=64)
    before = rows(folder)
    for base in where(folder):
        sock, said = head(base, "/api/bots/trickle/versions", 1024 * KIB, tokens["alice"])
        with sock:
            cut = paced(sock, said, os.urandom(1024 * KIB), 16 * KIB)  # a quarter of the rate
        assert cut is not None and 4 < cut < 11, cut
    assert stored(folder) == [] and rows(folder) == before
    # Cut mid-body, the route ends quietly: no traceback in serve's console.
    said = capfd.readouterr()
    assert "Traceback" not in said.err + said.out and "ClientDisconnect" not in said.err


def test_an_over_limit_length_is_413_at_once_and_closed(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    tokens = make(folder, archive_mb=1)
    before = rows(folder)
    for base in where(folder):
        # With a token, and without one: refused by its head alone, before the app (which
        # would say 401 first) sees the request.
        for token in (tokens["alice"], ""):
            sock, said = head(base, "/api/bots/huge/versions", 50 * 1024 * KIB, token)
            with sock:
                started = time.monotonic()
                sock.sendall(said)  # and not a byte of the body
                status, body = answer(sock)
                assert sock.recv(1) == b""  # closed: nothing more is read
                took = time.monotonic() - started
            assert status == 413, body
            assert "over 1 MB ([submissions] archive_mb)" in str(body["error"])
            assert took < 1.0, took  # not the 5 s a request may take
        # The control: within the limit, the server waits for the body.
        sock, said = head(base, "/api/bots/huge/versions", 512 * KIB, tokens["alice"])
        with sock:
            sock.sendall(said)
            sock.settimeout(1.0)
            with pytest.raises(TimeoutError):
                sock.recv(1)
    assert stored(folder) == [] and rows(folder) == before


def test_an_upload_answered_before_its_body_is_not_read_on(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    make(folder)
    for base in where(folder):
        sock, said = head(base, "/api/bots/nobody/versions", 512 * KIB, "not-a-real-token")
        with sock:
            started = time.monotonic()
            sock.sendall(said + os.urandom(16 * KIB))  # and not the rest
            status, body = answer(sock)
            assert sock.recv(1) == b""  # closed, not kept for the rest of the body
            took = time.monotonic() - started
        assert status == 401, body
        assert took < 1.5, took  # not the 5 s its rate window would have allowed
