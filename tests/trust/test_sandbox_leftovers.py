"""Tests referee.bots.uid_sweep, referee.bots.memory_group and referee.bots.sandbox.

What a bot leaves behind, and what its process tree takes, under a root referee.

At tier rlimits a bot is a uid of its own without namespaces: a child it puts in a session of
its own (setsid) and that ignores SIGTERM outlives its process group, and the files it writes
to /tmp and /dev/shm outlive it. When the bot is stopped, every process and every such file of
its uid goes, and its TMPDIR was a folder of its own, 0700. In bubblewrap /tmp and /dev/shm are
tmpfs of the sandbox's own: a second bot sees nothing of the first's, where at tier none it
does. A bot whose three children each take memory within the per-process limit is killed whole
(its seat forfeits) once the tree passes memory_mb; and a bot in bubblewrap cannot make a user
namespace. Each guard is also turned off, and the same bot then gets its way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_games import get_game
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings

from referee.bots import memory_group, sandbox
from referee.bots.launcher import parse_spec, start_bot, stop_bot
from referee.bots.sandbox import Sandbox, Tier, private_socket, probe_bubblewrap
from referee.hosting.series import SeriesPlan, run_series

BOTS = Path(__file__).resolve().parent.parent / "bots"
LEFTOVER_BOT = BOTS / "leftover_bot.sh"
USERNS_BOT = BOTS / "userns_bot.sh"
MEMORY_BOT = BOTS / "memory_tree_bot.py"
BWRAP_PROBLEM = probe_bubblewrap()
needs_bwrap = pytest.mark.skipif(
    BWRAP_PROBLEM is not None, reason=f"bubblewrap cannot run here: {BWRAP_PROBLEM}"
)
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="bots have uids of their own only under a root referee"
)
needs_cgroup = pytest.mark.skipif(
    memory_group.memory_hierarchy() is None, reason="no memory control group can be made here"
)


def lines(log: Path | list[Path], prefix: str) -> dict[str, str]:
    found = {}
    texts = [
        path.read_text(encoding="utf-8", errors="replace")
        for path in ([log] if isinstance(log, Path) else log)
    ]
    for line in "".join(texts).splitlines():
        if line.startswith(prefix):
            name, _, what = line.removeprefix(prefix).partition(": ")
            found[name] = what
    return found


def alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


async def run_alone(spec: str, box: Sandbox, log: Path) -> None:
    """Start a bot that never joins and stop it as a pool does when it ends."""
    with contextlib.ExitStack() as stack:
        address = "127.0.0.1:9"
        path = private_socket(box)
        if path is not None:  # a bot without network needs the referee's socket to exist
            listener = stack.enter_context(socket.socket(socket.AF_UNIX))
            listener.bind(str(path))
            stack.callback(shutil.rmtree, path.parent, True)
            address = f"unix:{path}"
        process = await start_bot(parse_spec(spec), address, "token", log, box)
        await stop_bot(process, grace_s=10)


@pytest.fixture
def orphans() -> Iterator[list[int]]:
    """Pids a control leaves running: killed by their id at the end."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def leftover(tag: str) -> str:
    return f"cmd:/bin/sh {LEFTOVER_BOT} {tag}"


def left_files(tag: str) -> list[Path]:
    return [p for p in (Path("/tmp"), Path("/dev/shm")) if (p / f"arena-left-{tag}").exists()]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("groups", [False, True], ids=["sweep-alone", "with-memory-group"])
def test_a_bot_at_tier_rlimits_leaves_no_process_and_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, groups: bool
) -> None:
    """Its memory group's removal ends the orphan too: the uid's sweep alone is tried, for a
    machine without control groups."""
    monkeypatch.setattr(sandbox, "MEMORY_GROUPS", groups)
    tag = f"rlimits-{os.getpid()}"
    asyncio.run(run_alone(leftover(tag), Sandbox(tier=Tier.RLIMITS), tmp_path / "bot.log"))
    said = lines(tmp_path / "bot.log", "leftover: ")
    uid = int(said["uid"])
    tmpdir, mode = said["tmpdir"].split()
    assert mode == f"700:{uid}"  # a TMPDIR of its own, closed to every other user
    assert said["wrote /tmp"] == said["wrote /dev/shm"] == "yes"  # the machine's shared ones
    orphan = int(said["orphan"])
    assert not alive(orphan)  # the setsid child that ignores SIGTERM: gone with the bot
    assert left_files(tag) == [] and not Path(tmpdir).exists()


