"""The CPU clock (`clock = "cpu"`): a decision's allowance counted in the CPU time of the bot's
whole process tree, read from its control group, with a wall-clock cap. Real bot processes,
real control groups (root on cgroup v1 or v2: skipped where the machine has neither)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import pytest
from arena_games import get_game
from arena_games import replay_file as replay
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings

from referee.bots.cpu_group import CpuClockError, cpu_accounting_problem, make_cpu_group
from referee.bots.launcher import BotSpec, SpecError, parse_spec
from referee.bots.sandbox import Sandbox, Tier, probe_bubblewrap
from referee.hosting import series
from referee.hosting.series import SeriesPlan, run_series
from referee.matches.cpu_timing import cores
from referee.matches.match import MatchOutcome
from referee.wire.server import start_server

pytestmark = [
    pytest.mark.realtime,  # bots timed on tight allowances: run alone (make test)
    pytest.mark.skipif(
        cpu_accounting_problem() is not None,
        reason=f"no CPU accounting: {cpu_accounting_problem()}",
    ),
]
GAME = get_game("opposing-force")
BUDGET_MS = 200
SPIN_S = 0.8 * BUDGET_MS / 1000  # 80% of the budget, in the bot's own CPU time
SPUN_DECISIONS = 3  # the first decisions of each match spin; the rest answer at once

SPINNER = f"""
import time
from arena_sdk import Bot as _Bot


class Bot(_Bot):
    def on_match_start(self, match):
        self.spun = 0

    def act(self, observation, legal_actions):
        if self.spun < {SPUN_DECISIONS}:
            self.spun += 1
            end = time.process_time() + {SPIN_S}
            while time.process_time() < end:
                pass
        return 0
"""

# Two children that each spin CHILD_SPIN_S of CPU while the bot itself waits for them.
CHILD_SPIN_S = 0.3
FORKER = f"""
import subprocess, sys
from arena_sdk import Bot as _Bot

SPIN = (
    "import time\\nend = time.process_time() + {CHILD_SPIN_S}\\n"
    "while time.process_time() < end: pass"
)


class Bot(_Bot):
    forked = False

    def act(self, observation, legal_actions):
        if self.forked:
            return 0
        self.forked = True
        children = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(2)]
        for child in children:
            child.wait()
        return 0
"""

SLEEP_S = 1.5
SLEEPER = f"""
import time
from arena_sdk import Bot as _Bot


class Bot(_Bot):
    slept = False

    def act(self, observation, legal_actions):
        if self.slept:
            return 0
        self.slept = True
        time.sleep({SLEEP_S})
        return 0
