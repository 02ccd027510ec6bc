"""Who the tournament server shows a match's replay as.

`public` (the default): the spectators' view only, what anyone watching the match could have
seen. A page on 127.0.0.1 is not the organiser's alone: every user and every process of the
machine reaches it, and at the sandbox tiers none and rlimits that includes the bots of the
tournament. Seats' hands, the referee's view and the chance outcomes of past matches would show
a bot how its opponents play their hidden cards, so they stay off unless the organiser asks.

`referee`: every viewpoint (the referee's page switches between every seat's and the public's),
for the organiser, and only on a loopback address.

Either way a match opens only once every seating of its deal has finished (the read models:
tournaments/read_models/).
"""

from __future__ import annotations

import ipaddress
from enum import StrEnum

from referee.replays.walk import PUBLIC, REFEREE


class Access(StrEnum):
    PUBLIC = "public"
    REFEREE = "referee"


class Refused(Exception):
    """A viewpoint this server does not show."""


def viewpoints(access: Access, seats: int) -> list[str]:
    """What `?as=` may be; the first is the default."""
    if access is Access.PUBLIC:
        return [PUBLIC]
    return [REFEREE, PUBLIC, *(str(seat) for seat in range(seats))]


def check_viewpoint(access: Access, seats: int, wanted: str | None) -> str:
    """The viewpoint to show: wanted, or the server's default; Refused when it may not."""
    allowed = viewpoints(access, seats)
    if wanted is None:
        return allowed[0]
    if wanted in allowed:
        return wanted
    if access is Access.PUBLIC and wanted in viewpoints(Access.REFEREE, seats):
        raise Refused(
            f"this server shows matches as the public only; `arena web DIR --as referee` "
            f"shows them as {wanted}"
        )
    raise Refused(f"no viewpoint {wanted!r}: one of {', '.join(allowed)}")


def check_host(access: Access, host: str) -> None:
    """The referee's view is for the organiser's own machine: ValueError on another address."""
    if access is Access.REFEREE and not is_loopback(host):
        raise ValueError(
            f"--as referee shows every hidden card: serve it on 127.0.0.1, not {host} "
            "(or use --as public)"
        )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
