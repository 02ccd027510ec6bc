"""Tests referee.bots.builds, referee.bots.build_disk and referee.bots.pids_group.

A submitted version's build, for real: `make` and `cc` in bubblewrap build a C program that then
runs; a syntax error ends with the compiler's last lines; a build that loops, spends its CPU,
forks without end, fills its disk (or leaves a sparse file bigger than it), leaves a link out
of its folder, tries the network or writes and reads outside its folder is stopped or refused,
and the reason says which, in plain words; nothing it started is left running, and no disk of
it stays mounted. Each attack beside its control: the same build with the limit raised, or run
unconfined in tmp_path, does what the guard stops.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.bots import memory_group
from referee.bots.build_disk import MIB, DiskError, check
from referee.bots.builds import BuildEnd, BuildLimits, BuildResult, build
from referee.bots.sandbox import EXEC_WRAPPER, probe_bubblewrap

BWRAP_PROBLEM = probe_bubblewrap()
REQUIRED = bool(os.environ.get("ARENA_REQUIRE_BWRAP"))
CC = shutil.which("cc")
if REQUIRED and CC is None:  # CI installs a compiler (.ci/run): there builds must be tested
    raise RuntimeError("ARENA_REQUIRE_BWRAP is set but there is no C compiler (cc)")
pytestmark = [
    pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=f"bubblewrap cannot run: {BWRAP_PROBLEM}"),
    pytest.mark.skipif(CC is None, reason="no C compiler (cc) here: builds compile C"),
]
# The guards that name a fork bomb, and give a build a disk of its own, are a root referee's
# (a pids group, a tmpfs); CI runs as root.
needs_cgroup = pytest.mark.skipif(
    memory_group.memory_hierarchy() is None, reason="no memory control group can be made here"
)
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="a build's pids group and disk need root")
QUICK = BuildLimits(wall_seconds=60, cpu_seconds=30, memory_mb=512, disk_mb=32, processes=64)
HELLO = '#include <stdio.h>\nint main(void) { puts("hello from the bot"); return 0; }\n'
MAKEFILE = "bot: bot.c\n\tcc -O2 -o bot bot.c\n\tid -u > built-by.txt\n"
# The sleeps of a fork bomb's children, of a killed referee's build, of a cancelled build: each
# found among the machine's processes by its own length (tests may run side by side).
MARK, KILLED_MARK, CANCELLED_MARK = "37.123", "37.124", "37.125"


def version(folder: Path, files: dict[str, str]) -> Path:
    """A stored version: a folder of files."""
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def run(source: Path, argv: list[str], output: Path, limits: BuildLimits = QUICK) -> BuildResult:
    return asyncio.run(build(source, argv, limits, output))


def sleepers(mark: str = MARK) -> list[int]:
    """The fork bomb's children still alive anywhere on the machine."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.split(b"\0")[:2] == [b"sleep", mark.encode()]:
            found.append(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def nothing_left_mounted(tmp_path: Path) -> Iterator[None]:
    """And the umask of arena's commands (referee/owner_only.py): a build must work in it."""
    before = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(before)
    mounts = Path("/proc/mounts").read_text()
    assert str(tmp_path) not in mounts, "a build's disk is still mounted"


@pytest.mark.timeout(60)
def test_a_c_program_built_by_make_in_the_sandbox_runs(tmp_path: Path) -> None:
    source = version(tmp_path / "stored", {"bot.c": HELLO, "Makefile": MAKEFILE})
    result = run(source, ["make"], tmp_path / "build")
    assert result.ok, result.reason
    assert result.reason.startswith("built in") and result.folder == tmp_path / "build" / "bot"
    ran = subprocess.run([str(result.folder / "bot")], capture_output=True, text=True, check=True)
    assert ran.stdout == "hello from the bot\n"
    assert "cc -O2 -o bot bot.c" in result.output_tail
    assert sorted(p.name for p in source.iterdir()) == ["Makefile", "bot.c"]  # never written
    built_by = int((result.folder / "built-by.txt").read_text())
    assert built_by != 0 or os.geteuid() != 0  # as root: a uid of its own
    # The kept copy is the referee's, read-only to others: the bot, another uid, reads it.
    assert (result.folder / "bot").stat().st_uid == os.geteuid()
    assert (result.folder / "bot").stat().st_mode & 0o7777 == 0o755


@pytest.mark.timeout(60)
def test_a_build_that_fails_reports_the_compilers_last_lines(tmp_path: Path) -> None:
    broken = HELLO.replace("return 0;", "return 0")
    source = version(tmp_path / "stored", {"bot.c": broken, "Makefile": MAKEFILE})
    result = run(source, ["make"], tmp_path / "build")
    assert result.end is BuildEnd.EXITED and result.folder is None
    assert result.reason.startswith("the build failed: it exited with code 2")
    assert "bot.c:2:" in result.reason and "error: expected" in result.reason
    assert any("error: expected" in line for line in result.output_tail)
    assert "[arena] the build failed" in result.log.read_text()
    assert not (tmp_path / "build" / "bot").exists()


LOOP = ["sh", "-c", "while :; do :; done"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("limits", "end", "words"),
    [
        (QUICK.model_copy(update={"wall_seconds": 1.5}), BuildEnd.TIME, "time limit of 1.5 s"),
        (QUICK.model_copy(update={"cpu_seconds": 1}), BuildEnd.CPU, "CPU-time limit of 1 s"),
    ],
)
def test_a_build_that_loops_is_stopped_at_its_limit(
    tmp_path: Path, limits: BuildLimits, end: BuildEnd, words: str
) -> None:
    source = version(tmp_path / "stored", {"a.txt": "x"})
    began = time.monotonic()
    result = run(source, LOOP, tmp_path / "build", limits)
    assert result.end is end and words in result.reason, result.reason
    assert time.monotonic() - began < 20
    # The control: unconfined, the same loop does not end by itself.
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(LOOP, timeout=1.5, check=False)


BOMB = f"i=0; while [ $i -lt 100 ]; do sleep {MARK} & i=$((i+1)); done; echo made $i"


@needs_root
@pytest.mark.timeout(90)
def test_a_fork_bomb_is_stopped_named_and_leaves_no_process(tmp_path: Path) -> None:
    source = version(tmp_path / "stored", {"a.txt": "x"})
    limits = QUICK.model_copy(update={"processes": 16})
    result = run(source, ["sh", "-c", BOMB], tmp_path / "bomb", limits)
    assert result.end is BuildEnd.PROCESSES, result.reason
    assert "more than 16 processes at once (a fork bomb?)" in result.reason
    assert "made 100" not in result.log.read_text()
    assert sleepers() == []
    # The control: the same bomb with room for it makes its 100 processes.
    roomy = QUICK.model_copy(update={"processes": 256})
    control = run(source, ["sh", "-c", BOMB], tmp_path / "roomy", roomy)
    assert control.ok and "made 100" in control.output_tail, control.reason
    assert sleepers() == []  # and they end with the build's sandbox all the same


HOG = f"{sys.executable} -c \"import time; b = b'x' * (60 * 2**20); time.sleep(2)\""
HOGS = f"for i in 1 2 3; do {HOG} & done; wait; echo all done"


@needs_root
@needs_cgroup
@pytest.mark.timeout(60)
def test_a_build_whose_processes_together_pass_its_memory_is_stopped(tmp_path: Path) -> None:
    """Three processes of 60 MB, each within RLIMIT_AS, together over the tree's 160 MB."""
    source = version(tmp_path / "stored", {"a.txt": "x"})
    tight = QUICK.model_copy(update={"memory_mb": 160})
    result = run(source, ["sh", "-c", HOGS], tmp_path / "tight", tight)
    assert result.end is BuildEnd.MEMORY, result.reason
    assert "ran out of memory: it passed its limit of 160 MB" in result.reason
    control = run(source, ["sh", "-c", HOGS], tmp_path / "roomy")
    assert control.ok and "all done" in control.output_tail, control.reason


FILL = "for i in $(seq 1 24); do head -c 1048576 /dev/zero > f$i || exit 1; done; echo filled"


@needs_root
@pytest.mark.timeout(60)
def test_a_build_that_fills_its_disk_is_stopped_and_the_host_keeps_nothing(
    tmp_path: Path,
) -> None:
    source = version(tmp_path / "stored", {"a.txt": "x"})
    small = QUICK.model_copy(update={"disk_mb": 8})
    result = run(source, ["sh", "-c", FILL], tmp_path / "full", small)
    assert result.end is BuildEnd.DISK, result.reason
    assert "filled its disk limit of 8 MB" in result.reason
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["build.log"]
    # The control: with room for them, the same 24 MB are written and kept.
    control = run(source, ["sh", "-c", FILL], tmp_path / "roomy")
    assert control.ok and control.folder is not None, control.reason
    assert len(list(control.folder.glob("f*"))) == 24


@needs_root
@pytest.mark.timeout(60)
def test_a_sparse_file_bigger_than_the_disk_is_not_copied_out(tmp_path: Path) -> None:
    """On a tmpfs a sparse file takes no room; copied out, it would take all of its size. Each
    is within RLIMIT_FSIZE (the disk's size), six of them are not."""
    source = version(tmp_path / "stored", {"a.txt": "x"})
    sparse = ["sh", "-c", "truncate -s 6M s1 s2 s3 s4 s5 s6 && echo made"]
    small = QUICK.model_copy(update={"disk_mb": 8})
    result = run(source, sparse, tmp_path / "sparse", small)
    assert result.end is BuildEnd.DISK and "counted whole" in result.reason, result.reason
    assert not (tmp_path / "sparse" / "bot").exists()
    control = run(source, sparse, tmp_path / "roomy", QUICK.model_copy(update={"disk_mb": 64}))
    assert control.ok and control.folder is not None
    assert (control.folder / "s6").stat().st_size == 6 * 1024 * 1024


LINKS = "echo x > one && for i in $(seq 1 200); do ln one link$i; done && echo linked"


@needs_root
@pytest.mark.timeout(60)
def test_hard_links_past_the_file_limit_stop_the_build(tmp_path: Path) -> None:
    """Each is a file of its own once copied to the host's disk: the tmpfs counts a hard link
    as an inode, and the build is stopped at its file limit."""
    source = version(tmp_path / "stored", {"a.txt": "x"})
    few = QUICK.model_copy(update={"files": 64})
    result = run(source, ["sh", "-c", LINKS], tmp_path / "few", few)
    assert result.end is BuildEnd.DISK and "(64 files)" in result.reason, result.reason
    assert not (tmp_path / "few" / "bot").exists()
    control = run(source, ["sh", "-c", LINKS], tmp_path / "many")
    assert control.ok and control.folder is not None, control.reason
    assert len(list(control.folder.glob("link*"))) == 200


def test_the_check_after_a_build_counts_each_hard_link(tmp_path: Path) -> None:
    """Where the build's folder is on the real disk (an ordinary user's referee), the check
    after it is what bounds its files."""
    folder = version(tmp_path / "built", {"one": "x"})
    for i in range(200):
        os.link(folder / "one", folder / f"link{i}")
    with pytest.raises(DiskError, match="more than 64 files and folders"):
        check(folder, limit_bytes=MIB, limit_files=64)
    check(folder, limit_bytes=MIB, limit_files=1000)  # the control: within a higher limit


@pytest.mark.timeout(60)
def test_a_link_out_of_the_build_folder_is_not_kept(tmp_path: Path) -> None:
    source = version(tmp_path / "stored", {"a.txt": "x"})
    result = run(source, ["ln", "-s", "/etc/shadow", "leak"], tmp_path / "out")
    assert result.end is BuildEnd.KEPT_NOT and "leak -> /etc/shadow" in result.reason
    assert not (tmp_path / "out" / "bot").exists()
    control = run(source, ["ln", "-s", "a.txt", "inside"], tmp_path / "in")
    assert control.ok and control.folder is not None
    assert (control.folder / "inside").read_text() == "x"


CRASHING_REFEREE = f"""
import asyncio, sys
from pathlib import Path
from referee.bots.builds import build, BuildLimits
argv = ["sh", "-c", "echo started; sleep {KILLED_MARK}"]
asyncio.run(build(Path(sys.argv[1]), argv, BuildLimits(), Path(sys.argv[2])))
"""


@needs_root
@pytest.mark.timeout(90)
def test_a_build_started_again_after_its_referee_was_killed_starts_afresh(tmp_path: Path) -> None:
    """kill -9 of the referee mid-build leaves the build's disk mounted (the control: seen
    here); its processes die with it (bwrap --die-with-parent), and the next build at the
    same place unmounts the leftover and builds."""
    source = version(tmp_path / "stored", {"bot.c": HELLO, "Makefile": MAKEFILE})
    output = tmp_path / "build"
    referee = subprocess.Popen([sys.executable, "-c", CRASHING_REFEREE, str(source), str(output)])
    log = output / "build.log"
    for _ in range(300):
        if log.exists() and "started" in log.read_text():
            break
        time.sleep(0.1)
    else:
        referee.kill()
        pytest.fail("the build never started")
    os.kill(referee.pid, signal.SIGKILL)
    referee.wait()
    assert os.path.ismount(output / "bot")
    for _ in range(50):
        if not sleepers(KILLED_MARK):
            break
        time.sleep(0.1)
    assert sleepers(KILLED_MARK) == []
    result = run(source, ["make"], output)
    assert result.ok, result.reason
    assert not os.path.ismount(output / "bot") and (output / "bot" / "bot").is_file()


@pytest.mark.timeout(60)
def test_a_build_command_that_is_not_there_says_so(tmp_path: Path) -> None:
    source = version(tmp_path / "stored", {"a.txt": "x"})
    result = run(source, ["no-such-compiler", "bot.c"], tmp_path / "build")
    assert result.end is BuildEnd.EXITED and "exited with code 127" in result.reason
    assert "cannot run no-such-compiler: No such file or directory" in result.reason
    empty = run(source, [], tmp_path / "empty")
    assert empty.end is BuildEnd.SANDBOX and empty.reason == "the build command is empty"


@needs_root
@pytest.mark.timeout(60)
def test_a_cancelled_build_leaves_nothing_running_or_mounted(tmp_path: Path) -> None:
    """The ladder stopping mid-build cancels it; the control, where nothing cleans up, is the
    killed referee above: its disk stays mounted."""
    source = version(tmp_path / "stored", {"a.txt": "x"})
    argv = ["sh", "-c", f"sleep {CANCELLED_MARK}"]

    async def cancelled() -> None:
        await asyncio.wait_for(build(source, argv, QUICK, tmp_path / "build"), 2)

    with pytest.raises(TimeoutError):
        asyncio.run(cancelled())
    assert sleepers(CANCELLED_MARK) == [] and not os.path.ismount(tmp_path / "build" / "bot")


@pytest.mark.timeout(90)
def test_a_referee_that_is_not_root_builds_in_a_user_namespace_with_each_file_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No tmpfs, no groups, no uid of its own: bwrap in a user namespace, the folder on the
    real disk. A C program still builds and runs; a file past disk_mb is cut by RLIMIT_FSIZE,
    and files each within it but together over are refused by the check after. The controls:
    the same builds within a larger disk."""
    monkeypatch.setattr("referee.bots.builds.referee_is_root", lambda: False)
    source = version(tmp_path / "stored", {"bot.c": HELLO, "Makefile": MAKEFILE})
    built = run(source, ["make"], tmp_path / "c")
    assert built.ok and built.folder is not None, built.reason
    assert int((built.folder / "built-by.txt").read_text()) == 65534  # inside its namespace
    ran = subprocess.run([str(built.folder / "bot")], capture_output=True, text=True)
    assert ran.stdout == "hello from the bot\n"
    small = QUICK.model_copy(update={"disk_mb": 4})
    big = ["sh", "-c", "head -c 6000000 /dev/zero > big"]
    result = run(source, big, tmp_path / "big", small)
    assert result.end is BuildEnd.DISK and "disk limit of 4 MB" in result.reason, result.reason
    assert not (tmp_path / "big" / "bot").exists()
    spread = ["sh", "-c", "for i in 1 2 3; do head -c 3000000 /dev/zero > f$i; done"]
    result = run(source, spread, tmp_path / "spread", small)
    assert result.end is BuildEnd.DISK and "over its disk limit of 4 MB" in result.reason
    for name, argv in (("big-control", big), ("spread-control", spread)):
        assert run(source, argv, tmp_path / name).ok


FLOOD = "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo done; exit 1"


@pytest.mark.timeout(60)
def test_a_build_that_floods_its_output_keeps_its_cap(tmp_path: Path) -> None:
    source = version(tmp_path / "stored", {"a.txt": "x"})
    capped = QUICK.model_copy(update={"log_kib": 64})
    result = run(source, ["sh", "-c", FLOOD], tmp_path / "capped", capped)
    assert result.end is BuildEnd.EXITED
    assert result.log.stat().st_size < 66 * 1024
    assert "output past 64 KiB here is dropped (a build's log, log_kib)" in result.log.read_text()
    assert all(len(line) < 400 for line in result.output_tail)
    # The control: a cap high enough keeps all of it, and its one long line is cut in the tail.
    roomy = QUICK.model_copy(update={"log_kib": 8192})
    control = run(source, ["sh", "-c", FLOOD], tmp_path / "whole", roomy)
    assert control.log.stat().st_size > 3_000_000
    assert "(2999700 more characters)" in control.reason and "done" in control.output_tail


def _listener() -> tuple[socket.socket, list[str]]:
    server = socket.create_server(("127.0.0.1", 0))
    reached: list[str] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            reached.append("connected")
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    return server, reached


@pytest.mark.timeout(60)
def test_a_build_cannot_reach_the_network(tmp_path: Path) -> None:
    server, reached = _listener()
    port = server.getsockname()[1]
    knock = f"import socket; socket.create_connection(('127.0.0.1', {port}), 5); print('in')"
    try:
        source = version(tmp_path / "stored", {"a.txt": "x"})
        result = run(source, [sys.executable, "-c", knock], tmp_path / "build")
        assert result.end is BuildEnd.EXITED and "Connection refused" in result.reason
        assert reached == []
        # The control: unconfined, the same code reaches the port.
        done = subprocess.run([sys.executable, "-c", knock], capture_output=True, text=True)
        assert done.stdout == "in\n"
        accepted_by = time.monotonic() + 10  # the listener's thread takes it in its own time
        while not reached and time.monotonic() < accepted_by:
            time.sleep(0.01)
        assert reached == ["connected"]
    finally:
        server.close()


@pytest.mark.timeout(60)
def test_a_build_cannot_write_or_read_outside_its_folder(tmp_path: Path) -> None:
    source = version(tmp_path / "stored", {"a.txt": "x"})
    other = version(tmp_path / "other-author", {"secret.txt": "the other bot's source"})
    beside = tmp_path / "ladder"
    beside.mkdir()
    attack = (
        f"echo pwned > {source}/pwned; echo pwned > {beside}/pwned; echo pwned > $HOME/pwned; "
        f"cat {other}/secret.txt; echo pwned > mine; true"
    )
    result = run(source, ["sh", "-c", attack], tmp_path / "build")
    assert result.ok and result.folder is not None, result.reason
    assert (result.folder / "mine").read_text() == "pwned\n"  # its own folder it may write
    assert not (source / "pwned").exists() and not (beside / "pwned").exists()
    assert not (Path.home() / "pwned").exists()
    assert "the other bot's source" not in result.log.read_text()
    # The control: unconfined, in a copy in tmp_path with a HOME there, the same command
    # writes into the stored version and beside it, and reads the other author's source.
    copy = tmp_path / "unconfined"
    shutil.copytree(source, copy)
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home))
    done = subprocess.run(["sh", "-c", attack], cwd=copy, env=env, capture_output=True, text=True)
    assert (source / "pwned").exists() and (beside / "pwned").exists()
    assert (home / "pwned").exists() and "the other bot's source" in done.stdout


@pytest.mark.timeout(120)
def test_what_the_sandbox_costs_a_trivial_build(tmp_path: Path) -> None:
    """Not a timed assertion: the ratio is printed (pytest -s) for docs/sandbox.md."""
    source = version(tmp_path / "stored", {"bot.c": HELLO})
    argv = ["cc", "-O2", "-o", "bot", "bot.c"]
    confined, unconfined = [], []
    for turn in range(5):
        began = time.monotonic()
        assert run(source, argv, tmp_path / f"b{turn}").ok
        confined.append(time.monotonic() - began)
        began = time.monotonic()
        copy = tmp_path / f"u{turn}"
        shutil.copytree(source, copy)
        subprocess.run(argv, cwd=copy, check=True)
        unconfined.append(time.monotonic() - began)
    best_in, best_out = min(confined), min(unconfined)
    print(
        f"\ntrivial build (cc hello.c), best of 5: bubblewrap {best_in * 1000:.0f} ms, "
        f"unconfined {best_out * 1000:.0f} ms, ratio {best_in / best_out:.1f}"
    )


@pytest.mark.timeout(30)
def test_the_wrapper_bounds_each_file_a_build_writes(tmp_path: Path) -> None:
    """RLIMIT_FSIZE (sandbox_exec.py --file-mb), a build's bound per file where it has no disk
    of its own (an ordinary user's referee): past it the write fails. The control: without it,
    the same file is written whole."""
    write = ["sh", "-c", "head -c 2000000 /dev/zero > big"]
    wrapper = [sys.executable, "-I", str(EXEC_WRAPPER)]
    bounded = subprocess.run([*wrapper, "--file-mb", "1", "--", *write], cwd=tmp_path, check=False)
    assert bounded.returncode != 0 and (tmp_path / "big").stat().st_size == 1024 * 1024
    free = subprocess.run([*wrapper, "--", *write], cwd=tmp_path, check=False)
    assert free.returncode == 0 and (tmp_path / "big").stat().st_size == 2_000_000
