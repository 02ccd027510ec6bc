"""The rating chart's geometry over matches and over time: a quiet spell is a long stretch over
time and one step over matches; points that all finished in one second fall back to their order;
a match rated after later ones finished (its deal's other seating ended last) never draws the
line back in time."""

from __future__ import annotations

from tournaments.read_models.history_models import BotHistory, HistoryPoint
from tournaments.web.rating_chart import chart


def history(seconds: list[int]) -> BotHistory:
    points = [
        HistoryPoint(
            rated=i + 1,
            finished_at=f"2026-11-28T10:{s // 60:02d}:{s % 60:02d}+00:00",
            match_id=f"t{i}-g0",
            version="a@1" if i < 2 else "a@2",
            mu=25.0 + i,
            sigma=8.0 - i,
            conservative=1.0,
            elo=None,
            version_change=i == 2,
        )
        for i, s in enumerate(seconds)
    ]
    return BotHistory(bot="a", points=points, changes=["a@2"], opponents=["b"], until=None)


def test_over_time_a_quiet_spell_is_a_long_stretch_and_over_matches_one_step() -> None:
    series = history([0, 1, 2, 600])
    by_time, by_match = chart(series, "time"), chart(series)
    assert by_time is not None and by_match is not None
    xs = [d.x for d in by_time.dots]
    assert xs[3] - xs[2] > 100 * (xs[2] - xs[1])  # ten minutes against one second
    steps = [b.x - a.x for a, b in zip(by_match.dots, by_match.dots[1:], strict=False)]
    assert max(steps) - min(steps) < 0.2  # evenly spaced: one step a match
    assert [x for x, _ in by_time.changes] == [xs[2]]  # the change marked at its first point
    assert len(by_time.dates) == 3 and len(by_match.dates) == 2  # the middle time labelled too


def test_points_of_one_second_keep_their_order_over_time() -> None:
    flat = chart(history([5, 5, 5, 5]), "time")
    assert flat is not None
    xs = [d.x for d in flat.dots]
    assert xs == sorted(xs) and len(set(xs)) == 4


def test_a_match_rated_late_is_drawn_when_its_rating_moved() -> None:
    """Rated order is not finishing order: the second point's match finished first, but its
    rating moved only with the first's (its deal waited for another seating)."""
    late = chart(history([10, 4, 20, 30]), "time")
    assert late is not None
    xs = [d.x for d in late.dots]
    assert xs == sorted(xs) and xs[0] == xs[1] < xs[2]
