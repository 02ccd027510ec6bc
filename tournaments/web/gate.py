"""What every request to a web server passes before any route: a Host the server answers to,
and its client's request rate.

The Host check stops DNS rebinding: a page on attacker.example whose name the attacker then
points at 127.0.0.1 makes the visitor's browser send `Host: attacker.example` to our loopback
server, and could read a seat's hand from `arena web --as referee`. So a server answers to the
loopback names (127.0.0.1, localhost, [::1]) and the names it is told (`[web] hosts` of a ladder,
`arena web --host-name`), and a server bound to a non-loopback address also to any IP address
(a rebinding page is reached by a name, never by an address). Any port goes with them.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from tournaments.web.access import is_loopback
from tournaments.web.serving import answer
from tournaments.web.throttle import Throttle, TooMany

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
REQUESTS_PER_SECOND = 40  # from one client: a page and its fetches are a few, a flood is refused


class HostNames:
    """The Host headers a server bound to bind_host answers to."""

    def __init__(self, bind_host: str, names: Iterable[str] = ()) -> None:
        self.names = LOOPBACK_NAMES | {_plain(name) for name in names}
        self.any_address = not is_loopback(bind_host)

    def allows(self, header: str | None) -> bool:
        name = None if header is None else host_name(header)
        if name is None:
            return False
        return name in self.names or (self.any_address and _is_address(name))

    def describe(self) -> str:
        shown = ", ".join(sorted(self.names))
        return shown + (" or an IP address" if self.any_address else "")


def host_name(header: str) -> str | None:
    """HOST or HOST:PORT, [IPv6] or [IPv6]:PORT -> the host, lower case; None when malformed."""
    if header.startswith("["):
        name, sep, rest = header[1:].partition("]")
        if not sep:
            return None
    else:
        name, colon, port = header.partition(":")
        rest = colon + port
    if rest and not (rest.startswith(":") and rest[1:].isdigit()):
        return None
    return _plain(name) or None


def _plain(name: str) -> str:
    return name.strip().lower().removeprefix("[").removesuffix("]").rstrip(".")


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class Gate:
    """ASGI middleware: a request with a Host the server does not answer to gets 400, and a
    client over its request rate 429, before any route runs (a refusal costs little)."""

    def __init__(self, app: ASGIApp, hosts: HostNames, requests: Throttle | None = None) -> None:
        self.app = app
        self.hosts = hosts
        self.requests = requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        header = request.headers.get("host")
        if not self.hosts.allows(header):
            shown = "no Host header" if header is None else f"Host {header[:80]!r}"
            message = f"{shown}: this server answers to {self.hosts.describe()}"
            await answer(request, 400, message)(scope, receive, send)
            return
        if self.requests is not None:
            try:
                self.requests.hit(client_of(request))
            except TooMany as exc:
                response = answer(request, 429, str(exc), retry_after(exc))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def client_of(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


def retry_after(exc: TooMany) -> dict[str, str]:
    return {"Retry-After": str(exc.retry_after_s)}
