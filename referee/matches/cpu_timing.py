"""A decision's CPU clock (`clock = "cpu"`): the allowance is counted in the CPU seconds the
bot's whole process tree used between the request's leaving and the answer's arrival, read from
its control group (referee/bots/cpu_group.py), with a wall-clock cap of wall_cap times the
allowance, so that a bot that sleeps or blocks still runs out of time.

The kernel cannot wake the referee when a group has used so much CPU, so the clock checks on a
timer: armed at the CPU left, divided by the cores (a tree of processes on every core uses
that much CPU fastest), and re-armed at what is left after each reading. A bot that computes
on one core is read about log2(allowance / MIN_STEP_S) times a decision, one that waits on
nothing a few times, each reading one small file (bench.wire measures it). The timer only
bounds how late the referee notices a bot that never answers: an answer is judged on the CPU
its tree had used when it arrived, so a tree that overshot between two readings still loses.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from referee.matches.decision_timing import DecisionTiming
from referee.matches.seats import Seat

MIN_STEP_S = 0.002  # the shortest re-check: a few scheduler ticks of the bot's CPU


def cores() -> int:
    """The cores this referee (and the bots it starts) may run on."""
    return max(1, len(os.sched_getaffinity(0)))


class CpuTiming(DecisionTiming):
    """A DecisionTiming whose allowance is CPU time of the seat's tree, capped in wall time;
    its wall time (elapsed_ms) is still what the replay's time_ms records."""

    def __init__(
        self, allowed_s: float, seat: Seat, cpu_s: Callable[[], float], wall_cap: float
    ) -> None:
        super().__init__(allowed_s, seat)
        self.cpu_s = cpu_s
        self.wall_cap_s = allowed_s * wall_cap
        self.capped = False  # ran out of wall time, not of CPU time
        self._cpu_at_send: float | None = None
        self._cpu_at_answer: float | None = None
        self._cores = cores()

    def sent(self) -> bool:
        if not super().sent():
            return False
        self._cpu_at_send = self.cpu_s()
        return True

    def answered(self) -> None:
        super().answered()
        if self._cpu_at_send is not None:
            self._cpu_at_answer = self.cpu_s()

    def _due(self) -> None:
        if self.over or self.stopped is not None:
            return
        wall_left = self.wall_cap_s - self.elapsed_ms() / 1000.0
        if wall_left <= 0:
            self.capped = True
            self._expire()
            return
        cpu_left = self.allowed_s - self.cpu_ms() / 1000.0
        if cpu_left <= 0:
            self._expire()
            return
        self._after(max(MIN_STEP_S, min(cpu_left / self._cores, wall_left)), self._due)

    def cpu_ms(self) -> float:
        """The CPU the seat's tree used from the request's leaving to the answer's arrival (to
        now, before the answer)."""
        if self._cpu_at_send is None:
            return 0.0
        end = self._cpu_at_answer if self._cpu_at_answer is not None else self.cpu_s()
        return max(0.0, end - self._cpu_at_send) * 1000.0

    def over_time(self) -> bool:
        """Whether an answer that came in is late all the same: its tree used more CPU than
        allowed between two readings, or it came after the wall cap."""
        if self.elapsed_ms() > self.wall_cap_s * 1000.0:
            self.capped = True
            return True
        return self.cpu_ms() > self.allowed_s * 1000.0
