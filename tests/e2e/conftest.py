"""Shared pieces of the end-to-end tests: a real referee server on loopback, real bot
processes, bounded in time."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

from referee.launcher import BotSpec, parse_spec

RAWBOT = Path(__file__).resolve().parent.parent / "bots" / "rawbot.py"


def rawbot(mode: str) -> BotSpec:
    """A raw-wire bot process in the given mode (see tests/bots/rawbot.py)."""
    return parse_spec(f"cmd:{sys.executable} {RAWBOT} {mode}")


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
