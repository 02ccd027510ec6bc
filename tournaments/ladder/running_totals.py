"""The leaderboard's sums over every finished match, kept up to date rather than recomputed on
every read: a ladder runs for weeks and its pages are read far more often than it plays.
Each version's seat times (mean and longest decision) are kept the same way.

A finished match is never changed, and the matches are rated in one order (matches.rated: 1,
2, ...), so the points and meetings of each pair of versions are sums that only grow (but for
the operator's discard, which computes every rating again and moves RATINGS_EPOCH on: the sums
start again): a read
adds the matches rated since the last read, and nothing else. The Bradley-Terry Elo is fitted
again from the two-seat score matrix (as many rows as versions, whatever the number of
matches) only when a match was added or a version came.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from referee.matches.seat_times import SeatTimes
from tournaments import ratings
from tournaments.ladder.database import RATINGS_EPOCH, LadderStore
from tournaments.records import MatchRecord

Pair = tuple[str, str]


@dataclass
class RunningTotals:
    rated: int = 0  # the last match counted, by its place in the rating order
    points: dict[Pair, float] = field(default_factory=dict)  # (a, b): a's points against b
    meetings: dict[Pair, int] = field(default_factory=dict)
    times: dict[str, SeatTimes] = field(default_factory=dict)  # each version's decisions
    _time_parts: dict[str, list[SeatTimes]] = field(default_factory=dict)
    epoch: str | None = None  # the ratings' computation the sums are of (a discard moves it)
    _elo: tuple[tuple[int, tuple[str, ...]], dict[str, tuple[float, float]]] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def update(self, store: LadderStore) -> int:
        """Count the matches rated since the last update; how many there were. After the
        ratings were computed again (a discard), from the start."""
        with self._lock:
            epoch = store.meta(RATINGS_EPOCH)
            if epoch != self.epoch:
                self.rated, self.points, self.meetings, self._elo = 0, {}, {}, None
                self.times, self._time_parts = {}, {}
                self.epoch = epoch
            new = store.rated_since(self.rated)
            if new:
                self._add_times(store.times_rated(self.rated, new[-1][0]))
            for rated, record in new:
                self._add(record)
                self.rated = rated
            return len(new)

    def _add_times(self, matches: list[tuple[list[str], tuple[SeatTimes, ...]]]) -> None:
        """Each seat's times into its version's, combined from every match as the tournament
        standings combine them (combining combined means would round at every match)."""
        touched: set[str] = set()
        for keys, times in matches:
            for key, seat in zip(keys, times, strict=True):
                self._time_parts.setdefault(key, []).append(seat)
                touched.add(key)
        for key in touched:
            self.times[key] = SeatTimes.combined(self._time_parts[key])

    def _add(self, record: MatchRecord) -> None:
        for i, a in enumerate(record.bots):
            for j, b in enumerate(record.bots):
                if i != j:
                    ahead, tie = (
                        record.ranks[i] < record.ranks[j],
                        record.ranks[i] == record.ranks[j],
                    )
                    self.points[a, b] = self.points.get((a, b), 0.0) + (
                        1.0 if ahead else 0.5 if tie else 0.0
                    )
                    self.meetings[a, b] = self.meetings.get((a, b), 0) + 1

    def elo(self, versions: Sequence[str]) -> dict[str, tuple[float, float]]:
        """Each version's Elo and its 95% error, from two-seat matches only; fitted once per
        state of the totals."""
        key = (self.rated, tuple(versions))
        with self._lock:
            if self._elo is not None and self._elo[0] == key:
                return self._elo[1]
            index = {v: i for i, v in enumerate(versions)}
            scored = [[0.0] * len(versions) for _ in versions]
            for (a, b), points in self.points.items():
                if a in index and b in index:
                    scored[index[a]][index[b]] = points
            elo, covariance = ratings.fit_scored(versions, scored)
            fitted = {v: (elo[v], ratings.error95(covariance, i)) for v, i in index.items()}
            self._elo = (key, fitted)
            return fitted