@pytest.mark.timeout(60)
def test_without_the_sweep_the_orphan_and_the_files_stay(
    tmp_path: Path, orphans: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the same bot, with release() not sweeping its uid (nor removing a
    memory group, which would kill the orphan with the rest of the tree)."""
    monkeypatch.setattr(sandbox, "sweep", lambda uid, tmp: None)
    monkeypatch.setattr(sandbox, "MEMORY_GROUPS", False)
    tag = f"unswept-{os.getpid()}"
    asyncio.run(run_alone(leftover(tag), Sandbox(tier=Tier.RLIMITS), tmp_path / "bot.log"))
    said = lines(tmp_path / "bot.log", "leftover: ")
    orphans.append(int(said["orphan"]))
    try:
        assert alive(orphans[0])
        assert len(left_files(tag)) == 2
    finally:
        for place in left_files(tag):
            (place / f"arena-left-{tag}").unlink()
        shutil.rmtree(said["tmpdir"].split()[0], ignore_errors=True)


@needs_bwrap
@pytest.mark.timeout(60)
def test_bots_in_bubblewrap_each_have_their_own_tmp_and_dev_shm(tmp_path: Path) -> None:
    """A first bot writes to /tmp and /dev/shm, a second one looks: in bubblewrap each has
    tmpfs of its own and nothing reaches the host; at tier none (the control) the second
    finds the first's files."""
    box = Sandbox(tier=Tier.BUBBLEWRAP)
    tag = f"bwrap-{os.getpid()}"
    for n in (1, 2):
        asyncio.run(run_alone(leftover(f"{tag}-{n}"), box, tmp_path / f"jailed-{n}.log"))
    first, second = (lines(tmp_path / f"jailed-{n}.log", "leftover: ") for n in (1, 2))
    assert first["wrote /tmp"] == first["wrote /dev/shm"] == "yes"
    assert first["filesystems"] == "tmpfs tmpfs"
    assert second["found"].strip() == ""
    assert left_files(f"{tag}-1") == []
    try:
        for n in (1, 2):
            asyncio.run(run_alone(leftover(f"{tag}-{n}"), Sandbox(), tmp_path / f"free-{n}.log"))
        found = lines(tmp_path / "free-2.log", "leftover: ")["found"].split()
        assert found.count(f"arena-left-{tag}-1") == 2  # in /tmp and /dev/shm
    finally:
        for n in (1, 2):
            for place in left_files(f"{tag}-{n}"):
                (place / f"arena-left-{tag}-{n}").unlink()
    for orphan in (lines(tmp_path / f"free-{n}.log", "leftover: ")["orphan"] for n in (1, 2)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(orphan), signal.SIGKILL)  # tier none: the referee's own user, unswept


PATIENT = MatchSettings(decision_ms=30_000, time_bank_ms=0)
CHILDREN, CHILD_MB, LIMIT_MB = 3, 300, 512  # the tree takes 900 MB, each process 300


def play_memory_tree(replays: Path) -> tuple[list[str], dict[str, str]]:
    """The memory tree bot (seat 0) against the random bot in bubblewrap: each forfeit as
    "SEAT CAUSE: DETAIL", and what the bot said."""
    spec = f"cmd:{sys.executable} {MEMORY_BOT} {CHILDREN} {CHILD_MB} --play"
    bots = [parse_spec(spec), parse_spec("example:random")]
    box = Sandbox(tier=Tier.BUBBLEWRAP, memory_mb=LIMIT_MB)
    plan = SeriesPlan(
        get_game("opposing-force"),
        bots,
        1,
        secret=practice_secret(5),
        settings=PATIENT,
        replays=replays,
        sandbox=box,
    )
    [(outcome, _lineup)] = asyncio.run(run_series(plan))
    # What it prints while it plays is in its match's file, the rest in its process's.
    logs = sorted((replays / "logs").glob("*/0-*.log")) + list((replays / "logs").glob("0-*.log"))
    said = [f"{f.seat} {f.cause.value}: {f.detail}" for f in outcome.forfeits]
    return said, lines(logs, "tree: ")


@needs_bwrap
@needs_cgroup
@pytest.mark.timeout(90)
def test_a_bot_whose_children_together_pass_its_memory_is_killed_whole(tmp_path: Path) -> None:
    forfeits, said = play_memory_tree(tmp_path)
    # A crash, or a no-show when the kill comes before it joins: either way, why it was killed.
    assert len(forfeits) == 1 and forfeits[0].startswith(("0 crash: ", "0 no_show: ")), forfeits
    assert f"passed its memory of {LIMIT_MB} MB" in forfeits[0]  # recorded as such
    holding = [name for name, what in said.items() if what == f"holds {CHILD_MB} MB"]
    assert len(holding) < CHILDREN and "children done" not in said


@needs_bwrap
@pytest.mark.timeout(90)
def test_with_limits_per_process_only_every_child_gets_its_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: no memory group, RLIMIT_AS alone; 900 MB for a bot of memory_mb 512."""
    monkeypatch.setattr(sandbox, "MEMORY_GROUPS", False)
    forfeits, said = play_memory_tree(tmp_path)
    assert forfeits == []
    holding = [name for name, what in said.items() if what == f"holds {CHILD_MB} MB"]
    assert len(holding) == CHILDREN and "children done" in said


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tier", [pytest.param(Tier.BUBBLEWRAP, marks=needs_bwrap), Tier.RLIMITS])
@pytest.mark.parametrize("guarded", [True, False], ids=["filtered", "unfiltered"])
def test_a_bot_cannot_make_a_user_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tier: Tier, guarded: bool
) -> None:
    """unfiltered is the control: the wrapper's seccomp filter turned off."""
    monkeypatch.setattr(sandbox, "NO_USER_NAMESPACES", guarded)
    log = tmp_path / "bot.log"
    asyncio.run(run_alone(f"cmd:/bin/sh {USERNS_BOT}", Sandbox(tier=tier), log))
    outcome = lines(log, "userns: ")
    if guarded:
        assert outcome == {"refused": "unshare: unshare failed: Operation not permitted"}, outcome
    else:
        assert "made (uid 0 inside)" in outcome, outcome


SYSTEM_PYTHON = Path("/usr/bin/python3")


@needs_cgroup
@pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason="no /usr/bin/python3 for a bot's own uid")
@pytest.mark.timeout(60)
@pytest.mark.parametrize("groups", [True, False], ids=["memory-group", "rlimit-as-only"])
def test_at_tier_rlimits_the_memory_limit_holds_for_the_whole_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, groups: bool
) -> None:
    """The same tree at tier rlimits, on the machine's Python (which a bot's own uid may run):
    killed whole with its group, every child holding its memory without (the control)."""
    monkeypatch.setattr(sandbox, "MEMORY_GROUPS", groups)
    spec = f"cmd:{SYSTEM_PYTHON} {MEMORY_BOT} {CHILDREN} {CHILD_MB}"
    log = tmp_path / "bot.log"
    asyncio.run(run_alone(spec, Sandbox(tier=Tier.RLIMITS, memory_mb=LIMIT_MB), log))
    said = lines(log, "tree: ")
    holding = [name for name, what in said.items() if what == f"holds {CHILD_MB} MB"]
    if groups:
        assert len(holding) < CHILDREN and "children done" not in said, said
    else:
        assert len(holding) == CHILDREN and "children done" in said, said


@needs_cgroup
def test_a_memory_group_left_behind_is_removed_when_the_next_is_made() -> None:
    """A referee killed before it removed its bots' groups leaves them empty: the next group
    made removes those long empty, never one just made (whose bot may be about to join)."""
    hierarchy = memory_group.memory_hierarchy()
    assert hierarchy is not None
    parent = hierarchy[0]
    old, recent = (parent / f"{memory_group.GROUP_PREFIX}test-{n}-{os.getpid()}" for n in (1, 2))
    old.mkdir()
    recent.mkdir()
    try:
        hour_ago = os.stat(old).st_mtime - 3600
        os.utime(old, (hour_ago, hour_ago))
        made = memory_group.make_memory_group(64)
        assert made is not None
        made.remove()
        assert not old.exists() and recent.exists() and not made.path.exists()
    finally:
        for group in (old, recent):
            with contextlib.suppress(FileNotFoundError):
                group.rmdir()
