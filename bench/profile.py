"""Profile a benchmark module with pyinstrument, sampling on CPU time by default.

Wall-clock samples on a shared, loaded machine charge the time the process waited for a core to
whatever line it happened to be on; CPU-time samples do not. The clock is the whole process's
CPU time, so samples taken while the event loop waits in epoll are gRPC's own threads at work.

Run: .venv/bin/python -m bench.profile [--wall] [--top N] [--focus FUNCTION] [--out FILE]
        MODULE [ARGS ...]
e.g. .venv/bin/python -m bench.profile --focus play_out bench.engines --only playouts
Prints the functions with the most own time, and the project's functions with the most time
including their callees, as % of the whole run; writes them and pyinstrument's call tree to
bench/results/profile-<MODULE>.txt.
"""

from __future__ import annotations

import argparse
import runpy
import sys
import time
from collections import defaultdict
from pathlib import Path

from bench.bench_report import RESULTS

try:
    from pyinstrument import Profiler
    from pyinstrument.frame import Frame
    from pyinstrument.renderers import ConsoleRenderer
    from pyinstrument.stack_sampler import get_stack_sampler
except ImportError:  # a dev tool: say how to get it rather than fail with a traceback
    sys.exit("bench.profile needs pyinstrument: .venv/bin/pip install pyinstrument==5.1.3")

PROJECT = ("referee/", "tournaments/", "arena_sdk/", "example_bots/")


def profile(module: str, args: list[str], cpu: bool) -> Profiler:
    if cpu:
        # pyinstrument's hook for a custom clock (its own tests use it for a fake one).
        get_stack_sampler().timer_func = time.process_time
    profiler = Profiler(interval=0.0005)
    sys.argv = [module, *args]
    profiler.start()
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        if stop.code not in (None, 0):
            raise
    finally:
        profiler.stop()
    return profiler


def where(frame: Frame) -> str:
    return f"{frame.file_path_short}:{frame.line_no or ''} {frame.function}"


def roots(frame: Frame, focus: str | None) -> list[Frame]:
    """The outermost frames of the function focus (the whole run when None)."""
    if focus is None or frame.function == focus:
        return [frame]
    return [r for child in frame.children for r in roots(child, focus)]


def tally(tops: list[Frame]) -> tuple[dict[str, float], dict[str, float]]:
    """(own time, time including callees) per function; a recursive call counts once."""
    own: defaultdict[str, float] = defaultdict(float)
    total: defaultdict[str, float] = defaultdict(float)
    stack: list[tuple[Frame, frozenset[str]]] = [(top, frozenset()) for top in tops]
    while stack:
        frame, above = stack.pop()
        key = where(frame)
        own[key] += frame.total_self_time
        if key not in above:
            total[key] += frame.time
        stack += [(child, above | {key}) for child in frame.children if not child.is_synthetic]
    return own, total


def summary(profiler: Profiler, top: int, clock: str, focus: str | None) -> str:
    session = profiler.last_session
    assert session is not None
    root = session.root_frame()
    tops = roots(root, focus) if root is not None else []
    whole = sum(t.time for t in tops)
    if not whole:
        return f"no samples{f' in {focus}' if focus else ''}"
    own, total = tally(tops)
    mine = {k: v for k, v in total.items() if k.startswith(PROJECT)}
    scope = f"of the time in {focus}" if focus else "of the run"
    lines = [
        f"clock: {clock} time, {whole:.2f} s sampled {scope}; program: {' '.join(sys.argv)}",
        "",
        f"own time (% {scope})",
        *(f"{100 * t / whole:5.1f}%  {k}" for k, t in _most(own, top)),
        "",
        f"project functions, time including callees (% {scope})",
        *(f"{100 * t / whole:5.1f}%  {k}" for k, t in _most(mine, top)),
    ]
    return "\n".join(lines)


def _most(seconds: dict[str, float], top: int) -> list[tuple[str, float]]:
    return sorted(seconds.items(), key=lambda item: -item[1])[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wall", action="store_true", help="sample on wall-clock time")
    parser.add_argument("--top", type=int, default=20, help="functions to list in each table")
    parser.add_argument(
        "--focus", help="share of the time in this function (e.g. play_out), not the whole run"
    )
    parser.add_argument("--out", type=Path, help="default: bench/results/profile-MODULE.txt")
    parser.add_argument("module", help="e.g. bench.wire")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the module's own arguments")
    options = parser.parse_args()
    clock = "wall" if options.wall else "CPU"
    profiler = profile(options.module, options.args, cpu=not options.wall)
    text = summary(profiler, options.top, clock, options.focus)
    print(f"\n{text}")
    path = options.out or RESULTS / f"profile-{options.module}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    tree = profiler.output(ConsoleRenderer(unicode=False, color=False))
    path.write_text(f"{text}\n\n{tree}", encoding="utf-8")
    print(f"(summary and call tree written to {path})")


if __name__ == "__main__":
    main()
