"""Every benchmark in turn, each in its own process (so none inherits another's memory or gRPC
state), then bench/results/summary.json with every goal and whether this run met it.

Run: .venv/bin/python -m bench.all [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from bench.bench_report import RESULTS, Report, emit, load_label, settle

SETTLE_S = 180.0  # the longest wait for the last benchmark's load to leave the average

# (module, its arguments for a full run, for a quick one)
BENCHMARKS: list[tuple[str, list[str], list[str]]] = [
    ("engines", [], ["--seconds", "0.5"]),
    ("wire", [], ["--games", "4", "--blocks", "2"]),
    ("throughput", [], ["--matches", "8"]),
    ("scale", ["--settle"], ["--quick"]),
    ("spectator_load", [], ["--matches", "4"]),
]


def run_all(quick: bool) -> Report:
    rows: list[dict[str, object]] = []
    failed: list[str] = []
    for name, full, short in BENCHMARKS:
        command = [sys.executable, "-m", f"bench.{name}", *(short if quick else full)]
        if not quick:
            settle(SETTLE_S)
        print(f"\n$ {' '.join(command[1:])}", flush=True)
        started = time.perf_counter()
        done = subprocess.run(command, check=False)
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            failed.append(name)
            rows.append({"benchmark": name, "goal": "(the benchmark failed)", "met": False})
            continue
        result = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
        for goal in result["goals"] or [{"text": "(no goal: figures only)", "met": None}]:
            rows.append(
                {
                    "benchmark": name,
                    "goal": goal["text"],
                    "met": goal["met"],
                    "measured": goal.get("measured", ""),
                    "load": load_label(result["load"]),
                    "seconds": round(seconds, 1),
                }
            )
    report = Report("summary", "Benchmarks: goals of this run", rows)
    report.notes.append("a goal measured at a load average over 1 is not evidence, met or not")
    if failed:
        report.notes.append(f"failed to run: {', '.join(failed)} (their output is above)")
    if quick:
        report.notes.append("quick run: small sizes, figures are rough")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, about a minute")
    args = parser.parse_args()
    report = run_all(args.quick)
    print()
    emit(report)
    return 1 if any(row["goal"] == "(the benchmark failed)" for row in report.rows) else 0


if __name__ == "__main__":
    sys.exit(main())
