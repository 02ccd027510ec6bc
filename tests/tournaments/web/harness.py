"""The tournament server as its users meet it: `arena web` in its own process on 127.0.0.1 (a
port the system picks), asked over HTTP; and the command line's standings, read back from its
tables, for the tests to hold the server's numbers against."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ARENA = [sys.executable, "-m", "tournaments.cli.arena_app"]
BOTS = Path(__file__).resolve().parents[2] / "bots"


def arena(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    # Wide enough that rich never folds a cell of the standings.
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run(
        [*ARENA, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env
    )


@contextmanager
def web_server(folder: Path, *options: str) -> Iterator[str]:
    """`arena web FOLDER --port 0 OPTIONS`; yields its base URL (no trailing slash). Stopped
    with Ctrl-C at the end, which must end it cleanly: exit 130, nothing on stderr."""
    process = subprocess.Popen(
        [*ARENA, "web", str(folder), "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    failed = True
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # printed once the port is bound
        found = re.search(r"at (http://127\.0\.0\.1:\d+)/ ", line)
        assert found, (line, process.communicate(timeout=30))
        yield found.group(1)
        failed = False
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    if not failed:
        assert process.returncode == 130, stderr
        assert stderr.strip() == "", stderr


def get(url: str) -> tuple[int, str, str]:
    """(status, content type, body) of a GET, errors included."""
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.headers["content-type"], answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["content-type"], error.read().decode()


def get_json(url: str) -> tuple[int, Any]:
    status, kind, body = get(url)
    assert kind == "application/json", (status, kind, body)
    return status, json.loads(body)


def cli_tables(folder: Path) -> dict[str, list[list[str]]]:
    """`arena tournament standings FOLDER`'s tables, by title ('results' for the first): each
    a header row, then a row per bot, every cell as printed."""
    shown = arena("tournament", "standings", folder)
    assert shown.returncode == 0, shown.stderr
    tables: dict[str, list[list[str]]] = {}
    title = ""
    for line in shown.stdout.splitlines():
        text = line.strip()
        if text and text[0] in "┃│":
            cells = [cell.strip() for cell in re.split(r"[┃│]", text)[1:-1]]
            tables.setdefault(title, []).append(cells)
        elif text and text[0] not in "┏┡└":
            title = "results" if not tables else text
    return tables
