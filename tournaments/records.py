"""What a tournament keeps of one finished match: the unit that standings, ratings and SPRT read."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from referee.matches.seat_times import SeatTimes


@dataclass(frozen=True)
class MatchRecord:
    match_id: str
    # Matches of one deal share it: the same seed replayed with the seats rotated.
    deal: str
    bots: tuple[str, ...]  # the bot's name in each seat, seat 0 first
    ranks: tuple[int, ...]  # 0 is first; seats that tie share a rank
    scores: tuple[float, ...]
    reason: str
    forfeits: tuple[tuple[int, str, str], ...] = ()  # (seat, cause, detail)
    replay: str | None = None
    decisions: int = 0
    # Per seat: decisions the referee played for it under the random policy (misbehaviour).
    substituted: tuple[int, ...] = ()
    # Per seat: its decisions' wall-clock and CPU times, mean and longest (() before they were
    # kept).
    times: tuple[SeatTimes, ...] = ()

    def outcome_of(self, bot: str) -> str:
        """'win', 'draw' or 'loss' for the bot's first seat: a shared first place that not
        everyone shares (a team's win) is a win; everyone sharing it is a draw."""
        seat = self.bots.index(bot)
        if len(set(self.ranks)) == 1:
            return "draw"
        return "win" if self.ranks[seat] == 0 else "loss"

    def points(self, bot: str) -> float:
        """The share of the other seats the bot finished ahead of, a tie counting half: at a
        two-seat table 1 for a win, 1/2 for a draw, 0 for a loss, as in chess."""
        seat = self.bots.index(bot)
        mine = self.ranks[seat]
        others = [r for s, r in enumerate(self.ranks) if s != seat]
        return sum(1.0 if mine < r else 0.5 if mine == r else 0.0 for r in others) / len(others)


def finished_columns(record: MatchRecord, worker: str, seconds: float) -> tuple[object, ...]:
    """A finished match's columns as the tournament and ladder stores write them: ranks,
    scores, reason, forfeits, replay, decisions, worker, seconds, substituted."""
    return (
        json.dumps(record.ranks),
        json.dumps(record.scores),
        record.reason,
        json.dumps(record.forfeits),
        record.replay,
        record.decisions,
        worker,
        seconds,
        json.dumps(record.substituted),
    )


def substituted_of(column: object) -> tuple[int, ...]:
    """The substituted column read back; a match recorded before it was kept has ()."""
    return tuple(json.loads(str(column))) if column else ()


def add_substituted_column(path: Path, old: str, new: str) -> None:
    """Bring a store written before the matches table kept substitutions (schema version old)
    to version new: the column is added, empty for the matches already there. Once, whoever
    opens it first (the write lock decides); sqlite3.Error when the file cannot be written."""
    connection = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        (version,) = connection.execute(
            "SELECT value FROM meta WHERE key = 'schema_version'"
        ).fetchone()
        if version == old:
            connection.execute("ALTER TABLE matches ADD COLUMN substituted TEXT")
            connection.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (new,))
        connection.execute("COMMIT")
    finally:
        connection.close()


# Each finished match's seat times, in a table of their own (no schema version: a store that
# has none yet gets it when opened for writing, and its earlier matches have no times).
SEAT_TIMES_TABLE = (
    "CREATE TABLE IF NOT EXISTS seat_times (match_id TEXT PRIMARY KEY, times TEXT NOT NULL)"
)


def save_times(connection: sqlite3.Connection, record: MatchRecord) -> None:
    """Keep the record's seat times (inside the caller's transaction)."""
    if record.times:
        times = json.dumps([t.model_dump(mode="json") for t in record.times])
        connection.execute(
            "INSERT OR REPLACE INTO seat_times VALUES (?, ?)", (record.match_id, times)
        )


def read_times(connection: sqlite3.Connection) -> dict[str, tuple[SeatTimes, ...]]:
    """Every match's seat times, by match id; none from a store opened read-only before it
    had the table."""
    try:
        rows: Iterable[tuple[str, str]] = connection.execute(
            "SELECT match_id, times FROM seat_times"
        ).fetchall()
    except sqlite3.OperationalError:  # no such table
        return {}
    return {match_id: times_of(times) for match_id, times in rows}


def times_of(column: str) -> tuple[SeatTimes, ...]:
    """A seat_times row's times read back, one per seat."""
    return tuple(SeatTimes.model_validate(t) for t in json.loads(column))
