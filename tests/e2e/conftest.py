"""Shared pieces of the end-to-end tests: a real referee server on loopback, real bot
processes, bounded in time."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from pathlib import Path

from referee.bots.launcher import BotSpec, parse_spec

RAWBOT = Path(__file__).resolve().parent.parent / "bots" / "rawbot.py"
NODE_BOT = Path(__file__).resolve().parents[2] / "example_bots" / "node" / "bot.js"


def rawbot(mode: str) -> BotSpec:
    """A raw-wire bot process in the given mode (see tests/bots/rawbot.py)."""
    return parse_spec(f"cmd:{sys.executable} {RAWBOT} {mode}")


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def node_bot_problem() -> str | None:
    """None when the Node.js example bot can run here (node, and its npm packages installed by
    `make node-bot`), else what is missing."""
    node = shutil.which("node")
    if node is None:
        return "node is not on PATH (Debian: apt-get install nodejs npm)"
    try:
        probe = subprocess.run(
            [node, "-e", "require('@grpc/grpc-js'); require('@grpc/proto-loader')"],
            cwd=NODE_BOT.parent,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"node could not be run: {exc}"
    if probe.returncode != 0:
        lines = probe.stderr.strip().splitlines()
        said = next((line for line in lines if "Error" in line), f"exit code {probe.returncode}")
        return f"the Node bot's npm packages are not installed (`make node-bot`): {said}"
    return None
