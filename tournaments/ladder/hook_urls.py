"""Where a webhook may point. An author's URL is the ladder's server making a request on their
behalf, so it must not reach what only the ladder's host reaches (its loopback, the private
network behind it, a cloud's metadata address): http or https only, and every address its host
resolves to public. Checked when the URL is set and again at each delivery (DNS can change),
and the delivery connects to the very address checked, never to a second lookup's. The
operator's own URL is trusted (theirs to point at 127.0.0.1), and so is every URL when the
operator sets `[webhooks] allow_private = true`."""

from __future__ import annotations

import ipaddress
import socket
import urllib.parse
from dataclasses import dataclass

MAX_URL_CHARS = 2000


class HookRefused(ValueError):
    """A webhook URL that may not be set or reached; the message says why, `kind` in short
    (what a delivery's state shows: not the address, which may be the ladder's network's)."""

    def __init__(self, message: str, kind: str = "bad URL") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Target:
    """A URL taken apart: what the delivery sends to, and the addresses it may connect to."""

    scheme: str
    host: str
    port: int
    path: str  # with its query
    addresses: tuple[str, ...]


def checked_url(url: str) -> urllib.parse.SplitResult:
    """The URL, when it is an http or https one with a host and nothing else odd in it."""
    if len(url) > MAX_URL_CHARS or not url.isascii() or not url.isprintable() or " " in url:
        raise HookRefused(
            f"webhook URL: printable ASCII without spaces, {MAX_URL_CHARS} characters at most"
        )
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HookRefused(f"webhook URL {url!r}: give an http:// or https:// address with a host")
    if "@" in parts.netloc or parts.fragment:
        raise HookRefused(f"webhook URL {url!r}: no user:password@ and no #fragment")
    try:
        parts.port  # noqa: B018 - the property raises on a port out of range
    except ValueError:
        raise HookRefused(f"webhook URL {url!r}: its port is not one of 1 to 65535") from None
    return parts


def why_refused(address: str) -> str | None:
    """Why an author's hook may not reach this address, or None."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    for kind, hit in (
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("unspecified", ip.is_unspecified),
        ("private", ip.is_private),
        ("reserved", ip.is_reserved),
        ("non-public", not ip.is_global),  # shared (100.64/10), documentation, benchmarking...
    ):
        if hit:
            return kind
    return None


def target(url: str, trusted: bool) -> Target:
    """Where a delivery to `url` goes: its host resolved now; unless `trusted`, HookRefused
    when any address it resolves to is loopback, private, link-local or multicast (a host
    that answers with one public and one private address could be steered to either)."""
    parts = checked_url(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        said = f"webhook host {host!r} does not resolve ({exc})"
        raise HookRefused(said, "host does not resolve") from None
    addresses = tuple(dict.fromkeys(str(info[4][0]) for info in found))
    if not trusted:
        for address in addresses:
            kind = why_refused(address)
            if kind is not None:
                raise HookRefused(
                    f"webhook host {host!r} resolves to {address}, a {kind} address: a "
                    "webhook must reach a public one (the operator may allow others: "
                    "[webhooks] allow_private)",
                    f"refused: resolves to a {kind} address",
                )
    path = parts.path or "/"
    if parts.query:
        path += f"?{parts.query}"
    return Target(parts.scheme, host, port, path, addresses)
