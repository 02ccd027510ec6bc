"""How long the referee's event loop has stood still: time in which a bot's answer may sit in
the socket unread because the referee was busy (a spectator storm, a slow disk, a burst of
matches). A decision's clock gives that time back to the bot
(referee.matches.decision_timing).

A tick every TICK_S measures how late it runs; lateness past SLACK_S is a standstill. The
standstill still going on is counted too, so a reading taken right after the loop wakes, before
the tick has run, is already right."""

from __future__ import annotations

import asyncio
from weakref import WeakKeyDictionary

TICK_S = 0.005
SLACK_S = 0.004  # ordinary scheduling jitter, not a standstill

_watches: WeakKeyDictionary[asyncio.AbstractEventLoop, Standstills] = WeakKeyDictionary()


class Standstills:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.total_s = 0.0
        self._due = loop.time() + TICK_S
        loop.call_at(self._due, self._tick)

    def _tick(self) -> None:
        now = self.loop.time()
        late = now - self._due
        if late > SLACK_S:
            self.total_s += late
        self._due = now + TICK_S
        self.loop.call_at(self._due, self._tick)

    def so_far(self) -> float:
        """Seconds the loop has stood still since the watch began, the current one included."""
        late = self.loop.time() - self._due
        return self.total_s + (late if late > SLACK_S else 0.0)


def watch() -> Standstills:
    """The running loop's watch, started on first use."""
    loop = asyncio.get_running_loop()
    found = _watches.get(loop)
    if found is None:
        found = _watches[loop] = Standstills(loop)
    return found