"""


def _bot(tmp_path: Path, name: str, source: str) -> BotSpec:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = parse_spec(str(path))
    return BotSpec(spec.spec, name, spec.argv, spec.workdir)


def _plan(tmp_path: Path, bots: list[BotSpec], settings: MatchSettings, tag: str) -> SeriesPlan:
    return SeriesPlan(
        GAME,
        bots,
        games=1,
        secret=practice_secret(7),
        settings=settings,
        connect_timeout_s=60.0,  # sixteen Python bots starting at once on two cores
        series=tag,
    )


def _timeouts(outcome: MatchOutcome) -> list[str]:
    return [f.detail for f in outcome.forfeits if f.cause.value == "timeout"]


def _decisions(outcome: MatchOutcome) -> list[replay.DecisionRecord]:
    return [r for r in outcome.records if isinstance(r, replay.DecisionRecord)]


def _crowd(tmp_path: Path, clock: Literal["wall", "cpu"]) -> list[MatchOutcome]:
    """Four matches per core at once, on one referee, each between two spinners."""
    settings = MatchSettings(
        decision_ms=BUDGET_MS,
        time_bank_ms=0,
        clock=clock,
        wall_cap=40.0,
    )
    matches = 4 * cores()

    async def play() -> list[MatchOutcome]:
        server = await start_server("127.0.0.1:0")
        try:
            plans = [
                _plan(
                    tmp_path,
                    [_bot(tmp_path, f"spin{m}a", SPINNER), _bot(tmp_path, f"spin{m}b", SPINNER)],
                    settings,
                    f"{clock}{m}",
                )
                for m in range(matches)
            ]
            runs = await asyncio.gather(*(run_series(p, server=server) for p in plans))
        finally:
            await server.stop()
        return [outcome for run in runs for outcome, _ in run]

    return asyncio.run(play())


def test_spinners_crowded_onto_the_cores_never_lose_on_the_cpu_clock(tmp_path: Path) -> None:
    outcomes = _crowd(tmp_path, "cpu")
    assert all(not _timeouts(o) for o in outcomes), [_timeouts(o) for o in outcomes]
    spun = [d for o in outcomes for d in _decisions(o) if d.cpu_ms and d.cpu_ms >= SPIN_S * 900]
    # every seat's spinning decisions were counted, in CPU below the budget, and in wall time
    # (the crowd) mostly far above it
    assert len(spun) >= len(outcomes) * 2 * SPUN_DECISIONS * 0.9
    assert all(d.cpu_ms is not None and d.cpu_ms <= BUDGET_MS for d in spun)
    assert max(d.time_ms for d in spun) > BUDGET_MS


def test_control_the_same_crowd_loses_on_the_wall_clock(tmp_path: Path) -> None:
    outcomes = _crowd(tmp_path, "wall")
    assert any(_timeouts(o) for o in outcomes)


def _one_match(tmp_path: Path, bot: BotSpec, settings: MatchSettings) -> MatchOutcome:
    plan = _plan(
        tmp_path, [bot, _bot(tmp_path, "other", SPINNER.replace("< 3", "< 0"))], settings, "x"
    )
    [(outcome, _)] = asyncio.run(run_series(plan))
    return outcome


def test_a_bot_is_charged_for_the_children_it_forks(tmp_path: Path) -> None:
    settings = MatchSettings(decision_ms=400, time_bank_ms=0, clock="cpu", wall_cap=20.0)
    outcome = _one_match(tmp_path, _bot(tmp_path, "forker", FORKER), settings)
    [detail] = _timeouts(outcome)
    assert "of CPU" in detail and "wall-clock cap" not in detail
    assert [f.seat for f in outcome.forfeits] == [0]


def test_control_counted_per_process_the_forking_bot_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The meter of the bot's own process alone (its pid's CPU, what RLIMIT_CPU or rusage
    see) misses the children: the same bot keeps within the same allowance."""

    def own_process(process: asyncio.subprocess.Process) -> Callable[[], float]:
        ticks = os.sysconf("SC_CLK_TCK")

        def cpu_s() -> float:
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / ticks

        return cpu_s

    monkeypatch.setattr(series, "_meter", own_process)
    settings = MatchSettings(decision_ms=400, time_bank_ms=0, clock="cpu", wall_cap=20.0)
    outcome = _one_match(tmp_path, _bot(tmp_path, "forker", FORKER), settings)
    assert not _timeouts(outcome)
    assert all(d.cpu_ms is not None and d.cpu_ms < 400 for d in _decisions(outcome))


def test_a_bot_that_sleeps_past_the_wall_cap_loses_on_time(tmp_path: Path) -> None:
    settings = MatchSettings(decision_ms=100, time_bank_ms=0, clock="cpu", wall_cap=3.0)
    outcome = _one_match(tmp_path, _bot(tmp_path, "sleeper", SLEEPER), settings)
    [detail] = _timeouts(outcome)
    assert "wall-clock cap of 300 ms" in detail


