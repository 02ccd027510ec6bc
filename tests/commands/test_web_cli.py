"""`arena web` refuses what it cannot serve in one line, exit code 2, before it listens."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
from pathlib import Path

import pytest

from tests.tournaments.web.harness import arena


def refused(*args: str | Path) -> str:
    shown = arena("web", *args)
    assert shown.returncode == 2, (shown.stdout, shown.stderr)
    assert shown.stdout == "" and "Traceback" not in shown.stderr
    lines = shown.stderr.strip().splitlines()
    assert len(lines) == 1, shown.stderr
    return lines[0]


def test_what_is_not_a_tournament_is_refused(tmp_path: Path) -> None:
    assert refused(tmp_path / "nowhere") == (
        f"error: {tmp_path / 'nowhere'} holds no tournament (no tournament.sqlite in it)"
    )
    assert (
        refused(tmp_path) == f"error: {tmp_path} holds no tournament (no tournament.sqlite in it)"
    )
    (tmp_path / "tournament.sqlite").write_text("not a database")
    assert refused(tmp_path) == (
        f"error: {tmp_path / 'tournament.sqlite'} is not a tournament database: file is not a "
        "database"
    )


def test_bad_options_are_refused(tournament: Path) -> None:
    assert refused(tournament, "--as", "seat") == "error: --as takes public or referee, not 'seat'"
    for host in ("0.0.0.0", "192.0.2.1"):
        assert refused(tournament, "--as", "referee", "--host", host) == (
            f"error: --as referee shows every hidden card: serve it on 127.0.0.1, not {host} "
            "(or use --as public)"
        )


def test_a_port_in_use_is_refused(tournament: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert refused(tournament, "--port", str(port)) == (
            f"error: cannot listen on 127.0.0.1:{port}: Address already in use"
        )


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1"])
def test_loopback_hosts_may_serve_the_referee_view(host: str) -> None:
    from tournaments.web.access import Access, check_host

    check_host(Access.REFEREE, host)


def test_a_configuration_this_arena_refuses_is_one_line(tournament: Path, tmp_path: Path) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(tournament, folder)
    with sqlite3.connect(folder / "tournament.sqlite") as db:
        [(saved,)] = db.execute("SELECT value FROM meta WHERE key = 'config'").fetchall()
        raw = json.loads(saved)
        raw["format"]["seats"] = 5
        db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(raw),))
    said = refused(folder)
    assert said.startswith(f"error: {folder / 'tournament.sqlite'} holds a configuration this ")
    assert said.endswith(
        "refuses: format.round-robin.seats: Input should be less than or equal to 4"
    )
