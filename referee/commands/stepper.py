"""`arena replay step`: a replay in the terminal, one decision at a time, as one viewpoint
sees it: the table and the events of the step, stepped with the arrow keys (textual)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from arena_games.replay_file import DecisionRecord, open_replay
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Footer, Static

from referee.printable import visible
from referee.replays.walk import (
    REFEREE,
    Viewer,
    frames,
    log_lines,
    parse_viewer,
    table,
)


@dataclass(frozen=True)
class Step:
    """What the stepper shows at one frame, its text made visible(): names, labels and the
    rendered table come from the file, and a crafted one could hold terminal escapes."""

    heading: str
    board: str
    events: str


def steps(path: Path, viewer_text: str) -> tuple[str, list[Step]]:
    """The title and every frame of the replay as the viewer sees it; replay.ReplayError,
    ValueError (a viewer the match has not) or GameError (moves not legal) otherwise."""
    opened = open_replay(path)
    header = opened.header
    viewer = parse_viewer(viewer_text, len(header.seats))
    names = ", ".join(f"seat {s.seat}: {s.name}" for s in header.seats)
    shown = viewer if isinstance(viewer, str) else f"seat {viewer}"
    title = visible(f"{header.game} {header.match_id} ({names}) as {shown}")
    out = [
        Step(
            visible(_heading(frame.number, len(opened.state.history), frame.decision, viewer)),
            visible(table(opened.state, viewer)),
            visible("\n".join(log_lines(frame, viewer)) or "(nothing)"),
        )
        for frame in frames(opened)
    ]
    return title, out


def _heading(number: int, step: int, decision: DecisionRecord | None, viewer: Viewer) -> str:
    if decision is None:
        return f"frame {number}, step {step}: the table before the first decision"
    if viewer in (REFEREE, decision.seat):
        return f"frame {number}, step {step}: seat {decision.seat} chose {decision.label}"
    return f"frame {number}, step {step}: seat {decision.seat} decided"


class Stepper(App[None]):
    """Left and right step, Home and End jump, q quits."""

    CSS = """
    #position { height: 1; background: $primary; color: $text; padding: 0 1; }
    #board { width: 2fr; border: round $secondary; }
    #events { width: 1fr; border: round $secondary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "previous"),
        Binding("right", "move(1)", "next"),
        Binding("home", "jump(0)", "first"),
        Binding("end", "jump(-1)", "last"),
        Binding("q", "quit", "quit"),
    ]

    def __init__(self, title: str, shown: list[Step]) -> None:
        super().__init__()
        self.title = title
        self.shown = shown
        self.index = 0

    def compose(self) -> ComposeResult:
        yield Static(id="position")
        with Horizontal():
            with VerticalScroll(id="board"):
                yield Static(id="board-text")
            with VerticalScroll(id="events"):
                yield Static(id="events-text")
        yield Footer()

    def on_mount(self) -> None:
        self._draw()

    def action_move(self, by: int) -> None:
        self.index = max(0, min(len(self.shown) - 1, self.index + by))
        self._draw()

    def action_jump(self, to: int) -> None:
        self.index = to if to >= 0 else len(self.shown) - 1
        self._draw()

    def _draw(self) -> None:
        step = self.shown[self.index]
        position = f"{self.title}  |  {step.heading}  ({self.index}/{len(self.shown) - 1})"
        self.query_one("#position", Static).update(Text(position))
        self.query_one("#board-text", Static).update(Text(step.board))
        self.query_one("#events-text", Static).update(Text(step.events))
