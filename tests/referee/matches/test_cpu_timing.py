"""The CPU clock's timer, on a meter the test drives: it ends a decision when the CPU runs out,
reading the meter a handful of times, and ends a bot that uses none at the wall cap."""

from __future__ import annotations

import asyncio
import time

import pytest

from referee.matches import cpu_timing
from referee.matches.cpu_timing import CpuTiming


class _Seat:
    name = "seat"

    def stalled(self, since: float) -> bool:
        return False


class _Meter:
    """A bot's tree that uses `share` of a core for every second of wall time; counts reads."""

    def __init__(self, share: float) -> None:
        self.share = share
        self.start = time.perf_counter()
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return (time.perf_counter() - self.start) * self.share


def _decide(meter: _Meter, allowed_s: float, wall_cap: float) -> tuple[CpuTiming, float]:
    async def decision() -> tuple[CpuTiming, float]:
        timing = CpuTiming(allowed_s, _Seat(), meter, wall_cap)  # type: ignore[arg-type]
        started = time.perf_counter()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(None) as deadline:
                timing.arm(deadline)
                assert timing.sent()
                await asyncio.sleep(30)  # never answers
        timing.finish()
        return timing, time.perf_counter() - started

    return asyncio.run(decision())


def test_a_bot_on_half_a_core_runs_out_of_cpu_after_twice_its_allowance_in_wall_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cpu_timing, "cores", lambda: 2)
    meter = _Meter(share=0.5)
    timing, wall_s = _decide(meter, allowed_s=0.1, wall_cap=10.0)
    assert not timing.capped and timing.cpu_ms() >= 100
    assert 0.2 <= wall_s < 1.0  # not at the cap (1 s): on the CPU
    # at send, at the allowance, then at the CPU left over the cores (a quarter less each time
    # on half a core), then every MIN_STEP_S: some fifteen readings of 13 us each, against a
    # reading every 2 ms (50) or every 1 ms (100) for a poll
    assert meter.reads <= 20


def test_control_a_bot_that_uses_no_cpu_ends_at_the_wall_cap() -> None:
    meter = _Meter(share=0.0)
    timing, wall_s = _decide(meter, allowed_s=0.1, wall_cap=3.0)
    assert timing.capped and timing.cpu_ms() == 0
    assert 0.3 <= wall_s < 2.0
