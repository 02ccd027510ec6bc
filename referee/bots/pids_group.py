"""A pids control group for a build: at most N processes and threads in its whole tree, and a
count of the forks it refused, so that a fork bomb is told apart from any other failure.

RLIMIT_NPROC bounds a uid's processes too, but says nothing afterwards: the fork that failed
looks like any other EAGAIN. The pids controller counts each fork it refused (`pids.events`,
`max N`). cgroup v1 only (the pids hierarchy at /sys/fs/cgroup/pids, as on this project's
machines and CI): under cgroup v2 a process is in one group of one hierarchy, the memory
group already, so a build there has RLIMIT_NPROC alone and a fork bomb is reported by what it
did (the time limit, its exit code). The wrapper (referee/bots/sandbox_exec.py --cgroup)
joins it as root before anything of the build runs.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass

from referee.bots.memory_group import (
    CGROUP_ROOT,
    GROUP_PREFIX,
    MemoryGroup,
    own_group,
    owner_tag,
)
from referee.bots.memory_group import remove_stale as remove_stale_groups

V1_PIDS = CGROUP_ROOT / "pids"


@dataclass
class PidsGroup(MemoryGroup):
    """A group of the pids hierarchy; removed (what is left in it killed) as a memory group
    is."""

    def refused_forks(self) -> int:
        """How many forks and clones the group's limit refused so far."""
        try:
            text = (self.path / "pids.events").read_text(encoding="ascii")
        except OSError:
            return 0
        key, _, value = text.strip().partition(" ")
        return int(value) if key == "max" and value.isdigit() else 0


def make_pids_group(processes: int) -> PidsGroup | None:
    """A fresh group of at most `processes` tasks; None where none can be made here (an
    ordinary user, cgroup v2, no pids controller)."""
    if os.geteuid() != 0 or not (V1_PIDS / "cgroup.procs").exists():
        return None
    own = own_group("pids")
    if own is None:
        return None
    parent = V1_PIDS / own.lstrip("/")
    remove_stale_groups(parent)
    path = parent / f"{GROUP_PREFIX}{owner_tag()}-{secrets.token_hex(6)}"
    try:
        path.mkdir(mode=0o755)
    except OSError:
        return None
    group = PidsGroup(path, 1)
    try:
        (path / "pids.max").write_text(str(processes), encoding="ascii")
    except OSError:
        group.remove()
        return None
    return group
