"""The geometry of a bot's rating chart, drawn as SVG by the bot's page itself (ladder_bot.html):
no script and no font from anywhere, so it holds under any Content-Security-Policy and shows
with scripts off. x is the bot's rated matches in their order (axis "matches"), or the time
each rating moved (axis "time": a quiet week is a long flat stretch); y openskill's mu with its 95%
band (mu -+ 1.96 sigma, as the versions table gives it). Each version is a segment of its own
(a new version starts again from openskill's defaults), with a vertical mark where it took
over."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from tournaments.read_models.history_models import BotHistory, HistoryPoint

WIDTH, HEIGHT = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 12, 30
Z95 = 1.96
Axis = Literal["matches", "time"]


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    point: HistoryPoint


@dataclass(frozen=True)
class Segment:
    version: str
    line: str  # an SVG polyline's points
    band: str  # an SVG polygon's points


@dataclass(frozen=True)
class Chart:
    axis: Axis
    width: int
    height: int
    dots: list[Dot]
    segments: list[Segment]
    changes: list[tuple[float, str]]  # (x, the version that took over)
    ticks: list[tuple[float, str]]  # (y, its label)
    dates: list[tuple[float, str]]  # (x, a UTC time) under the first (middle) and last point
    bottom: float
    left: float
    right: float


def chart(history: BotHistory, axis: Axis = "matches") -> Chart | None:
    """The chart of the series over its matches or over time; None when it has no point."""
    points = history.points
    if not points:
        return None
    low = min(p.mu - Z95 * p.sigma for p in points)
    high = max(p.mu + Z95 * p.sigma for p in points)
    low, high = (low - 1, high + 1) if high - low < 2 else (low, high)
    span_x = WIDTH - LEFT - RIGHT
    bottom = HEIGHT - BOTTOM
    # When each rating moved: a match is rated once its deal's last seating ends, which may be
    # after later matches finished, so the running latest finish, never going back in time.
    finishes = (datetime.fromisoformat(p.finished_at).timestamp() for p in points)
    times = list(itertools.accumulate(finishes, max))
    first, span_t = times[0], times[-1] - times[0]
    by_time = axis == "time" and span_t > 0  # all in one second: the matches' order

    def x(i: int) -> float:
        if by_time:
            return LEFT + span_x * (0.01 + 0.98 * (times[i] - first) / span_t)
        return LEFT + span_x * (i + 0.5) / len(points)

    def y(value: float) -> float:
        return round(TOP + (bottom - TOP) * (high - value) / (high - low), 1)

    dots = [Dot(round(x(i), 1), y(p.mu), p) for i, p in enumerate(points)]
    segments: list[Segment] = []
    run: list[tuple[int, HistoryPoint]] = []
    for i, p in enumerate(points):
        if run and p.version != run[-1][1].version:
            segments.append(_segment(run, x, y))
            run = []
        run.append((i, p))
    segments.append(_segment(run, x, y))
    before = 0.0 if by_time else span_x / len(points) / 2  # the mark just left of its point
    changes = [
        (round(x(i) - before, 1), p.version) for i, p in enumerate(points) if p.version_change
    ]
    ticks = [(y(v), f"{v:.0f}") for v in (low, (low + high) / 2, high)]
    dates = [(dots[0].x, _when(points[0])), (dots[-1].x, _when(points[-1]))]
    if by_time:
        dates[-1] = (dots[-1].x, _when_utc(times[-1]))
        dates.insert(1, ((dates[0][0] + dates[1][0]) / 2, _when_utc(first + span_t / 2)))
    edges = (bottom, LEFT, WIDTH - RIGHT)
    return Chart(axis, WIDTH, HEIGHT, dots, segments, changes, ticks, dates, *edges)


def _segment(
    run: list[tuple[int, HistoryPoint]], x: Callable[[int], float], y: Callable[[float], float]
) -> Segment:
    line = " ".join(f"{x(i):.1f},{y(p.mu)}" for i, p in run)
    upper = [f"{x(i):.1f},{y(p.mu + Z95 * p.sigma)}" for i, p in run]
    lower = [f"{x(i):.1f},{y(p.mu - Z95 * p.sigma)}" for i, p in reversed(run)]
    return Segment(run[0][1].version, line, " ".join(upper + lower))


def _when(point: HistoryPoint) -> str:
    """YYYY-MM-DD HH:MM (UTC) of the point's match."""
    return point.finished_at[:16].replace("T", " ")


def _when_utc(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M")
