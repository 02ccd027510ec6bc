"""A live ladder run as an operator runs it: `arena ladder serve` in its own process, with real
bot processes and a real referee, while other processes add, update, pause and retire bots, a
remote bot connects and disconnects, a bad bot gets paused, and serve is killed with SIGKILL and
started again."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from referee.bots.launcher import parse_spec
from tournaments.ladder.matchmaker import rate
from tournaments.read_models.ladder_reads import LadderApi

ARENA = [sys.executable, "-m", "tournaments.cli.arena_app"]
SLEEPY = Path(__file__).resolve().parents[2] / "bots" / "sleepy_bot.py"
WAIT_S = 90.0  # a bound for each wait on a loaded machine, not a measure of speed


def arena(*args: str) -> str:
    done = subprocess.run([*ARENA, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def rows(folder: Path, sql: str, *args: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(f"file:{folder / 'ladder.sqlite'}?mode=ro", uri=True) as db:
        return db.execute(sql, args).fetchall()


def finished(folder: Path, version: str | None = None) -> int:
    sql = "SELECT COUNT(*) FROM matches WHERE status = 'finished'"
    if version is None:
        return int(str(rows(folder, sql)[0][0]))
    return int(str(rows(folder, sql + " AND instr(bots, ?) > 0", json.dumps(version))[0][0]))


def wait_for(what: str, check: Callable[[], bool], serve: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert serve.poll() is None, f"serve ended (code {serve.returncode}) before {what}"
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {WAIT_S:g} s")
        time.sleep(0.2)


def make_ladder(folder: Path, **run: object) -> None:
    arena("ladder", "init", str(folder), "--game", "opposing-force", "--listen", "127.0.0.1:0")
    path = folder / "ladder.toml"
    text = path.read_text()
    text = text.replace('address = "127.0.0.1:8061"', 'address = "127.0.0.1:0"')  # the page
    text = text.replace("provisional_matches = 10", "provisional_matches = 4")
    text = text.replace("window = 10\nmax_failures = 4", "window = 4\nmax_failures = 2")
    for key in run:
        text = re.sub(rf"^{key} = .*\n", "", text, flags=re.MULTILINE)
    extra = "".join(f"{key} = {json.dumps(value)}\n" for key, value in run.items())
    path.write_text(text.replace("[run]\n", f"[run]\nconnect_timeout_s = 10\n{extra}"))


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[Callable[[Path], subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []

    def serve(folder: Path) -> subprocess.Popen[bytes]:
        out = (folder / "serve.out").open("ab")
        process = subprocess.Popen([*ARENA, "ladder", "serve", str(folder)], stdout=out, stderr=out)
        started.append(process)
        return process

    yield serve
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(30)


def stop(serve: subprocess.Popen[bytes]) -> int:
    serve.send_signal(signal.SIGTERM)
    return serve.wait(60)


@pytest.mark.timeout(400)
def test_bots_come_and_go_while_it_runs(
    tmp_path: Path, serving: Callable[[Path], subprocess.Popen[bytes]]
) -> None:
    folder = tmp_path / "ladder"
    make_ladder(folder, rejoin_grace_s=1)
    arena("ladder", "add", str(folder), "--name", "a", "--spec", "example:random")
    arena("ladder", "add", str(folder), "--name", "b", "--spec", "example:first")
    serve = serving(folder)
    wait_for("first matches", lambda: finished(folder) >= 4, serve)

    # A bot added while it runs is provisional, so it is seated first.
    arena("ladder", "add", str(folder), "--name", "c", "--spec", "example:random")
    wait_for("matches of c", lambda: finished(folder, "c@1") >= 4, serve)

    # An update: the new version plays; the old one's matches and rating stay.
    arena("ladder", "update", str(folder), "--name", "a", "--spec", "example:opposing-force")
    wait_for("matches of a@2", lambda: finished(folder, "a@2") >= 2, serve)
    old = rows(folder, "SELECT matches, mu FROM versions WHERE key = 'a@1'")[0]
    assert int(str(old[0])) == finished(folder, "a@1") > 0

    # Retired: it plays no more (with three bots at two seats it would sit at most tables).
    arena("ladder", "retire", str(folder), "--name", "b")
    time.sleep(1.5)  # a tick for serve to see it; its tables in flight may still finish
    since = finished(folder)
    wait_for("matches after b retired", lambda: finished(folder) >= since + 6, serve)
    last = rows(folder, "SELECT bots FROM matches WHERE status = 'finished' ORDER BY rated")
    assert all("b@1" not in json.loads(str(bots)) for (bots,) in last[-4:])
    assert rows(folder, "SELECT matches, mu FROM versions WHERE key = 'a@1'")[0] == old

    # A bot whose process never joins forfeits every match and is paused, with the reason.
    arena("ladder", "add", str(folder), "--name", "bad", "--spec", "cmd:false")
    wait_for(
        "bad paused",
        lambda: rows(folder, "SELECT status FROM bots WHERE name = 'bad'")[0][0] == "paused",
        serve,
    )
    listed = arena("ladder", "list", str(folder))
    assert "paused by the ladder" in listed and "no_show" in listed
    page = LadderApi(folder).bot_page("bad")
    assert page.forfeits and all(f.cause == "no_show" for f in page.forfeits)

    remote_bot_connects_and_disconnects(folder, serve)
    assert stop(serve) == 0


def remote_bot_connects_and_disconnects(folder: Path, serve: subprocess.Popen[bytes]) -> None:
    out = arena("ladder", "add", str(folder), "--name", "far", "--remote")
    token = out.split("ARENA_TOKEN=")[1].split()[0]
    address = str(rows(folder, "SELECT value FROM meta WHERE key = 'referee_address'")[0][0])
    time.sleep(2)
    assert finished(folder, "far@1") == 0  # not connected: never seated

    def connect() -> subprocess.Popen[bytes]:
        env = {**os.environ, "ARENA_ADDRESS": address, "ARENA_TOKEN": token}
        argv = parse_spec("example:random").argv
        return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def connected() -> bool:
        return rows(folder, "SELECT connected FROM bots WHERE name = 'far'")[0][0] == 1

    bot = connect()
    try:
        wait_for("the remote bot's matches", lambda: finished(folder, "far@1") >= 3, serve)
        assert connected()
    finally:
        bot.kill()
        bot.wait(30)
    wait_for("the remote bot seen gone", lambda: not connected(), serve)
    time.sleep(2)  # its match in flight, if any, ends (a forfeit, after the rejoin grace)
    seated = rows(folder, "SELECT COUNT(*) FROM matches WHERE instr(bots, '\"far@1\"') > 0")
    since = finished(folder)
    wait_for("matches while it is away", lambda: finished(folder) >= since + 4, serve)
    assert rows(folder, "SELECT COUNT(*) FROM matches WHERE instr(bots, '\"far@1\"') > 0") == seated

    played = finished(folder, "far@1")
    bot = connect()  # back with the same secret: seated again
    try:
        wait_for("the remote bot back", lambda: finished(folder, "far@1") >= played + 2, serve)
    finally:
        bot.kill()
        bot.wait(30)


@pytest.mark.timeout(300)
def test_killed_and_started_again_loses_nothing_and_plays_nothing_twice(
    tmp_path: Path, serving: Callable[[Path], subprocess.Popen[bytes]]
) -> None:
    folder = tmp_path / "ladder"
    make_ladder(folder, concurrency=3)
    for name in ("s1", "s2", "s3"):
        arena("ladder", "add", str(folder), "--name", name, "--spec", str(SLEEPY))
    serve = serving(folder)
    query = "SELECT status FROM matches WHERE status = 'scheduled'"
    wait_for(
        "matches, some in flight",
        lambda: finished(folder) >= 6 and bool(rows(folder, query)),
        serve,
    )
    serve.kill()
    serve.wait(30)
    done = "SELECT match_id, deal, bots, ranks FROM matches WHERE status = 'finished'"
    numbered = "SELECT match_id, rated FROM matches WHERE rated IS NOT NULL"
    before, rated_before = rows(folder, done), rows(folder, numbered)
    cut = [r[0] for r in rows(folder, "SELECT match_id FROM matches WHERE status = 'scheduled'")]
    assert cut

    serve = serving(folder)
    wait_for("matches after the restart", lambda: finished(folder) >= len(before) + 6, serve)
    assert stop(serve) == 0

    after = rows(folder, done)
    assert set(before) <= set(after)  # nothing lost, nothing changed
    # A rating once made stays; a match of a deal cut in play is rated when its deal ends.
    assert set(rated_before) <= set(rows(folder, numbered))
    statuses = dict(rows(folder, "SELECT match_id, status FROM matches"))
    assert all(statuses[m] == "discarded" for m in cut)
    again = [m for m in statuses if "~" in m]
    assert again and {m.split("~")[0] for m in again} <= set(cut)
    # Nothing played twice: each deal in each seating finished once.
    seatings = [(deal, bots) for _, deal, bots, _ in after]
    assert len(seatings) == len(set(seatings))
    ratings_match_the_matches(folder)


def ratings_match_the_matches(folder: Path) -> None:
    """Each version's stored rating is the openskill update of exactly its rated matches, in
    the order they were rated: no match counted without its rating or twice; and every finished
    match is rated but those of a deal with a seating still scheduled (rated when it ends)."""
    unrated = rows(
        folder,
        "SELECT match_id FROM matches AS m WHERE status = 'finished' AND rated IS NULL AND NOT "
        "EXISTS (SELECT 1 FROM matches WHERE deal = m.deal AND status = 'scheduled')",
    )
    assert unrated == []
    current: dict[str, tuple[float, float]] = {}
    counts: dict[str, int] = {}
    for bots_json, ranks_json in rows(
        folder,
        "SELECT bots, ranks FROM matches WHERE status = 'finished' AND rated IS NOT NULL "
        "ORDER BY rated",
    ):
        bots = json.loads(str(bots_json))
        old = [current.get(key, (25.0, 25.0 / 3)) for key in bots]
        for key, new in zip(bots, rate(old, tuple(json.loads(str(ranks_json)))), strict=True):
            current[key] = new
            counts[key] = counts.get(key, 0) + 1
    for key, mu, sigma, matches in rows(folder, "SELECT key, mu, sigma, matches FROM versions"):
        assert matches == counts.get(str(key), 0)
        assert (mu, sigma) == pytest.approx(current.get(str(key), (25.0, 25.0 / 3)))
