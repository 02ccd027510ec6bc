"""What every benchmark hands back: a table of rows, the ratios against its baseline and its goals,
printed for people and written as JSON to bench/results/<name>.json for machines, with the
machine's load average when the benchmark started: a figure taken at a load over 1 is printed
as not evidence.

Every benchmark imports this module as it starts (bench.all runs each in its own process), so
the load taken at import is the load at the start of that benchmark.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
# Above this 1-minute load average the machine was busy with other work: not evidence.
EVIDENCE_LOAD = 1.0
# What settle waits for: well under EVIDENCE_LOAD, as a benchmark adds its own load at once.
SETTLED_LOAD = 0.5


def machine_load() -> float:
    """The 1-minute load average now."""
    return round(os.getloadavg()[0], 2)


LOAD_AT_START = machine_load()


def settle(within_s: float) -> float:
    """Wait, at most within_s seconds, for the 1-minute load average to fall under
    SETTLED_LOAD, and give the load it came to. The work before (often the last benchmark, or
    the last size of this one) stays in that average for a minute or two after it ends: a run
    that starts at once is taken at a load over 1 on an idle two-core machine."""
    deadline = time.monotonic() + within_s
    if machine_load() >= SETTLED_LOAD:
        print(f"waiting for the load average ({machine_load():.2f}) to settle", file=sys.stderr)
    while machine_load() >= SETTLED_LOAD and time.monotonic() < deadline:
        time.sleep(2)
    return machine_load()


def evidence(load: float) -> bool:
    return load <= EVIDENCE_LOAD


def load_label(load: float) -> str:
    """The load beside a figure, marked when the figure is not evidence."""
    return f"{load:.2f}" if evidence(load) else f"{load:.2f} (not evidence)"


@dataclass(frozen=True)
class Goal:
    """A target of the issue, and whether this run met it."""

    text: str
    met: bool
    measured: str


@dataclass
class Report:
    name: str  # the JSON file's stem
    title: str
    rows: list[dict[str, object]]
    facts: dict[str, object] = field(default_factory=dict)
    goals: list[Goal] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    load: float = LOAD_AT_START  # the 1-minute load average when the benchmark started

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "rows": self.rows,
            "facts": self.facts,
            "goals": [asdict(g) for g in self.goals],
            "notes": self.notes,
            "load": self.load,
            "evidence": evidence(self.load),
        }


def child_result(command: list[str], what: str, timeout_s: float) -> dict[str, object]:
    """Run one phase of a benchmark in a process of its own and return the JSON object on the
    last line of its output; RuntimeError naming what failed, with the end of its stderr."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed: {done.stderr.strip()[-800:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def percentile(values: Sequence[float], q: float) -> float:
    """The value below which a fraction q of values lie (nearest rank)."""
    if not values:
        raise ValueError("no values to take a percentile of")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency(values: Sequence[float]) -> dict[str, float]:
    """n, median and p99 of milliseconds."""
    return {
        "n": len(values),
        "median_ms": round(statistics.median(values), 4),
        "p99_ms": round(percentile(values, 0.99), 4),
    }


def render(report: Report) -> str:
    lines = [report.title, ""]
    if report.rows:
        columns = list(dict.fromkeys(key for row in report.rows for key in row))
        numeric = [all(_is_number(row.get(c, 0)) for row in report.rows) for c in columns]
        cells = [columns] + [[_cell(row.get(c, "")) for c in columns] for row in report.rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
        lines += [_line(r, widths, numeric) for r in cells[:1]]
        lines.append("  ".join("-" * w for w in widths))
        lines += [_line(r, widths, numeric) for r in cells[1:]]
        lines.append("")
    lines += [f"{key}: {_cell(value)}" for key, value in report.facts.items()]
    lines.append(f"load average (1 min) at the start: {load_label(report.load)}")
    at = "" if evidence(report.load) else f"; load {report.load:.2f}, not evidence"
    for goal in report.goals:
        verdict = "MET" if goal.met else "NOT MET"
        lines.append(f"goal {verdict}: {goal.text} ({goal.measured}{at})")
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)


def emit(report: Report, folder: Path = RESULTS) -> Path:
    """Print the report and write it as JSON; returns the file written."""
    print(render(report), flush=True)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{report.name}.json"
    path.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    print(f"(written to {path})", flush=True)
    return path


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _cell(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: "-"}[value]
    if isinstance(value, float):
        if value >= 100:
            return f"{value:,.0f}"
        return f"{value:.3g}" if value < 10 else f"{value:.1f}"
    return str(value)


def _line(cells: list[str], widths: list[int], numeric: list[bool]) -> str:
    # Numbers read best right-aligned, words left-aligned.
    return "  ".join(
        text.rjust(width) if right else text.ljust(width)
        for text, width, right in zip(cells, widths, numeric, strict=True)
    ).rstrip()
