"""The viewer spends a seat's time bank in the match's own clock: a replay played under
clock = "cpu" spends it by each decision's CPU time, not by its wall time."""

from __future__ import annotations

import json
from pathlib import Path

from referee.replays.viewer.model import load
from tests.referee.replays.viewer.match_replays import play

DECISION_MS = 5000  # match_replays.play's
SLOW_MS = DECISION_MS + 400.0  # each of seat 0's decisions, on the wall clock


def _as_played(replay: Path, out: Path, cpu_ms: float | None) -> Path:
    """The replay, with seat 0's every decision slow on the wall clock, and (cpu_ms given)
    played under the CPU clock, using cpu_ms of CPU each."""
    lines = []
    for line in replay.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "header" and cpu_ms is not None:
            record["settings"]["clock"] = "cpu"
        if record["type"] == "decision" and record["seat"] == 0:
            record["time_ms"] = SLOW_MS
            if cpu_ms is not None:
                record["cpu_ms"] = cpu_ms
        lines.append(json.dumps(record))
    out.write_text("\n".join(lines) + "\n")
    return out


def _last_bank(path: Path) -> float:
    model = load(path, "referee")
    bank: float = model["frames"][-1]["clocks"][0]["bank_ms"]
    return bank


def test_the_bank_is_spent_in_cpu_time_under_the_cpu_clock(tmp_path: Path) -> None:
    replay = play("opposing-force", ["example:random", "example:random"], tmp_path / "r")
    cpu = _as_played(replay, tmp_path / "cpu.jsonl", cpu_ms=1.0)
    assert _last_bank(cpu) == 5000  # the default bank, untouched: 1 ms of CPU a decision
    wall = _as_played(replay, tmp_path / "wall.jsonl", cpu_ms=None)  # control
    assert _last_bank(wall) == 0  # 400 ms over, decision after decision
