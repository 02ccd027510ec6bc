"""A machine's speed against the reference machine, for the CPU clock's budget (`[time_control]
speed = "measure"`): a pool of unequal machines (Dask workers) gives each bot the same
computation per decision, as OpenBench scales its clock by each machine's measured speed.

The reference workload is fixed pure-Python integer arithmetic (what most bots here are made
of), timed in the CPU time of the thread that runs it (the referee's other threads are not
counted), the best of a few runs so that a neighbour's load does not count as slowness (CPU
time still grows a little under contention: shared caches). REFERENCE_S is what it took on the
machine the figures were set on; a machine that takes twice as long gets twice the CPU per
decision. The factor goes into the
match settings, so every replay records the factor and the allowances it played under.
"""

from __future__ import annotations

import time

import structlog
from arena_games.match_settings import MatchSettings

log = structlog.get_logger("referee.hosting.machine_speed")

REFERENCE_ROUNDS = 500_000
REFERENCE_S = 0.03  # the reference machine's best time for REFERENCE_ROUNDS (CPython 3.11)
RUNS = 3
SLOWEST, FASTEST = 4.0, 0.25  # a factor outside these is a broken measure, not a machine


def _reference_work(rounds: int) -> int:
    x = 1
    for _ in range(rounds):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
    return x


def reference_cpu_s() -> float:
    """The best CPU time of the reference workload over RUNS runs."""
    best = float("inf")
    for _ in range(RUNS):
        start = time.thread_time()
        _reference_work(REFERENCE_ROUNDS)
        best = min(best, time.thread_time() - start)
    return best


def speed_factor() -> float:
    """How many times slower than the reference machine this one is (0.5: twice as fast)."""
    return round(min(SLOWEST, max(FASTEST, reference_cpu_s() / REFERENCE_S)), 3)


def with_speed(settings: MatchSettings) -> MatchSettings:
    """The settings with speed "measure" resolved on this machine: the allowances scaled by the
    factor, which they record; any other settings as they are (a factor given is one applied)."""
    if settings.speed != "measure":
        return settings
    factor = speed_factor()
    log.info("machine_speed", factor=factor, reference_s=REFERENCE_S)
    return settings.model_copy(
        update={
            "speed": factor,
            "decision_ms": max(1, round(settings.decision_ms * factor)),
            "time_bank_ms": round(settings.time_bank_ms * factor),
        }
    )
