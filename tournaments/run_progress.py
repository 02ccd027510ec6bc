"""How a tournament run reports its progress: the runner calls these, a command draws them.

The runner knows only this protocol, so it runs the same under the terminal's live bar
(tournaments/cli/progress_bar.py), under a test, or with nobody watching (NoProgress).
"""

from __future__ import annotations

from typing import Protocol


class RunProgress(Protocol):
    def start(self, total: int | None, already_done: int) -> None:
        """The run begins: total matches if the format knows it, already_done of them saved."""

    def advance(self) -> None:
        """One more match finished and saved."""

    def note(self, text: str) -> None:
        """A line for whoever watches: a match that failed, the disk low or free again."""

    def stop(self) -> None:
        """The run is over, whatever its end."""


class NoProgress:
    """A run nobody watches: every report is dropped."""

    def start(self, total: int | None, already_done: int) -> None:
        pass

    def advance(self) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def stop(self) -> None:
        pass
