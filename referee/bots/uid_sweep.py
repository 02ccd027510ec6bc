"""What a bot's own uid leaves on the host ends with the bot.

Under a root referee each bot process of the rlimits and bubblewrap tiers is a uid of its own
(referee/bots/sandbox.py). Ending its process group is not enough: a child that called
setsid() has left the group, and a bot may leave files in the machine's shared temporary
folders for the next bot, or another run, to find. When the bot is stopped, every process of
its uid is killed and every file that uid owns at the top of /tmp, /var/tmp and /dev/shm is
removed, with the private TMPDIR it was given.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

# The folders every user may write on a usual machine: where a bot at tier rlimits can leave
# something behind. (In bubblewrap its /tmp and /dev/shm are tmpfs of its own.)
SHARED_FOLDERS = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))
PRIVATE_TMP_PREFIX = "arena-bot-tmp-"
KILL_ROUNDS = 20  # a round misses only a child forked while it ran
LOWEST_BOT_UID = 1000  # below it are the machine's own users: never swept


def private_tmp(uid: int | None) -> Path:
    """A fresh folder, 0700 and uid's own (the referee's when None), for the bot's TMPDIR."""
    folder = Path(tempfile.mkdtemp(prefix=PRIVATE_TMP_PREFIX))  # 0700 whatever the umask
    if uid is not None:
        os.chown(folder, uid, uid)
    return folder


def processes_of(uid: int) -> list[int]:
    """The pids of the live processes that have uid as any of their user ids (real,
    effective, saved, filesystem): /proc's owner alone would miss one that made itself
    undumpable. A zombie, dead and waiting for its parent to reap it, does not count."""
    found = []
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                status = Path(entry.path, "status").read_text(encoding="ascii", errors="replace")
            except OSError:
                continue  # it ended meanwhile
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            dead = fields.get("State", "").split()[:1] in (["Z"], ["X"])
            if not dead and str(uid) in fields.get("Uid", "").split():
                found.append(int(entry.name))
    return found


def end_processes(uid: int) -> list[int]:
    """Kill every process of uid; the pids of those still there after every round (none,
    unless something outside keeps making them)."""
    if uid < LOWEST_BOT_UID:
        raise ValueError(f"uid {uid} is not a bot's own: its processes are not swept")
    for _ in range(KILL_ROUNDS):
        if not processes_of(uid):
            return []
        # kill(-1) as the uid itself reaches all of its processes at once, in one pass of the
        # kernel's process list, so that a process forking as fast as it can cannot outrun
        # it: a scan of /proc followed by a kill of each pid could be. The shell checks that
        # it is that uid before it kills: kill -1 as root would end every process there is.
        subprocess.run(
            ["/bin/sh", "-c", f'[ "$(id -u)" = {uid} ] && kill -KILL -1'],
            user=uid,
            group=uid,
            extra_groups=[],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
            timeout=10,
        )
    return processes_of(uid)


def remove_files_of(uid: int, folders: tuple[Path, ...] = SHARED_FOLDERS) -> list[Path]:
    """Remove what uid owns at the top of the shared folders; what was removed."""
    if uid < LOWEST_BOT_UID:
        raise ValueError(f"uid {uid} is not a bot's own: its files are not swept")
    removed = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
            except OSError:
                continue
            removed.append(Path(entry.path))
    return removed


def sweep(uid: int | None, tmp: Path | None) -> None:
    """End what a bot left: its uid's processes and files (when it had a uid of its own), and
    its private TMPDIR."""
    if uid is not None:
        end_processes(uid)
        remove_files_of(uid)
    if tmp is not None:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
