"""A live ladder that stops and starts again, with a remote SDK bot: the bot is shown connected
only while its stream is open (never by a serve that has just started, nor after serve stopped),
and it keeps trying to come back, so that it plays again once serve is back. Real serve
processes, a real remote bot process, 127.0.0.1 only."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from referee.bots.launcher import parse_spec
from tests.tournaments.web.harness import arena
from tests.tournaments.web.ladder_harness import Served, count, finished, make_ladder
from tournaments.read_models.ladder_reads import LadderApi

# The guard off: serve leaves the connected flags as it found them when it starts and stops.
UNGUARDED = (
    "import tournaments.ladder.service as s; s.LadderService._disconnect_all = lambda self: None; "
)


GRACE_S = 2.0  # the ladder's rejoin grace: a bot away longer must reconnect to a new session


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(folder: Path, patch: str = "") -> Iterator[Served]:
    """`arena ladder serve FOLDER`, its code patched first by the Python in patch; stopped
    with SIGTERM at the end."""
    output = folder / "serve.out"
    output.write_bytes(b"")
    code = f"{patch}from tournaments.cli.arena_app import main; main()"
    with output.open("ab") as out:
        argv = [sys.executable, "-c", code, "ladder", "serve", str(folder)]
        process = subprocess.Popen(argv, stdout=out, stderr=out)
    served = Served(process, "", output)
    try:
        served.wait_for("the page's address", lambda: "its page is at http" in served.said())
        found = re.search(r"its page is at (http://127\.0\.0\.1:\d+)/", served.said())
        assert found, served.said()
        served.url = found.group(1)
        # No wait for its first tick, which registers the remote bots' sessions: a bot that
        # knocks before it is told to come back (Lobby.opening), and does.
        yield served
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0, served.said()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)


def remote_bot(ticket: str, reconnect_for: str, log: Path) -> subprocess.Popen[bytes]:
    """The SDK's random bot, run by its author with the ticket `ladder add --remote` printed."""
    address = ticket.split("ARENA_ADDRESS=")[1].split()[0]
    token = ticket.split("ARENA_TOKEN=")[1].split()[0]
    env = {**os.environ, "ARENA_ADDRESS": address, "ARENA_TOKEN": token}
    for name in ("ARENA_RECONNECT_S", "ARENA_KEEPALIVE_S", "ARENA_ROOT_CERT"):
        env.pop(name, None)
    argv = [*parse_spec("example:random").argv, "--reconnect-for", reconnect_for]
    with log.open("ab") as out:
        return subprocess.Popen(argv, env=env, stdout=out, stderr=out)


def connected_now(folder: Path) -> bool:
    return count(folder, "SELECT COUNT(*) FROM bots WHERE name = 'far' AND connected = 1") == 1


def shown_connected(folder: Path, served: Served | None) -> tuple[bool, bool, bool]:
    """Whether `ladder list`, the page's API (when serve runs) and the API class show the
    remote bot connected."""
    listed = arena("ladder", "list", folder)
    assert listed.returncode == 0, listed.stderr
    api = None
    if served is not None:
        with urllib.request.urlopen(f"{served.url}/api/bots/far", timeout=30) as answer:
            api = bool(json.load(answer)["connected"])
    return (
        "remote, connected" in listed.stdout,
        bool(api),
        LadderApi(folder).bot_page("far").connected,
    )


def ladder_with_a_remote_bot(tmp_path: Path) -> tuple[Path, str]:
    folder = tmp_path / "ladder"
    make_ladder(
        folder,
        {"a": "example:random"},
        listen=f"127.0.0.1:{free_port()}",
        rejoin_grace_s=GRACE_S,
    )
    added = arena("ladder", "add", folder, "--name", "far", "--remote")
    assert added.returncode == 0, added.stderr
    return folder, added.stdout


def stopped_with_the_bot_connected(folder: Path, ticket: str, patch: str, log: Path) -> None:
    """Serve runs until the remote bot (which does not try to reconnect) has played, then
    stops; the bot is then not running."""
    with serving(folder, patch) as served:
        bot = remote_bot(ticket, "0", log)
        try:
            served.wait_for("the remote bot's matches", lambda: finished(folder, "far@1") >= 2)
            assert connected_now(folder)
        except BaseException:
            bot.kill()
            raise
    bot.wait(60)


@pytest.mark.timeout(240)
def test_a_remote_bot_that_is_not_running_is_not_shown_connected_after_a_restart(
    tmp_path: Path,
) -> None:
    folder, ticket = ladder_with_a_remote_bot(tmp_path)
    stopped_with_the_bot_connected(folder, ticket, "", tmp_path / "bot.log")
    assert not connected_now(folder)  # cleared when serve stopped
    assert shown_connected(folder, None) == (False, False, False)
    with serving(folder) as served:
        time.sleep(1.5)  # a few ticks
        assert shown_connected(folder, served) == (False, False, False)


@pytest.mark.timeout(240)
def test_control_unguarded_a_restarted_ladder_shows_a_bot_that_is_gone_connected(
    tmp_path: Path,
) -> None:
    folder, ticket = ladder_with_a_remote_bot(tmp_path)
    stopped_with_the_bot_connected(folder, ticket, UNGUARDED, tmp_path / "bot.log")
    assert connected_now(folder)
    with serving(folder, UNGUARDED) as served:
        time.sleep(1.5)
        assert shown_connected(folder, served) == (True, True, True)


def stop_and_start_again(tmp_path: Path, reconnect_for: str) -> tuple[int | None, int, str]:
    """A remote bot plays, serve stops and starts again: the bot's exit code while serve was
    away (None: still running), the bot's matches after serve came back, what it said."""
    folder, ticket = ladder_with_a_remote_bot(tmp_path)
    log = tmp_path / "bot.log"
    bot: subprocess.Popen[bytes] | None = None
    try:
        with serving(folder) as served:
            bot = remote_bot(ticket, reconnect_for, log)
            served.wait_for("the remote bot's matches", lambda: finished(folder, "far@1") >= 2)
        before = finished(folder, "far@1")
        time.sleep(GRACE_S + 3)  # past the rejoin grace: only a reconnect comes back
        away = bot.poll()
        with serving(folder) as served:
            if away is None:
                wanted = before + 2
                served.wait_for("the bot back", lambda: finished(folder, "far@1") >= wanted)
            else:
                time.sleep(3)
        return away, finished(folder, "far@1") - before, log.read_text(errors="replace")
    finally:
        if bot is not None:
            bot.kill()
            bot.wait(30)


@pytest.mark.timeout(300)
def test_a_remote_sdk_bot_comes_back_when_the_ladder_stops_and_starts_again(
    tmp_path: Path,
) -> None:
    away, played, said = stop_and_start_again(tmp_path, "120")
    assert away is None, said
    assert played >= 2
    assert "joining again" in said


@pytest.mark.timeout(300)
def test_control_with_no_reconnect_time_the_bot_exits_when_the_ladder_stops(
    tmp_path: Path,
) -> None:
    away, played, said = stop_and_start_again(tmp_path, "0")
    assert away == 2 and played == 0
    assert f"could not be joined again within {GRACE_S:g} s" in said
