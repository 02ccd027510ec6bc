"""Tests referee.bots.sandbox (DIE_WITH_PARENT), referee.bots.sandbox_exec (--die-with-parent)
and referee.bots.memory_group (remove_stale).

A referee killed with SIGKILL cannot stop its bots. A real `arena ladder serve` plays with real
bots (tiers none and bubblewrap) and is killed with SIGKILL: every process it started (the
wrappers, bwrap, the bots) is gone within 2 s. The control is the same serve with the guard off
(sandbox.DIE_WITH_PARENT and MEMORY_GROUPS False, set in its own process before it starts: a
sweep of a dead referee's groups by another test's referee would end them too): its bots play
on.
A referee process of a few lines starts a bot as confine() says (tiers none and rlimits: the
latter needs root, and root's Python is closed to a bot's uid here, so no serve), with and
without the guard. What a bot forked is not its referee's child, and outlives it: at tier
rlimits it stays in the bot's memory group, whose name says which referee made it; the next
referee to make a group kills it, and leaves alone the groups of a referee that runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from referee.bots import memory_group
from referee.bots.memory_group import MemoryGroup
from referee.bots.sandbox import probe_bubblewrap
from tests.tournaments.web.ladder_harness import WAIT_S, finished, make_ladder, set_in_table

GONE_WITHIN_S = 2.0
# Unguarded: no parent-death signal, and no memory groups either, whose sweep by any other
# referee (another test's, on another worker) ends a dead referee's bots too: both are guards.
UNGUARDED = (
    "import sys; from referee.bots import sandbox; sandbox.DIE_WITH_PARENT = False; "
    "sandbox.MEMORY_GROUPS = False; "
    "from tournaments.cli.arena_app import main; sys.argv[0] = 'arena'; main()"
)
BWRAP_PROBLEM = probe_bubblewrap()
needs_bwrap = pytest.mark.skipif(
    BWRAP_PROBLEM is not None, reason=f"bubblewrap cannot run here: {BWRAP_PROBLEM}"
)
TIERS = ["none", pytest.param("bubblewrap", marks=needs_bwrap)]
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="bots have uids of their own as root")
needs_cgroup = pytest.mark.skipif(
    memory_group.memory_hierarchy() is None or os.geteuid() != 0,
    reason="no memory control group can be made here",
)
# A referee that starts one bot as confine() says, prints its pid and memory group, and waits.
# The bot forks a child, then becomes `sleep`.
REFEREE = """
import os, subprocess, sys, time
from referee.bots import sandbox
sandbox.DIE_WITH_PARENT = sys.argv[1] == "guarded"
sandbox.MEMORY_GROUPS = sys.argv[1] == "guarded"  # unguarded: no group for a sweep to end
box = sandbox.Sandbox(tier=sys.argv[2])
env = {"PATH": os.environ["PATH"], "ARENA_ADDRESS": "127.0.0.1:9"}
launch = sandbox.confine(box, ("sh", "-c", "sleep 300 & exec sleep 300"), env)
bot = subprocess.Popen(launch.argv, env=launch.env, start_new_session=True)
print(bot.pid, launch.memory.path if launch.memory else "", flush=True)
time.sleep(300)
"""


def alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "(gone)"


def parents() -> dict[int, int]:
    """Each running process's parent."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text(encoding="ascii", errors="replace").rpartition(")")[2].split()
        except OSError:
            continue
        found[int(stat.parent.name)] = int(fields[1])
    return found


def descendants(root: int) -> set[int]:
    """Every process started by root, or by one it started, and so on."""
    by_parent: dict[int, list[int]] = {}
    for pid, parent in parents().items():
        by_parent.setdefault(parent, []).append(pid)
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in by_parent.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


@contextmanager
def killed_serve(folder: Path, guarded: bool) -> Iterator[set[int]]:
    """`arena ladder serve` with its bots playing, then killed with SIGKILL; the processes it
    had started. Whatever of them is left at the end is killed (they are this test's)."""
    command = ["-m", "tournaments.cli.arena_app"] if guarded else ["-c", UNGUARDED]
    with (folder / "serve.out").open("ab") as out:
        serve = subprocess.Popen(
            [sys.executable, *command, "ladder", "serve", str(folder)], stdout=out, stderr=out
        )
    started: set[int] = set()
    try:
        deadline = time.monotonic() + WAIT_S
        while finished(folder) < 1 or len(descendants(serve.pid)) < 2:
            assert serve.poll() is None, (folder / "serve.out").read_text()
            assert time.monotonic() < deadline, (folder / "ladder.log").read_text()[-3000:]
            time.sleep(0.2)
        started = descendants(serve.pid)
        serve.kill()
        serve.wait(30)
        yield started
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait(30)
        for pid in started:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def ladder_at(folder: Path, tier: str) -> Path:
    make_ladder(folder, {"first": "example:random", "second": "example:random"})
    set_in_table(folder / "ladder.toml", "sandbox", {"tier": tier})
    return folder


