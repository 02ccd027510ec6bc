"""The interval bench.ismcts_strength gives a bot's score, checked against values worked by hand
from Wilson's formula."""

import pytest

from bench.ismcts_strength import wilson


@pytest.mark.parametrize(
    ("score", "games", "low", "high"),
    [
        (0.0, 100, 0.0, 0.0370),  # z^2 / (n + z^2): a bot that lost every game is not certainly 0
        (1.0, 100, 0.9630, 1.0),
        (0.5, 100, 0.4038, 0.5962),
        (0.56, 100, 0.4622, 0.6532),  # scores ahead, but 100 games do not show it
    ],
)
def test_the_interval_is_wilsons(score: float, games: int, low: float, high: float) -> None:
    found = wilson(score, games)
    assert found == pytest.approx((low, high), abs=5e-4)


def test_the_interval_narrows_with_games_and_always_holds_the_score() -> None:
    for score in (0.0, 0.03, 0.5, 0.9, 1.0):
        widths = []
        for games in (10, 100, 1000):
            low, high = wilson(score, games)
            assert low <= score <= high
            widths.append(high - low)
        assert widths == sorted(widths, reverse=True)
