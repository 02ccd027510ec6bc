"""Each rated seat's rating after its match (the `rating_history` table): what a bot's chart
and `GET /api/bots/NAME/history` draw.

A point is written in the transaction that rates its match (database.py's `_rate_deal`, once
no seating of the deal is left to play), so the series never shows a rating the leaderboard
did not, nor one that moved while another seating of the deal was in play. When the operator
discards a deal the ratings are computed again from the start (discards.py), and the series is
written again whole from those ratings: no point of a discarded match stays, and every later
point is the rating the ladder now holds.

Elo: openskill's ladder has none of its own, so two-seat matches also get the classic
incremental Elo (K = ELO_K, every version from ELO_START, as its openskill rating starts from
openskill's defaults); it is kept beside mu and sigma, never used to seat or rank.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ELO_START = 1500.0
ELO_K = 32.0


@dataclass(frozen=True)
class RatedMatch:
    """One rated match: its place in the ratings' order and each seat's rating after it."""

    rated: int
    match_id: str
    at: str  # when it finished
    keys: tuple[str, ...]  # the version in each seat
    ranks: tuple[int, ...]
    after: tuple[tuple[float, float], ...]  # (mu, sigma) of each seat after the update


def expected(elo: float, other: float) -> float:
    return 1.0 / (1.0 + float(10.0 ** ((other - elo) / 400.0)))


def elo_after(before: tuple[float, float], ranks: Sequence[int]) -> tuple[float, float]:
    """The two seats' Elo after their match (a lower rank is better; equal ranks a draw)."""
    a, b = before
    score = 1.0 if ranks[0] < ranks[1] else 0.5 if ranks[0] == ranks[1] else 0.0
    change = ELO_K * (score - expected(a, b))
    return a + change, b - change


def record(db: sqlite3.Connection, match_id: str) -> None:
    """The points of a match just rated, from the ratings its versions hold now: called by
    `_rate_deal` after each match's update, in the same transaction."""
    rated, at, bots, ranks = db.execute(
        "SELECT rated, finished_at, bots, ranks FROM matches WHERE match_id = ?", (match_id,)
    ).fetchone()
    keys: list[str] = json.loads(bots)
    after = []
    for key in keys:
        mu, sigma = db.execute("SELECT mu, sigma FROM versions WHERE key = ?", (key,)).fetchone()
        after.append((float(mu), float(sigma)))
    match = RatedMatch(
        int(rated), match_id, str(at), tuple(keys), tuple(json.loads(ranks)), tuple(after)
    )
    _insert(db, match, _last_elo(db, keys))


def rewrite(db: sqlite3.Connection, matches: Iterable[RatedMatch]) -> None:
    """The whole series again, from the ratings computed again (discards.py), in their order."""
    db.execute("DELETE FROM rating_history")
    elo: dict[str, float] = {}
    for match in matches:
        elo.update(_insert(db, match, elo))


def _last_elo(db: sqlite3.Connection, keys: Sequence[str]) -> dict[str, float]:
    found = {}
    for key in keys:
        row = db.execute(
            "SELECT elo FROM rating_history WHERE version = ? AND elo IS NOT NULL "
            "ORDER BY rated DESC LIMIT 1",
            (key,),
        ).fetchone()
        if row is not None:
            found[key] = float(row[0])
    return found


def _insert(db: sqlite3.Connection, match: RatedMatch, elo: dict[str, float]) -> dict[str, float]:
    """Write the match's points, given each version's Elo before it; the Elo after (two seats;
    none otherwise)."""
    after: dict[str, float] = {}
    if len(match.keys) == 2:
        before = (elo.get(match.keys[0], ELO_START), elo.get(match.keys[1], ELO_START))
        after = dict(zip(match.keys, elo_after(before, match.ranks), strict=True))
    db.executemany(
        "INSERT INTO rating_history (rated, seat, match_id, version, at, mu, sigma, elo) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (match.rated, seat, match.match_id, key, match.at, mu, sigma, after.get(key))
            for seat, (key, (mu, sigma)) in enumerate(zip(match.keys, match.after, strict=True))
        ],
    )
    return after
