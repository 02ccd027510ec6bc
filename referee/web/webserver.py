"""`arena web DIR`: the tournament server on uvicorn. The address is bound before anything is
printed, so the line that names it (with the port the system chose for --port 0) is the truth,
and every failure to start is one line."""

from __future__ import annotations

import socket
from pathlib import Path

import uvicorn

from referee.web.access import Access, check_host
from referee.web.app import create_app
from referee.web.folder import FolderError, TournamentFolder

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
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise StartError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def prepare(
    folder: Path, host: str, port: int, access: Access, max_live: int
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
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(
        create_app(tournament, access, max_live),
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    return uvicorn.Server(config), sock, f"http://{shown}:{bound}/"
