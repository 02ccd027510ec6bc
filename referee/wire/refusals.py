"""Refusals counted per address, one count per server for Watch and Hello alike: a guessing
flood costs a bounded log, and an address that keeps guessing is held back.

A refusal is logged at most once per interval per address, and all addresses together at most
LOG_LINES times per interval; each line says how many refusals went unlogged before it. An
address with MAX_FAILURES refusals within FAILURE_WINDOW_S is over its budget until the window
ends: what that costs it is up to the caller (Watch refuses it unread, a Hello with a wrong
token waits before its refusal)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog

log = structlog.get_logger("referee.wire.refusals")

LOG_INTERVAL_S = 60.0
LOG_LINES = 20
FAILURE_WINDOW_S = 60.0
MAX_FAILURES = 20
# Addresses remembered at most; past it the least recently refused are forgotten, so that memory
# stays bounded whatever the number of addresses (IPv6 gives an attacker plenty).
MAX_TRACKED = 4096
# grpc's context.peer() for a TCP client is 'ipv4:127.0.0.1:47836' or 'ipv6:%5B::1%5D:47664';
# for a Unix-socket client (named path or abstract) it is 'unix:' (or 'unix:PATH' for a client
# that bound its socket to a name).
TCP_PEERS = ("ipv4", "ipv6")


def peer_kind(peer: str) -> str:
    """'ipv4', 'ipv6', 'unix', ... : how the client reached the server."""
    return peer.partition(":")[0]


def peer_address(peer: str) -> str:
    """What refusals are counted by: a TCP client's host without its port (every connection
    gets a new port), and one key for all clients of a Unix socket (a client may name its end
    as it likes)."""
    kind, _, rest = peer.partition(":")
    if kind in TCP_PEERS:
        return f"{kind}:{rest.rpartition(':')[0]}"
    return kind


@dataclass
class _Strikes:
    """One address's refusals in the current window, and when it was last logged."""

    window_start: float
    failures: int = 0
    logged_at: float | None = None


class Refusals:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._strikes: dict[str, _Strikes] = {}
        self._log_window_start = clock()
        self._log_lines = 0
        self._unlogged = 0

    def over_budget_for(self, peer: str) -> float | None:
        """Seconds the peer's address stays over its budget, or None when it is not."""
        strikes = self._strikes.get(peer_address(peer))
        if strikes is None or strikes.failures < MAX_FAILURES:
            return None
        left_s = strikes.window_start + FAILURE_WINDOW_S - self._clock()
        return left_s if left_s > 0 else None

    def refuse(self, event: str, peer: str, code: str, detail: str) -> None:
        """Count a refusal against the peer's address, and log it as event unless that address,
        or all of them together, logged lately."""
        strikes = self._strikes_of(peer_address(peer))
        strikes.failures += 1
        self._note(event, peer, strikes, code, detail)

    def tracked_addresses(self) -> int:
        """How many addresses' refusals are remembered (at most MAX_TRACKED)."""
        return len(self._strikes)

    def _strikes_of(self, address: str) -> _Strikes:
        now = self._clock()
        # Taken out and put back: the dict's order is least recently refused first.
        strikes = self._strikes.pop(address, None) or _Strikes(window_start=now)
        self._strikes[address] = strikes
        if now - strikes.window_start >= FAILURE_WINDOW_S:
            strikes.window_start, strikes.failures = now, 0
        while len(self._strikes) > MAX_TRACKED:
            del self._strikes[next(iter(self._strikes))]
        return strikes

    def _note(self, event: str, peer: str, strikes: _Strikes, code: str, detail: str) -> None:
        now = self._clock()
        if now - self._log_window_start >= LOG_INTERVAL_S:
            self._log_window_start, self._log_lines = now, 0
        recent = strikes.logged_at is not None and now - strikes.logged_at < LOG_INTERVAL_S
        if recent or self._log_lines >= LOG_LINES:
            self._unlogged += 1
            return
        log.warning(event, peer=peer, code=code, reason=detail, unlogged=self._unlogged)
        strikes.logged_at = now
        self._log_lines += 1
        self._unlogged = 0
