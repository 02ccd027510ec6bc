"""What every benchmark hands back: a table of rows, the ratios against its baseline and its goals,
printed for people and written as JSON to bench/results/<name>.json for machines."""

from __future__ import annotations

import json
import statistics
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


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

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "rows": self.rows,
            "facts": self.facts,
            "goals": [asdict(g) for g in self.goals],
            "notes": self.notes,
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
    for goal in report.goals:
        lines.append(f"goal {'MET' if goal.met else 'NOT MET'}: {goal.text} ({goal.measured})")
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
