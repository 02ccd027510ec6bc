"""What a seat's decisions took, on the wall clock and (under the CPU clock) in CPU time: the
mean and the longest, per match from its replay records, and over many matches."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena_games import replay_file as replay
from pydantic import BaseModel, ConfigDict, Field

# The field's description wherever seat times are shown (standings, the ladder's leaderboard).
TIMES_DESCRIPTION = "its decisions' times, wall clock and CPU (clock = cpu): mean and longest"


class SeatTimes(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    decisions: int = Field(default=0, description="decisions it was timed on")
    wall_mean_ms: float = Field(default=0.0, description="mean wall-clock time of a decision")
    wall_max_ms: float = Field(default=0.0, description="its longest decision, wall clock")
    cpu_mean_ms: float | None = Field(
        default=None, description='mean CPU time of a decision (clock = "cpu"), else null'
    )
    cpu_max_ms: float | None = Field(
        default=None, description="its most CPU in one decision, else null"
    )

    def brief(self) -> str:
        """Mean / longest per decision, CPU first when counted ("" before any decision): the
        one way a terminal table and a web page show it."""
        if not self.decisions:
            return ""
        wall = f"wall {self.wall_mean_ms:.0f}/{self.wall_max_ms:.0f} ms"
        if self.cpu_mean_ms is None or self.cpu_max_ms is None:
            return wall
        return f"cpu {self.cpu_mean_ms:.0f}/{self.cpu_max_ms:.0f} ms, {wall}"

    @classmethod
    def of(cls, times: Iterable[tuple[float, float | None]]) -> SeatTimes:
        """From each decision's (wall ms, CPU ms or None)."""
        timed = list(times)
        if not timed:
            return cls()
        walls = [wall for wall, _ in timed]
        cpus = [cpu for _, cpu in timed if cpu is not None]
        return cls(
            decisions=len(timed),
            wall_mean_ms=round(sum(walls) / len(walls), 3),
            wall_max_ms=max(walls),
            cpu_mean_ms=round(sum(cpus) / len(cpus), 3) if cpus else None,
            cpu_max_ms=max(cpus) if cpus else None,
        )

    @classmethod
    def combined(cls, parts: Sequence[SeatTimes]) -> SeatTimes:
        """Over many matches: each match's mean weighted by its decisions."""
        counted = [part for part in parts if part.decisions]
        decisions = sum(part.decisions for part in counted)
        if not decisions:
            return cls()
        with_cpu = [part for part in counted if part.cpu_mean_ms is not None]
        cpu_decisions = sum(part.decisions for part in with_cpu)
        cpu_total = sum((part.cpu_mean_ms or 0.0) * part.decisions for part in with_cpu)
        return cls(
            decisions=decisions,
            wall_mean_ms=round(sum(p.wall_mean_ms * p.decisions for p in counted) / decisions, 3),
            wall_max_ms=max(part.wall_max_ms for part in counted),
            cpu_mean_ms=round(cpu_total / cpu_decisions, 3) if cpu_decisions else None,
            cpu_max_ms=max((p.cpu_max_ms or 0.0) for p in with_cpu) if with_cpu else None,
        )


def seat_times(records: Iterable[object], seats: int) -> list[SeatTimes]:
    """Per seat, from a match's records: every decision the seat's bot was asked (the ones the
    referee played without asking, for a bot already gone, took no time and are left out)."""
    timed: list[list[tuple[float, float | None]]] = [[] for _ in range(seats)]
    for record in records:
        if not isinstance(record, replay.DecisionRecord):
            continue
        if record.substituted_for is None or record.time_ms > 0 or record.cpu_ms:
            timed[record.seat].append((record.time_ms, record.cpu_ms))
    return [SeatTimes.of(times) for times in timed]
