"""How the SDK comes back to a referee that went away: a jittered, capped backoff, for as long as
--reconnect-for or $ARENA_RECONNECT_S says (a bad value is named in one line), and never for
what no retry mends: a referee whose TLS certificate its root does not sign gets an exit at
once, saying why. Real referees on 127.0.0.1 (TLS with openssl's certificates)."""

from __future__ import annotations

import asyncio
import os
import random
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest
from arena_sdk import client
from arena_sdk.client import ArenaError, backoff_s, run
from arena_sdk.launch import load_bot_class

from referee.bots.launcher import parse_spec
from referee.wire.server import RefereeServer, start_server
from tests.trust.test_tls import make_certificate


def test_the_backoff_doubles_is_capped_and_jittered() -> None:
    rng = random.Random(1)
    waits = [[backoff_s(attempt, 10.0, rng) for attempt in range(12)] for _ in range(50)]
    for attempt in range(12):
        drawn = [w[attempt] for w in waits]
        full = min(10.0, 0.2 * 2**attempt)
        assert all(full / 2 <= wait <= full for wait in drawn)
        assert len(set(drawn)) == len(drawn)  # bots cut off together do not knock together
    assert max(w[-1] for w in waits) <= 10.0


def bot_run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = {**os.environ, "ARENA_ADDRESS": f"127.0.0.1:{port}", "ARENA_TOKEN": "t"}
    base["ARENA_JOIN_TIMEOUT_S"] = "1"
    argv = [*parse_spec("example:random").argv, *args]
    return subprocess.run(argv, env={**base, **(env or {})}, capture_output=True, text=True)


@pytest.mark.parametrize("text", ["soon", "-1", "inf", "nan"])
def test_a_reconnect_time_that_is_not_a_number_of_seconds_is_named(text: str) -> None:
    by_env = bot_run(env={"ARENA_RECONNECT_S": text})
    assert by_env.returncode == 2 and "Traceback" not in by_env.stderr
    assert f"ARENA_RECONNECT_S must be a number of seconds, 0 or more, not {text!r}" in (
        by_env.stderr
    )
    by_flag = bot_run(f"--reconnect-for={text}")
    assert by_flag.returncode == 2 and "Traceback" not in by_flag.stderr
    assert f"--reconnect-for: not a number of seconds, 0 or more: {text!r}" in by_flag.stderr


def tls_referee_replaced(tmp_path: Path) -> tuple[str, float]:
    """An SDK bot joins a TLS referee; the referee goes away and another takes its port, with
    a certificate the bot's root does not sign. What the bot ended with, and how long after
    the first referee stopped."""
    cert, key = make_certificate(tmp_path, "first")
    other, other_key = make_certificate(tmp_path, "second")
    bot = load_bot_class("example_bots.random_bot:RandomBot")()

    async def scenario() -> tuple[str, float]:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            listen = f"127.0.0.1:{probe.getsockname()[1]}"
        first = await start_server(listen, tls_cert=cert, tls_key=key)
        session = first.lobby.register("far")
        session.rejoin_grace_s = 1.0
        playing = asyncio.create_task(
            asyncio.to_thread(
                run, bot, first.address, session.token, 10, cert, reconnect_s=6, keepalive_s=0
            )
        )
        second: RefereeServer | None = None
        try:
            await asyncio.wait_for(session.connected.wait(), 20)
            stopped = time.monotonic()  # before the stop: the bot may see the drop during it
            await first.stop()
            second = await start_server(listen, tls_cert=other, tls_key=other_key)
            with pytest.raises(ArenaError) as ended:
                await asyncio.wait_for(playing, 30)
            return str(ended.value), time.monotonic() - stopped
        finally:
            playing.cancel()
            if second is not None:
                await second.stop()

    return asyncio.run(scenario())


@pytest.mark.timeout(90)
def test_a_referee_back_with_a_certificate_the_root_does_not_sign_ends_the_bot_at_once(
    tmp_path: Path,
) -> None:
    said, after_s = tls_referee_replaced(tmp_path)
    assert said.startswith("the TLS handshake with the referee failed")
    assert "CERTIFICATE_VERIFY_FAILED" in said
    assert after_s < 4, after_s  # not the 6 s it would keep trying


@pytest.mark.timeout(90)
def test_control_a_tls_failure_not_recognised_is_tried_until_the_reconnect_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client, "_TLS_FAILURE", re.compile(r"(?!)"))  # the guard off
    said, after_s = tls_referee_replaced(tmp_path)
    assert "could not be joined again within 6 s" in said
    assert after_s >= 6
