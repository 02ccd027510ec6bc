"""Per-client rate limits of the web servers (the `limits` library, in memory): a client is its
address as the server sees it, so behind a proxy every visitor counts as one. A client over a
limit gets 429 with Retry-After, in one line."""

from __future__ import annotations

import math
import time

from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter


class TooMany(Exception):
    """A client over one of the server's limits; retry_after_s says when it may try again."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class Throttle:
    """At most `rate` (as `limits` writes it: "10/minute") of one kind of event per client."""

    def __init__(self, rate: str, what: str) -> None:
        self.item: RateLimitItem = parse(rate)
        self.what = what
        self.limiter = MovingWindowRateLimiter(MemoryStorage())

    def hit(self, client: str) -> None:
        """Count one event of the client's; TooMany when it is one too many."""
        if not self.limiter.hit(self.item, client):
            raise self._too_many(client)

    def check(self, client: str) -> None:
        """TooMany when the client is over the limit already; counts nothing."""
        if not self.limiter.test(self.item, client):
            raise self._too_many(client)

    def record(self, client: str) -> None:
        """Count one event without refusing it (a refusal of its own follows)."""
        self.limiter.hit(self.item, client)

    def _too_many(self, client: str) -> TooMany:
        stats = self.limiter.get_window_stats(self.item, client)
        wait = max(1, math.ceil(stats.reset_time - time.time()))
        per = f"{self.item.amount} per {self.item.multiples} {self.item.GRANULARITY.name}"
        return TooMany(
            f"too many {self.what} from {client} (at most {per}): retry in {wait} s", wait
        )