def left_after(started: set[int], wait_s: float) -> set[int]:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and any(alive(pid) for pid in started):
        time.sleep(0.05)
    return {pid for pid in started if alive(pid)}


@pytest.mark.parametrize("tier", TIERS)
def test_a_killed_serves_bots_die_with_it(tmp_path: Path, tier: str) -> None:
    with killed_serve(ladder_at(tmp_path, tier), guarded=True) as started:
        left = left_after(started, GONE_WITHIN_S)
        assert left == set(), {pid: command_line(pid) for pid in left}


@pytest.mark.parametrize("tier", [pytest.param("bubblewrap", marks=needs_bwrap)])
def test_control_without_the_guard_the_bots_play_on(tmp_path: Path, tier: str) -> None:
    with killed_serve(ladder_at(tmp_path, tier), guarded=False) as started:
        assert left_after(started, GONE_WITHIN_S) != set()


@contextmanager
def killed_referee(tier: str, guarded: bool) -> Iterator[tuple[int, set[int], Path | None]]:
    """The REFEREE script's bot, once it forked its child and became `sleep`, and its referee
    killed with SIGKILL: (the bot's pid, its child's, its memory group). All are killed at the
    end (they are this test's), the group removed."""
    referee = subprocess.Popen(
        [sys.executable, "-c", REFEREE, "guarded" if guarded else "open", tier],
        stdout=subprocess.PIPE,
        text=True,
    )
    bot, children, group = 0, set(), None
    try:
        assert referee.stdout is not None
        pid, _, path = referee.stdout.readline().strip().partition(" ")
        bot, group = int(pid), Path(path) if path else None
        deadline = time.monotonic() + WAIT_S
        while not command_line(bot).startswith("sleep") or not descendants(bot):
            assert time.monotonic() < deadline, command_line(bot)
            time.sleep(0.05)
        children = descendants(bot)
        referee.kill()
        referee.wait(30)
        yield bot, children, group
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait(30)
        for pid in {bot, *children}:
            if pid and alive(pid):
                os.kill(pid, signal.SIGKILL)
        if group is not None and group.exists():
            MemoryGroup(group, 0).remove()


@pytest.mark.parametrize("tier", ["none", pytest.param("rlimits", marks=as_root)])
def test_a_killed_referees_bot_dies_with_it(tier: str) -> None:
    with killed_referee(tier, guarded=True) as (bot, _, _):
        assert left_after({bot}, GONE_WITHIN_S) == set()


@pytest.mark.parametrize("tier", ["none", pytest.param("rlimits", marks=as_root)])
def test_control_without_the_guard_the_bot_lives_on(tier: str) -> None:
    with killed_referee(tier, guarded=False) as (bot, _, _):
        assert left_after({bot}, GONE_WITHIN_S) == {bot}


@needs_cgroup
def test_the_next_referee_kills_what_a_killed_ones_bot_forked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with killed_referee("rlimits", guarded=True) as (bot, children, group):
        assert group is not None and left_after({bot}, GONE_WITHIN_S) == set()
        # The bot's child was not the referee's: it lives on, in the bot's group.
        assert children and all(alive(pid) for pid in children)
        assert set(MemoryGroup(group, 1).pids()) == children
        # Control: taken for a group of a referee that runs, it is left as it is.
        with monkeypatch.context() as patched:
            patched.setattr(memory_group, "orphaned", lambda name: False)
            memory_group.remove_stale(group.parent)
        assert all(alive(pid) for pid in children) and group.exists()
        memory_group.remove_stale(group.parent)  # what the next group made does first
        assert left_after(children, GONE_WITHIN_S) == set() and not group.exists()


@needs_cgroup
def test_the_groups_of_a_referee_that_runs_are_left_alone() -> None:
    """This process's own group, with a task in it, and an owner's name of a pid whose start
    time is another's (the pid reused): only the latter is the dead referee's."""
    parent, _ = memory_group.memory_hierarchy() or (Path(), 0)
    ours = parent / f"{memory_group.GROUP_PREFIX}{memory_group.owner_tag()}-test"
    pid, _, started = memory_group.owner_tag().partition(".")
    reused = parent / f"{memory_group.GROUP_PREFIX}{pid}.{int(started) + 1}-test"
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        for group in (ours, reused):
            group.mkdir()
        (ours / "cgroup.procs").write_text(str(sleeper.pid))
        memory_group.remove_stale(parent)
        assert ours.exists() and alive(sleeper.pid) and not reused.exists()
    finally:
        sleeper.kill()
        sleeper.wait(30)
        for group in (ours, reused):
            if group.exists():
                MemoryGroup(group, 0).remove()
