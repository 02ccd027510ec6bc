"""`arena web DIR`: the tournament server on uvicorn; and the ladder's, which `arena ladder
serve` runs on a thread of its own. The address is bound before anything is printed, so the
line that names it (with the port the system chose for port 0) is the truth, and every failure
to start is one line."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from tournaments.config import ConfigError
from tournaments.ladder.config_file import load_ladder
from tournaments.read_models.errors import FolderError
from tournaments.read_models.tournament_reads import TournamentFolder
from tournaments.web.access import Access, check_host
from tournaments.web.gate import REQUESTS_PER_SECOND, Gate, HostNames
from tournaments.web.http_limits import ACCEPT_BURST, IDLE_TIMEOUT_S, Limits
from tournaments.web.ladder_app import create_ladder_app, upload_body
from tournaments.web.throttle import Throttle
from tournaments.web.tournament_app import create_app

SHUTDOWN_GRACE_S = 2  # open pages' event streams are closed at once; requests get this long


class StartError(Exception):
    """The server cannot start: the folder, the address or the viewpoint."""


def bind(host: str, port: int) -> socket.socket:
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise StartError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(ACCEPT_BURST)
    except OSError as exc:
        sock.close()
        raise StartError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def prepare(
    folder: Path,
    host: str,
    port: int,
    access: Access,
    max_live: int,
    host_names: Sequence[str] = (),
) -> tuple[uvicorn.Server, socket.socket, str]:
    """The server, its bound socket and its address; StartError says what stands in the way."""
    try:
        check_host(access, host)
    except ValueError as exc:
        raise StartError(str(exc)) from None
    try:
        tournament = TournamentFolder(folder)
    except FolderError as exc:
        raise StartError(str(exc)) from None
    return _server(create_app(tournament, access, max_live), host, port, host_names)


def _server(
    app: FastAPI,
    host: str,
    port: int,
    host_names: Sequence[str] = (),
    limits: Limits | None = None,
    requests_per_second: int = REQUESTS_PER_SECOND,
) -> tuple[uvicorn.Server, socket.socket, str]:
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    requests = Throttle(f"{requests_per_second}/second", "requests")
    gate = Gate(app, HostNames(host, host_names), requests)
    config = uvicorn.Config(
        gate,
        http=(limits or Limits()).protocol(),  # connection caps and a request timeout
        # asyncio accepts up to `backlog` connections in one go before the protocol can close
        # any: uvicorn's 2048 would take that many descriptors from serve at once.
        backlog=ACCEPT_BURST,
        timeout_keep_alive=IDLE_TIMEOUT_S,
        log_level="warning",
        access_log=False,  # no request lines: nothing of a request can leak into a log
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    return uvicorn.Server(config), sock, f"http://{shown}:{bound}/"


def split_address(address: str) -> tuple[str, int]:
    """HOST:PORT (IPv6 as [HOST]:PORT) -> (host, port); StartError when it is not one."""
    host, sep, port = address.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise StartError(f"web address {address!r} is not HOST:PORT")
    return host, int(port)


class BackgroundServer:
    """A web server on a thread of its own (uvicorn leaves the signals to the main thread),
    stopped with stop()."""

    def __init__(self, server: uvicorn.Server, sock: socket.socket, address: str) -> None:
        self.server = server
        self.sock = sock
        self.address = address
        self.thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="arena-web", daemon=True
        )
        self.thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout_s)
        self.sock.close()


def serve_ladder(
    folder: Path,
    address: str,
    max_live: int = 16,
    after_change: Callable[[], None] | None = None,
    host_names: Sequence[str] = (),
    limits: Limits | None = None,
    requests_per_second: int = REQUESTS_PER_SECOND,
) -> BackgroundServer:
    """The ladder's page and API at address, until stop(); StartError says what stands in the
    way."""
    host, port = split_address(address)
    try:
        app = create_ladder_app(folder, max_live, after_change=after_change)
        submissions = load_ladder(folder).submissions
    except (FolderError, ConfigError) as exc:
        raise StartError(str(exc)) from None
    limits = limits or Limits()
    limits.long_bodies = (upload_body(submissions),)  # an upload keeps a rate, not 5 s
    server = _server(app, host, port, host_names, limits, requests_per_second)
    return BackgroundServer(*server)