def test_control_under_a_wider_cap_the_sleeper_keeps_its_cpu_allowance(tmp_path: Path) -> None:
    settings = MatchSettings(decision_ms=100, time_bank_ms=0, clock="cpu", wall_cap=40.0)
    outcome = _one_match(tmp_path, _bot(tmp_path, "sleeper", SLEEPER), settings)
    assert not _timeouts(outcome)
    first = next(d for d in _decisions(outcome) if d.seat == 0)
    # asleep 1.5 s of wall time (a standstill of the referee's loop moves some to queued_ms),
    # using next to no CPU
    assert first.time_ms + first.queued_ms >= SLEEP_S * 1000 * 0.95
    assert first.cpu_ms is not None and first.cpu_ms < 100


def test_the_cpu_clock_refuses_to_start_where_it_cannot_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = MatchSettings(decision_ms=100, clock="cpu")
    remote = BotSpec("remote", "remote", ())
    plan = _plan(tmp_path, [remote, _bot(tmp_path, "sleeper", SLEEPER)], settings, "r")
    with pytest.raises(SpecError, match="remote connects on its own"):
        asyncio.run(run_series(plan))
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(CpuClockError, match="needs a referee running as root"):
        make_cpu_group()
    plan = _plan(tmp_path, [_bot(tmp_path, "sleeper", SLEEPER)] * 2, settings, "u")
    with pytest.raises(SpecError, match="needs a referee running as root"):
        asyncio.run(run_series(plan))


# Moves its own process out of its control group (into the hierarchy's root, the referee's),
# then spins ESCAPE_SPIN_S of CPU: a bot that could do so would never be charged.
ESCAPE_SPIN_S = 0.4
ESCAPER = f"""
import os, time
from arena_sdk import Bot as _Bot

ROOTS = ("/sys/fs/cgroup/cpuacct/cgroup.procs", "/sys/fs/cgroup/cgroup.procs")


class Bot(_Bot):
    escaped = False

    def act(self, observation, legal_actions):
        if self.escaped:
            return 0
        self.escaped = True
        for procs in ROOTS:
            try:
                with open(procs, "w") as out:
                    out.write(str(os.getpid()))
                print("escape: moved out through", procs, flush=True)
            except OSError as exc:
                print("escape: refused:", exc, flush=True)
        end = time.process_time() + {ESCAPE_SPIN_S}
        while time.process_time() < end:
            pass
        return 0
"""
BWRAP_PROBLEM = probe_bubblewrap()


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder the sandbox's bot users may read (0755, outside the private /tmp)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-cpu-clock-", dir="/var/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _escape(shared: Path, sandbox: Sandbox | None) -> MatchOutcome:
    escaper = _bot(shared, "escaper", ESCAPER)
    (shared / "escaper.py").chmod(0o644)
    other = _bot(shared, "other", SPINNER.replace("< 3", "< 0"))
    (shared / "other.py").chmod(0o644)
    settings = MatchSettings(decision_ms=200, time_bank_ms=0, clock="cpu", wall_cap=20.0)
    plan = _plan(shared, [escaper, other], settings, "e")
    plan.sandbox = sandbox
    [(outcome, _)] = asyncio.run(run_series(plan))
    return outcome


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=f"no bubblewrap: {BWRAP_PROBLEM}")
def test_a_sandboxed_bot_cannot_leave_its_cpu_group(shared: Path) -> None:
    outcome = _escape(shared, Sandbox(tier=Tier.BUBBLEWRAP))
    [detail] = _timeouts(outcome)
    assert "of CPU" in detail and [f.seat for f in outcome.forfeits] == [0]


def test_control_an_unsandboxed_bot_leaves_its_group_and_is_not_charged(shared: Path) -> None:
    """Tier none runs the bot as the referee's own user, root: it may write the hierarchy's
    files, and leaves its group (why a CPU clock needs a sandbox for bots one does not trust)."""
    outcome = _escape(shared, None)
    assert not _timeouts(outcome)
    first = next(d for d in _decisions(outcome) if d.seat == 0)
    assert first.cpu_ms is not None and first.cpu_ms < ESCAPE_SPIN_S * 1000 / 2
