"""`arena replay step`: the textual stepper driven headless by its test pilot, as a person
at the keyboard would."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import Static

from referee.commands.stepper import Stepper, steps


def test_the_arrow_keys_step_through_the_match_as_the_seat_sees_it(
    replays: dict[str, Path],
) -> None:
    title, shown = steps(replays["opposing-force"], "1")
    assert "as seat 1" in title
    assert "seat 1 holds:" in shown[0].board and "seat 0 holds:" not in shown[0].board

    async def drive() -> None:
        app = Stepper(title, shown)
        async with app.run_test(size=(140, 50)) as pilot:
            board = app.query_one("#board-text", Static)
            events = app.query_one("#events-text", Static)
            position = app.query_one("#position", Static)
            assert str(board.content) == shown[0].board
            await pilot.press("right", "right", "right")
            assert app.index == 3
            assert str(board.content) == shown[3].board
            assert str(events.content) == shown[3].events
            assert "frame 3" in str(position.content)
            await pilot.press("left")
            assert str(board.content) == shown[2].board
            await pilot.press("end")
            assert str(board.content) == shown[-1].board
            await pilot.press("right")  # past the end: stays on the last frame
            assert app.index == len(shown) - 1
            await pilot.press("home")
            assert app.index == 0
            await pilot.press("q")
        assert app.return_code == 0

    asyncio.run(drive())


def test_a_seat_reads_who_decided_but_not_what_another_seat_chose(
    replays: dict[str, Path],
) -> None:
    _, shown = steps(replays["capture-the-commander"], "0")
    headings = [step.heading for step in shown[1:]]
    assert any(h.endswith("seat 1 decided") for h in headings)
    assert not any("seat 1 chose" in h for h in headings)
    assert any("seat 0 chose attack" in h for h in headings)
    _, as_referee = steps(replays["capture-the-commander"], "referee")
    assert not any(step.heading.endswith("decided") for step in as_referee)
