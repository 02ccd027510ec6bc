"""How long a bot waits for its referee: $ARENA_JOIN_TIMEOUT_S sets it for a bot started by a
command, and a value that is not a positive number of seconds is refused by name."""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest
from arena_sdk.client import _join_timeout_from_env

from referee.bots.launcher import parse_spec


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_bot(timeout: str | None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARENA_ADDRESS": f"127.0.0.1:{closed_port()}", "ARENA_TOKEN": "t"}
    env.pop("ARENA_JOIN_TIMEOUT_S", None)
    if timeout is not None:
        env["ARENA_JOIN_TIMEOUT_S"] = timeout
    argv = parse_spec("example:random").argv
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.timeout(90)
def test_a_bot_gives_up_on_a_missing_referee_after_the_join_timeout() -> None:
    began = time.monotonic()
    done = start_bot("1.5")
    waited = time.monotonic() - began
    assert done.returncode == 2
    assert "could not reach the referee" in done.stderr and "within 1.5 s" in done.stderr
    assert 1.5 <= waited < 15, waited


@pytest.mark.parametrize("text", ["soon", "0", "-3", "nan", "inf"])
def test_a_join_timeout_that_is_not_a_positive_number_is_named(text: str) -> None:
    done = start_bot(text)
    assert done.returncode == 2
    assert f"ARENA_JOIN_TIMEOUT_S must be a positive number of seconds, not {text!r}" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_the_variable_a_bot_waits_30_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_JOIN_TIMEOUT_S", raising=False)
    assert _join_timeout_from_env() == 30.0
    monkeypatch.setenv("ARENA_JOIN_TIMEOUT_S", " 2.5 ")
    assert _join_timeout_from_env() == 2.5
