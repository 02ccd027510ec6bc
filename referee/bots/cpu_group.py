"""A CPU accounting control group per bot process: the CPU seconds its whole tree used, for the
CPU clock (`clock = "cpu"` in the time control, referee/matches/cpu_timing.py).

Wall time is fair only when every bot has a core to itself; CPU time is what the bot's own
processes ran, whatever else the machine does. A bot that forks is charged for its children:
they are in its group (the wrapper, referee/bots/sandbox_exec.py --cgroup, joins it as root
before the bot runs, so every child it ever forks is in it too).

cgroup v1 reads cpuacct.usage (nanoseconds) of a group of the cpuacct hierarchy; cgroup v2
reads usage_usec of cpu.stat (the cpu.stat file exists in every v2 group, with or without the
cpu controller). Where neither can be made (an ordinary user, a read-only /sys) there is no
group: CpuClockError says so, and a match under the CPU clock does not start.

Each bot's group also gets the same share of a contended core (the cpu controller: v1
cpu.shares, in the cpuacct group when the two are mounted together, else in a group of its own
in the cpu hierarchy; v2 cpu.weight): the scheduler then splits a core between groups, not
between processes, so a bot that forks many spinners takes no more of it than a bot with one,
and its CPU clock runs no faster for its neighbour's forks. Where the cpu controller is missing
the match still runs, and a warning says the shares are not equal.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import structlog

from referee.bots.memory_group import (
    CGROUP_ROOT,
    GROUP_PREFIX,
    MemoryGroup,
    own_group,
    owner_tag,
)
from referee.bots.memory_group import remove_stale as remove_stale_groups

V1_CPUACCT = CGROUP_ROOT / "cpuacct"
V1_CPU = CGROUP_ROOT / "cpu"
V1_SHARES = "1024"  # the kernel's default for a group: what matters is that every bot's is equal
V2_WEIGHT = "100"

log = structlog.get_logger("referee.bots.cpu_group")


class CpuClockError(Exception):
    """No CPU accounting can be had here: the one-line reason."""


@dataclass
class CpuGroup(MemoryGroup):
    """A group that counts the CPU time of its processes; removed (what is left in it
    killed) as a memory group is; one it shares with the bot's memory group (cgroup v2) is
    not its to remove (owned False)."""

    owned: bool = True
    # cgroup v1 with the cpu controller mounted apart from cpuacct: the bot's group there, which
    # holds its share of a core.
    share: MemoryGroup | None = None

    def paths(self) -> tuple[Path, ...]:
        """The groups the bot's wrapper joins."""
        return (self.path,) if self.share is None else (self.path, self.share.path)

    def remove(self) -> None:
        super().remove()
        if self.share is not None:
            self.share.remove()

    def cpu_s(self) -> float:
        """CPU seconds its processes used so far, user and system, the dead ones' included;
        what the kernel has counted at the last tick or switch of each (a few ms late, at
        most, for one that is running)."""
        try:
            if self.version == 1:
                return int((self.path / "cpuacct.usage").read_bytes()) / 1e9
            for line in (self.path / "cpu.stat").read_text(encoding="ascii").splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
        except (OSError, ValueError):
            pass
        return 0.0


def cpu_hierarchy() -> tuple[Path, int]:
    """Where this process's CPU groups go, and the cgroup version; CpuClockError without."""
    if os.geteuid() != 0:
        raise CpuClockError(
            'clock = "cpu" needs a referee running as root: only root can put each bot in a '
            'control group of its own (use clock = "wall", or run as root)'
        )
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        path = own_group("")
        if path is not None:
            return CGROUP_ROOT / path.lstrip("/"), 2
    elif (V1_CPUACCT / "cpuacct.usage").exists():
        path = own_group("cpuacct")
        if path is not None:
            return V1_CPUACCT / path.lstrip("/"), 1
    raise CpuClockError(
        f'clock = "cpu" needs CPU accounting by control group: neither {V1_CPUACCT} '
        f"(cgroup v1 cpuacct) nor a cgroup v2 hierarchy at {CGROUP_ROOT} is here"
    )


def make_cpu_group(shares: bool = True) -> CpuGroup:
    """A fresh, empty group for one bot process, with its equal share of a core (shares, the
    default); CpuClockError where none can be made."""
    parent, version = cpu_hierarchy()
    remove_stale_groups(parent)
    path = parent / f"{GROUP_PREFIX}{owner_tag()}-cpu-{secrets.token_hex(6)}"
    try:
        path.mkdir(mode=0o755)
    except OSError as exc:
        raise CpuClockError(
            f'clock = "cpu": cannot make a control group in {parent}: {exc}'
        ) from None
    group = CpuGroup(path, version)
    if shares:
        try:
            give_equal_share(group)
        except OSError as exc:
            group.remove()
            raise CpuClockError(f'clock = "cpu": cannot set a bot\'s CPU share: {exc}') from None
    return group


def give_equal_share(group: CpuGroup) -> None:
    """The same share of a contended core as every other bot's; a warning, once, where the
    cpu controller is missing. OSError where it is there and cannot be written."""
    if group.version == 2:
        weight = group.path / "cpu.weight"
        if weight.exists():
            weight.write_text(V2_WEIGHT, encoding="ascii")
        else:
            _warn_unshared(f"{group.path.parent}/cgroup.subtree_control has no +cpu")
        return
    if (group.path / "cpu.shares").exists():  # cpu and cpuacct mounted together
        (group.path / "cpu.shares").write_text(V1_SHARES, encoding="ascii")
        return
    own = own_group("cpu")
    if own is None or not (V1_CPU / "cpu.shares").exists():
        _warn_unshared(f"no cgroup v1 cpu controller at {V1_CPU}")
        return
    parent = V1_CPU / own.lstrip("/")
    remove_stale_groups(parent)
    share = MemoryGroup(parent / group.path.name, 1)
    share.path.mkdir(mode=0o755)
    group.share = share
    (share.path / "cpu.shares").write_text(V1_SHARES, encoding="ascii")


_warned: list[str] = []


def _warn_unshared(why: str) -> None:
    if why not in _warned:
        _warned.append(why)
        log.warning(
            "cpu_shares_unavailable",
            why=why,
            effect="bots share a contended core by process: one that forks gets more of it",
        )


def check_cpu_accounting() -> None:
    """CpuClockError, with its reason, unless a CPU group can be made and read here: the check
    a host makes before the first match under the CPU clock."""
    group = make_cpu_group()
    try:
        if group.version == 1 and not (group.path / "cpuacct.usage").exists():
            raise CpuClockError(f'clock = "cpu": {group.path} has no cpuacct.usage')
        if group.version == 2 and not (group.path / "cpu.stat").exists():
            raise CpuClockError(f'clock = "cpu": {group.path} has no cpu.stat')
    finally:
        group.remove()


def cpu_accounting_problem() -> str | None:
    """Why the CPU clock cannot count here (check_cpu_accounting's reason); None when it can:
    for whatever must know before it starts, a test to skip or a benchmark to say so."""
    try:
        check_cpu_accounting()
    except CpuClockError as exc:
        return str(exc)
    return None
