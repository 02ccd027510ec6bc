"""The live progress bar: matches done, the rate, and the time left when the total is known."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from tournaments.run_progress import RunProgress


class MatchProgress(RunProgress):
    """The runner's progress (RunProgress) as a rich bar on the console."""

    def __init__(self, console: Console, title: str, enabled: bool = True) -> None:
        self.console = console
        self.title = title
        self.bar = Progress(
            # The title is the tournament's name, printed as written: never as markup.
            TextColumn("{task.description}", style="bold", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}", markup=False),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=console,
            disable=not enabled,
            transient=False,
        )
        self.task: TaskID | None = None
        self.started_at = 0.0
        self.done_now = 0

    def start(self, total: int | None, already_done: int) -> None:
        self.started_at = time.monotonic()
        self.task = self.bar.add_task(
            self.title, total=total, completed=already_done, rate="- matches/s"
        )
        self.bar.start()

    def advance(self) -> None:
        self.done_now += 1
        elapsed = max(time.monotonic() - self.started_at, 1e-9)
        if self.task is not None:
            self.bar.update(self.task, advance=1, rate=f"{self.done_now / elapsed:.2f} matches/s")

    def note(self, text: str) -> None:
        self.bar.console.print(text, highlight=False, markup=False, soft_wrap=True)

    def stop(self) -> None:
        self.bar.stop()
