"""Each bot's CPU group has the same share of a contended core: a bot that forks four spinners
takes no more of one core than a bot that spins alone. Real processes pinned to one core
(taskset), real control groups (root, with the cpu controller: skipped elsewhere); the control
is the same two without shares, where the scheduler splits the core by process (4/5 to the
forker)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from referee.bots import cpu_group
from referee.bots.cpu_group import V1_CPU, CpuClockError, CpuGroup, make_cpu_group
from referee.bots.sandbox import join_argv


def _why_not() -> str | None:
    try:
        group = make_cpu_group()
    except CpuClockError as exc:
        return str(exc)
    try:
        if group.version == 1 and group.share is None and not (group.path / "cpu.shares").exists():
            return f"no cgroup v1 cpu controller at {V1_CPU}"
        if group.version == 2 and not (group.path / "cpu.weight").exists():
            return "the cgroup v2 cpu controller is not enabled here"
    finally:
        group.remove()
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=f"no CPU shares: {_why_not()}")

RUN_S = 2.0
SPIN = "while True: pass"
FORKER = (
    "import subprocess, sys\n"
    f"kids = [subprocess.Popen([sys.executable, '-c', {SPIN!r}]) for _ in range(4)]\n"
    "[kid.wait() for kid in kids]\n"
)


def _core() -> str:
    """The core the two bots are pinned to: one this process may run on."""
    return str(min(os.sched_getaffinity(0)))


def _race(shares: bool) -> tuple[float, float]:
    """The CPU seconds the forker's tree and the lone spinner used in RUN_S on one core."""
    groups: list[CpuGroup] = [make_cpu_group(shares=shares) for _ in range(2)]
    core = _core()
    processes = [
        subprocess.Popen(
            [*join_argv(*group.paths()), "taskset", "-c", core, sys.executable, "-c", code]
        )
        for group, code in zip(groups, [FORKER, SPIN], strict=True)
    ]
    try:
        time.sleep(0.5)  # every child forked and spinning
        start = [g.cpu_s() for g in groups]
        time.sleep(RUN_S)
        used = [g.cpu_s() - s for g, s in zip(groups, start, strict=True)]
    finally:
        for group in groups:
            group.remove()  # kills what is in it, the forker's children too
        for process in processes:
            process.wait(10)
    return used[0], used[1]


def test_a_bot_that_forks_four_spinners_takes_no_more_of_a_core_than_one_spinner() -> None:
    forker, lone = _race(shares=True)
    share = forker / (forker + lone)
    assert forker + lone > 0.2 * RUN_S, (forker, lone)  # the core was theirs often enough
    assert 0.35 < share < 0.65, f"the forker had {share:.0%} of the core ({forker}, {lone})"


def test_control_without_shares_the_forker_takes_most_of_the_core() -> None:
    forker, lone = _race(shares=False)
    share = forker / (forker + lone)
    assert share > 0.7, f"the forker had {share:.0%} of the core ({forker}, {lone})"


def test_without_the_cpu_controller_a_group_is_made_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """cgroup v1 with cpu mounted apart from cpuacct (this machine's), the cpu one gone."""
    if not (V1_CPU / "cpu.shares").exists() or (cpu_group.V1_CPUACCT / "cpu.shares").exists():
        pytest.skip("needs cgroup v1 with cpu and cpuacct mounted apart")
    monkeypatch.setattr(cpu_group, "V1_CPU", tmp_path / "no-cpu-controller")
    monkeypatch.setattr(cpu_group, "_warned", [])
    with capture_logs() as logs:
        group = make_cpu_group()
        group.remove()
    [warned] = [e for e in logs if e["event"] == "cpu_shares_unavailable"]
    assert "no cgroup v1 cpu controller" in warned["why"]
    assert group.share is None and group.paths() == (group.path,)


def test_control_with_the_cpu_controller_no_warning() -> None:
    with capture_logs() as logs:
        make_cpu_group().remove()
    assert not [e for e in logs if e["event"] == "cpu_shares_unavailable"]
