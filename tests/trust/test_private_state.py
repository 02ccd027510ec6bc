"""Tests referee.owner_only in `arena` (tournaments.cli) and the executors' processes.

A live ladder's and a running tournament's state is their owner's alone, from the first byte.

A real `arena ladder serve` and a real `arena tournament run` play their example bots in
bubblewrap (the tier `ladder init` and the example files write, which must still work with the
state private); meanwhile a bot at tier rlimits, which under a root referee is a uid of its own
with no mount namespace, tries to read the ladder's SQLite (the deal secret), its TOML (the
tokens), a replay, a bot's log, the ladder's log and the tournament's SQLite. With the umask
that `arena` sets at its start it is refused each one; the same runs with the umask left at the
usual 022 (the guard off) hand it the databases and logs, the deal secrets among them (the TOML
and the replays were written 0600 by their own code already: there the umask keeps their
folders closed too). The cores executor's referee processes and Dask's workers keep what they
write private even when whoever started them did not set the umask.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from referee.bots.launcher import parse_spec, start_bot, stop_bot
from referee.bots.sandbox import Sandbox, Tier, probe_bubblewrap
from tournaments.config import parse_config
from tournaments.run_progress import NoProgress
from tournaments.runner import run_tournament
from tournaments.store import Store

READER = Path(__file__).resolve().parent.parent / "bots" / "state_reader.sh"
WAIT_S = 90.0  # a bound on a loaded machine, not a measure of speed
BWRAP_PROBLEM = probe_bubblewrap()
pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="bots have uids of their own only under root"),
    pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=f"no bubblewrap here: {BWRAP_PROBLEM}"),
]


def arena_command(guarded: bool) -> list[str]:
    """`arena` as installed, or the same with its umask guard turned off (022, as before)."""
    if guarded:
        return [sys.executable, "-m", "tournaments.cli.arena_app"]
    unguarded = (
        "import referee.owner_only as guard; guard.PRIVATE_UMASK = 0o022; "
        "from tournaments.cli.arena_app import main; main()"
    )
    return [sys.executable, "-c", unguarded]


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder every user may enter (0755), outside /tmp: an organiser's folder that is open,
    so that only what arena creates in it decides what others read."""
    folder = Path(tempfile.mkdtemp(prefix="arena-private-state-", dir="/var/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def running() -> Iterator[Callable[[list[str], Path], subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []

    def run(argv: list[str], out: Path) -> subprocess.Popen[bytes]:
        with out.open("ab") as sink:
            process = subprocess.Popen(argv, stdout=sink, stderr=sink, stdin=subprocess.DEVNULL)
        started.append(process)
        return process

    yield run
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(30)


def arena(arena_argv: list[str], *args: str) -> None:
    done = subprocess.run([*arena_argv, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def count(db: Path, sql: str) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
            return int(connection.execute(sql).fetchone()[0])
    except sqlite3.Error:
        return 0  # not made yet


def secret_of(db: Path) -> str:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        return str(
            connection.execute("SELECT value FROM meta WHERE key = 'deal_secret'").fetchone()[0]
        )


def wait_until(what: str, ready: Callable[[], bool], *processes: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not ready():
        for process in processes:
            assert process.poll() is None, f"{process.args} ended before {what}"
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {WAIT_S:g} s")
        time.sleep(0.2)


def make_ladder(arena_argv: list[str], folder: Path) -> None:
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    arena(
        arena_argv,
        "ladder",
        "init",
        str(folder),
        "--game",
        "opposing-force",
        "--listen",
        "127.0.0.1:0",
    )
    toml = folder / "ladder.toml"
    text = toml.read_text(encoding="utf-8")
    assert 'tier = "bubblewrap"' in text  # what init writes
    toml.write_text(text.replace('address = "127.0.0.1:8061"', 'address = "127.0.0.1:0"'))
    for name, spec in (("a", "example:random"), ("b", "example:first")):
        arena(arena_argv, "ladder", "add", str(folder), "--name", name, "--spec", spec)


def make_tournament(folder: Path) -> Path:
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    toml = folder / "cup.toml"
    toml.write_text(
        'name = "cup"\ngame = "opposing-force"\noutput = "run"\n'
        '[[bots]]\nspec = "example:random"\n[[bots]]\nspec = "example:first"\n'
        '[format]\nkind = "round-robin"\ngames_per_pairing = 1000\n'
        '[sandbox]\ntier = "bubblewrap"\n',
        encoding="utf-8",
    )
    return toml


def first(folder: Path, pattern: str) -> Path:
    found = sorted(p for p in folder.rglob(pattern) if p.is_file())
    assert found, f"no {pattern} under {folder}"
    return found[0]


def attack(targets: dict[str, Path], log: Path) -> dict[str, str]:
    """The reader bot at tier rlimits (its own uid): what it could read, by name."""
    pairs = " ".join(f"{name}={path}" for name, path in targets.items())
    bot = parse_spec(f"cmd:/bin/sh {READER} {pairs}")

    async def run() -> None:
        process = await start_bot(bot, "127.0.0.1:9", "t", log, Sandbox(tier=Tier.RLIMITS))
        await stop_bot(process, grace_s=20)

    asyncio.run(run())
    said = {}
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("reader: "):
            name, _, outcome = line.removeprefix("reader: ").partition(": ")
            said[name] = outcome
    return said


def play_and_attack(
    root: Path, guarded: bool, run: Callable[[list[str], Path], subprocess.Popen[bytes]]
) -> tuple[dict[str, str], str, list[str]]:
    """A ladder and a tournament running, each made and run by arena with or without its
    guard: what the reader read, all it printed, and the two deal secrets."""
    arena_argv = arena_command(guarded)
    ladder, cup = root / "ladder", root / "cup"
    make_ladder(arena_argv, ladder)
    toml = make_tournament(cup)
    serve = run([*arena_argv, "ladder", "serve", str(ladder)], root / "serve.out")
    tournament = run(
        [*arena_argv, "tournament", "run", str(toml), "--no-progress"], root / "cup.out"
    )
    finished = "SELECT COUNT(*) FROM matches WHERE status = 'finished'"
    wait_until("ladder matches", lambda: count(ladder / "ladder.sqlite", finished) >= 2, serve)
    played = "SELECT COUNT(*) FROM matches WHERE finished_at IS NOT NULL"
    state = cup / "run" / "tournament.sqlite"
    wait_until("tournament matches", lambda: count(state, played) >= 2, tournament)
    targets = {
        "ladder.sqlite": ladder / "ladder.sqlite",
        "ladder.toml": ladder / "ladder.toml",
        "replay": first(ladder / "replays", "*.json*"),
        "bot-log": first(ladder / "logs", "*.log"),
        "ladder.log": ladder / "ladder.log",
        "tournament.sqlite": state,
        "tournament-replay": first(cup / "run" / "replays", "*.json*"),
    }
    for wal in (ladder / "ladder.sqlite-wal", cup / "run" / "tournament.sqlite-wal"):
        if wal.exists():  # the secret may not be checkpointed into the database yet
            targets[wal.name] = wal
    # The bots in bubblewrap play with the state private: no match lost to a forfeit.
    forfeited = "SELECT COUNT(*) FROM matches WHERE forfeits IS NOT NULL AND forfeits != '[]'"
    assert count(ladder / "ladder.sqlite", forfeited) == 0
    assert count(state, forfeited) == 0
    said = attack(targets, root / "reader.log")
    printed = (root / "reader.log").read_text(encoding="utf-8", errors="replace")
    secrets = [secret_of(ladder / "ladder.sqlite"), secret_of(state)]
    assert serve.poll() is None and tournament.poll() is None  # both still running
    return said, printed, secrets


@pytest.mark.timeout(300)
def test_a_bot_at_tier_rlimits_reads_no_state_of_a_running_ladder_or_tournament(
    shared: Path, running: Callable[[list[str], Path], subprocess.Popen[bytes]]
) -> None:
    (shared / "guarded").mkdir(mode=0o755)
    (shared / "guarded").chmod(0o755)
    said, printed, secrets = play_and_attack(shared / "guarded", True, running)
    assert len(said) >= 7
    assert all(outcome == "refused" for outcome in said.values()), said
    assert not any(secret in printed for secret in secrets)
    ladder = shared / "guarded" / "ladder"
    for made in (ladder / "ladder.sqlite", ladder / "replays", ladder / "logs"):
        assert made.stat().st_mode & 0o077 == 0, oct(made.stat().st_mode)


@pytest.mark.timeout(300)
def test_without_the_umask_the_same_bot_reads_the_deal_secrets(
    shared: Path, running: Callable[[list[str], Path], subprocess.Popen[bytes]]
) -> None:
    """The control: the same runs with arena's umask guard off."""
    (shared / "open").mkdir(mode=0o755)
    (shared / "open").chmod(0o755)
    said, printed, secrets = play_and_attack(shared / "open", False, running)
    # Written 0600 by their own open() and mkstemp() all along: not the umask's doing.
    for own_mode in ("ladder.toml", "replay", "tournament-replay"):
        assert said.pop(own_mode) == "refused", own_mode
    assert all(outcome == "read" for outcome in said.values()), said
    assert all(secret in printed for secret in secrets)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("executor", ["cores", "dask"])
def test_referee_processes_keep_their_files_private_whoever_starts_them(
    tmp_path: Path, executor: str
) -> None:
    """A cores executor's referee processes and Dask's workers set the umask themselves: here
    the tournament runs in this process, which never set it (022), as library code might.
    The bot logs those processes write come out 0600; the state this process writes itself,
    with no guard of its own, 0644 (the control)."""
    workers = {"processes": 1} if executor == "cores" else {"dask_workers": 1}
    config = parse_config(
        {
            "name": "private",
            "game": "opposing-force",
            "bots": [{"spec": "example:random"}, {"spec": "example:first"}],
            "format": {"kind": "round-robin", "games_per_pairing": 2},
            "run": {"executor": executor, "concurrency": 1, **workers},
        }
    )
    previous = os.umask(0o022)
    try:
        store = Store.create(tmp_path, config)
        try:
            quiet = NoProgress()
            summary = run_tournament(tmp_path, store, quiet)
        finally:
            store.close()
    finally:
        os.umask(previous)
    assert summary.state == "finished"
    logs = [p for p in (tmp_path / "logs").rglob("*.log") if p.name != "tournament.log"]
    assert logs
    for log in logs:
        assert stat.S_IMODE(log.stat().st_mode) == 0o600, (log, oct(log.stat().st_mode))
    assert stat.S_IMODE((tmp_path / "tournament.sqlite").stat().st_mode) == 0o644
