"""A live ladder for the web tests: `arena ladder init` with the page on a port the system picks,
bots added with `arena ladder add`, and `arena ladder serve` in its own process, whose printed
line names the page's address."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.tournaments.web.harness import arena

ARENA = [sys.executable, "-m", "tournaments.cli.arena_app"]
WAIT_S = 90.0  # a bound for each wait on a loaded machine, not a measure of speed


def make_ladder(folder: Path, bots: dict[str, str], **settings: object) -> dict[str, str]:
    """A two-seat Opposing Force ladder with these bots (name -> SPEC); settings replace the
    TOML's keys of that name (concurrency, decision_ms, ...), or are added to [run]. Its
    tokens."""
    made = arena("ladder", "init", folder, "--game", "opposing-force", "--listen", "127.0.0.1:0")
    assert made.returncode == 0, made.stderr
    path = folder / "ladder.toml"
    text = path.read_text().replace('address = "127.0.0.1:8061"', 'address = "127.0.0.1:0"')
    text = text.replace("[run]\n", "[run]\nconnect_timeout_s = 20\n")
    for key, value in settings.items():
        line = f"{key} = {json.dumps(value)}"
        text, found = re.subn(rf"^{key} = .*$", line, text, flags=re.M)
        if not found:  # a key the first file leaves to its default: [run]'s
            text = text.replace("[run]\n", f"[run]\n{line}\n")
    path.write_text(text)
    for name, spec in bots.items():
        added = arena("ladder", "add", folder, "--name", name, "--spec", spec)
        assert added.returncode == 0, added.stderr
    tokens = tomllib.loads(text)["tokens"]
    return {"operator": tokens["operator"], "ladder": tokens["ladder"]}


def set_in_table(path: Path, table: str, settings: dict[str, object]) -> None:
    """Set these keys of [table] in the TOML file at path, as `ladder init` wrote it: a key
    it wrote (commented out or not) is replaced where it stands, another added to the table."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.split("#")[0].strip() == f"[{table}]")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    for key, value in settings.items():
        line = f"{key} = {json.dumps(value)}"
        found = [i for i in range(start + 1, end) if re.match(rf"(# )?{key} = ", lines[i])]
        if found:
            lines[found[0]] = line
        else:
            lines.insert(start + 1, line)
            end += 1
    path.write_text("\n".join(lines) + "\n")


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    url: str  # the page's, without the trailing slash
    output: Path

    def wait_for(self, what: str, check: Callable[[], bool], wait_s: float = WAIT_S) -> None:
        deadline = time.monotonic() + wait_s
        while not check():
            assert self.process.poll() is None, f"serve ended before {what}: {self.said()}"
            if time.monotonic() > deadline:
                pytest.fail(f"no {what} within {wait_s:g} s")
            time.sleep(0.2)

    def said(self) -> str:
        return self.output.read_text(errors="replace")


@contextmanager
def serving(folder: Path) -> Iterator[Served]:
    """`arena ladder serve FOLDER` until the end, stopped with SIGTERM: exit code 0."""
    output = folder / "serve.out"
    with output.open("ab") as out:
        process = subprocess.Popen([*ARENA, "ladder", "serve", str(folder)], stdout=out, stderr=out)
    served = Served(process, "", output)
    stopped = False
    try:
        served.wait_for("the page's address", lambda: "its page is at http" in served.said())
        found = re.search(r"its page is at (http://127\.0\.0\.1:\d+)/", served.said())
        assert found, served.said()
        served.url = found.group(1)
        yield served
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0, served.said()
        stopped = True
    finally:
        if not stopped and process.poll() is None:
            process.kill()
            process.wait(30)


def count(folder: Path, sql: str, *args: object) -> int:
    with sqlite3.connect(f"file:{folder / 'ladder.sqlite'}?mode=ro", uri=True) as db:
        return int(db.execute(sql, args).fetchone()[0])


def finished(folder: Path, version: str | None = None) -> int:
    sql = "SELECT COUNT(*) FROM matches WHERE status = 'finished'"
    if version is None:
        return count(folder, sql)
    return count(folder, sql + " AND instr(bots, ?) > 0", json.dumps(version))


def seated(folder: Path, version: str) -> int:
    """Matches the version was ever scheduled in (finished, in flight or discarded)."""
    return count(
        folder, "SELECT COUNT(*) FROM matches WHERE instr(bots, ?) > 0", json.dumps(version)
    )
