"""What a seat's time counts in, as its MatchStart tells it: a bot that paces itself reads its
clock here (budget_of(match) in on_match_start)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from arena.v1 import referee_pb2 as pb


@dataclass(frozen=True)
class Budget:
    """The seat's time control. clock "wall": wall-clock time from the request's send to the
    answer's arrival. clock "cpu": the CPU time of the bot's whole process tree (children
    included; time.process_time() counts only the calling process) in that span, and the
    decision also ends once its wall time reaches wall_cap times its allowance (so sleeping
    or blocking still loses on time)."""

    clock: Literal["wall", "cpu"]
    decision_ms: int
    time_bank_ms: int
    wall_cap: float | None  # None on the wall clock


def budget_of(match: pb.MatchStart) -> Budget:
    """The seat's Budget; a referee from before the clock was told means the wall clock."""
    control = match.time_control
    cpu = control.clock == pb.CLOCK_CPU
    return Budget(
        clock="cpu" if cpu else "wall",
        decision_ms=control.decision_ms,
        time_bank_ms=control.time_bank_ms,
        wall_cap=control.wall_cap if cpu else None,
    )
