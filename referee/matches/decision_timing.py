"""A decision's wall clock: from the request's leaving for the bot to its answer's arrival,
less the time the referee's own event loop stood still (the referee's delay, never the bot's)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import structlog

from referee.matches import standstill
from referee.matches.seats import Seat

log = structlog.get_logger("referee.matches.match")


class DecisionTiming:
    """A decision's clock (a seats.DecisionClock). It starts when the request leaves for the
    bot and stops when the answer comes off the stream, and the deadline counts from the
    start: a busy referee's queues are not the bot's time.

    The clock, not asyncio, says when time is up (the decision runs in `asyncio.timeout(None)`,
    which only the clock expires), so that the referee's own delays are never the bot's:
    - until the request leaves there is no deadline, only a check every allowance: a seat whose
      stream has been stalled for a whole allowance (a bot that stops reading, and so never
      gets the request) runs out of time; a request that merely waits in the referee's queue is
      the referee's delay;
    - time the referee's event loop stood still while the bot's clock ran
      (referee.matches.standstill) is given back: the bot's answer may have been in the socket,
      waiting to be read.
    Both are recorded in queued_ms. Nothing here raises: a request whose decision is already
    over is reported unsendable."""

    def __init__(self, allowed_s: float, seat: Seat) -> None:
        self.allowed_s = allowed_s
        self.seat = seat
        self.asked = self.started = time.perf_counter()
        self.sent_at: float | None = None
        self.stopped: float | None = None  # when the answer came in, if the seat says
        self.stalled = False  # the seat's stream would not take the request
        self.over = False
        self._standstills = standstill.watch()
        self._still_at_start = 0.0  # the loop's standstills so far, when the clock started
        self._still_s: float | None = None  # standstill while the clock ran, once it stopped
        self._given_s = 0.0  # standstill given back to the deadline so far
        self._checked = self.asked  # the last check of an unsent request
        self._deadline: asyncio.Timeout | None = None
        self._timer: asyncio.TimerHandle | None = None

    def arm(self, deadline: asyncio.Timeout) -> None:
        """Inside `async with asyncio.timeout(None) as deadline`."""
        self._deadline = deadline
        self._after(self.allowed_s, self._unsent)

    def _after(self, delay_s: float, check: Callable[[], None]) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(delay_s, check)

    def _unsent(self) -> None:
        if self.over:
            return
        if self.sent_at is not None:
            # The request left after the timer was armed: its deadline is this much later.
            # One timer a decision, moved on here at most once, rather than a second timer
            # armed (and the first cancelled) on every send.
            self._after(self.sent_at + self.allowed_s - time.perf_counter(), self._due)
            return
        if self.seat.stalled(self._checked):
            self.stalled = True
            self._expire()
            return
        self._checked = time.perf_counter()
        log.warning("request_waits_in_referee", waited_ms=round(self.queued_ms()))
        self._after(self.allowed_s, self._unsent)

    def _due(self) -> None:
        if self.over or self.stopped is not None:
            return
        owed = self._standstill_s() - self._given_s
        if owed > 0:
            self._given_s += owed
            self._after(owed, self._due)
            return
        self._expire()

    def _expire(self) -> None:
        if self._deadline is not None:
            self._deadline.reschedule(asyncio.get_running_loop().time())

    def _standstill_s(self) -> float:
        if self._still_s is not None:
            return self._still_s
        return self._standstills.so_far() - self._still_at_start

    def sent(self) -> bool:
        if self.over or self.sent_at is not None or self._deadline is None:
            return False
        self.sent_at = self.started = time.perf_counter()
        self._still_at_start = self._standstills.so_far()
        return True  # the deadline's timer is the one arm() set (see _unsent)

    def answered(self) -> None:
        self.stopped = time.perf_counter()
        if self.sent_at is not None:
            self._still_s = self._standstill_s()

    def finish(self) -> None:
        self.over = True
        if self._timer is not None:
            self._timer.cancel()

    def elapsed_ms(self) -> float:
        """The bot's time: from the request's leaving to the answer's arrival, less the time
        the referee stood still in between."""
        if self.sent_at is None:
            return 0.0
        end = time.perf_counter() if self.stopped is None else self.stopped
        return max(0.0, end - self.started - self._standstill_s()) * 1000.0

    def queued_ms(self) -> float:
        """Time the decision waited on the referee: the request before it was sent, the
        referee's standstills while the bot's clock ran, and the answer before the match took
        it."""
        waited = (self.sent_at or time.perf_counter()) - self.asked
        if self.sent_at is not None:
            waited += self._standstill_s()
        if self.stopped is not None:
            waited += time.perf_counter() - self.stopped
        return waited * 1000.0
