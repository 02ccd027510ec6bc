"""A live ladder's state in SQLite (WAL, short transactions): its bots and their versions, every
match scheduled, and every match finished together with the rating update it caused.

`arena ladder serve` is the only writer of matches and ratings; the roster commands (`add`,
`update`, `pause`, ...) and the web layer write bots and versions from other processes at any
time, and serve reads them within a tick. A match is recorded in one transaction with its
rating update, so a kill at any instant leaves either both or neither; a match scheduled and
not finished when serve stopped is discarded at its next start, never half-counted. Every bot
has an author (tournaments/ladder/authors.py): the house when the operator added it without one.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from arena_games.deals import series_secret

from referee.matches.seat_times import SeatTimes
from tournaments import audit_log
from tournaments.ladder import hook_events, rating_history
from tournaments.records import (
    SEAT_TIMES_TABLE,
    MatchRecord,
    add_substituted_column,
    finished_columns,
    save_times,
    substituted_of,
    times_of,
)
from tournaments.schedule import MatchJob

DATABASE = "ladder.sqlite"
SCHEMA_VERSION = 6
UNSUBSTITUTED_VERSION = 1  # before the matches table kept substitutions
AUTHORLESS_VERSION = 2  # before the ladder knew authors
UNSUBMITTED_VERSION = 3  # before authors uploaded versions (built and validated by serve)
UNAUDITED_VERSION = 4  # before the audit log and the freeze's pinned versions
UNHISTORIED_VERSION = 5  # before rating history, challenges, webhooks and seat times
VERSION_STATUSES = ("building", "validating", "live", "failed")
HOUSE = "house"  # the operator's author: of every bot added without one (ladder/authors.py)
WAITING_META = "matchmaking_waiting"  # why serve forms no table now ("": it may), its state's
RATINGS_EPOCH = "ratings_epoch"  # moves on when the ratings are computed again (discards.py)
MU, SIGMA = 25.0, 25.0 / 3  # openskill's defaults: where every version starts

# Version 3: authors, each bot's author (migrate_to_authors adds them to an older store). One
# statement.
AUTHORS_SCHEMA = """
CREATE TABLE authors (
    name TEXT PRIMARY KEY,
    team TEXT,                        -- NULL: a party of one
    token_hash TEXT,                  -- sha256 hex of the author's token; NULL: none works
    created_at TEXT NOT NULL,
    rotated_at TEXT,
    revoked_at TEXT
);
"""

# Version 5: the freeze's pins (tournaments/ladder/freeze.py): each bot's live version at the
# freeze, its rating then, what the final plays and the hidden pages show; and the matches the
# operator discarded (tournaments/ladder/discards.py), why, and what replayed their deal.
FROZEN_SCHEMA = """
CREATE TABLE IF NOT EXISTS discards (
    match_id TEXT PRIMARY KEY REFERENCES matches(match_id),
    at TEXT NOT NULL,
    why TEXT NOT NULL,
    replayed_as TEXT                  -- JSON: the matches that play its deal again, if any
);
CREATE TABLE IF NOT EXISTS frozen (
    bot TEXT PRIMARY KEY REFERENCES bots(name),
    version TEXT NOT NULL REFERENCES versions(key),
    status TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    matches INTEGER NOT NULL
);
"""

# Version 6: what brings authors back. Each rated seat's rating after its match
# (ladder/rating_history.py); challenges, the unrated games an author asks for, and their matches,
# kept apart from the rated ones so that no read of `matches` (the leaderboard, the public pages)
# can show one by mistake (ladder/challenges.py); webhooks and the deliveries of their events
# (ladder/notices.py, ladder/webhooks.py); and each finished match's seat times
# (tournaments/records.py), rated or not.
RETURNS_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS rating_history (
    rated INTEGER NOT NULL,           -- matches.rated: the update's place in the ratings' order
    seat INTEGER NOT NULL,
    match_id TEXT NOT NULL,
    version TEXT NOT NULL,            -- the seat's version key
    at TEXT NOT NULL,                 -- when the match finished
    mu REAL NOT NULL,                 -- the version's rating after the update
    sigma REAL NOT NULL,
    elo REAL,                         -- two seats: its Elo after the update; NULL otherwise
    PRIMARY KEY (rated, seat)
);
CREATE INDEX IF NOT EXISTS rating_history_version ON rating_history (version, rated);
CREATE TABLE IF NOT EXISTS challenges (
    id INTEGER PRIMARY KEY,
    author TEXT NOT NULL REFERENCES authors(name),
    bot TEXT NOT NULL REFERENCES bots(name),
    version TEXT NOT NULL,            -- the challenger's version, as live when asked
    opponents TEXT NOT NULL,          -- JSON: the version keys it plays, as live when asked
    games INTEGER NOT NULL,
    status TEXT NOT NULL,             -- queued, playing, done, stopped
    reason TEXT NOT NULL DEFAULT '',  -- why it stopped, in plain words
    asked_at TEXT NOT NULL,
    done_at TEXT
);
CREATE TABLE IF NOT EXISTS challenge_matches (
    seq INTEGER PRIMARY KEY,
    challenge INTEGER NOT NULL REFERENCES challenges(id),
    match_id TEXT NOT NULL UNIQUE,
    deal TEXT NOT NULL,               -- a name no rated deal has: fresh cards
    bots TEXT NOT NULL,               -- JSON: the version key in each seat
    specs TEXT NOT NULL,              -- JSON: the SPEC in each seat
    status TEXT NOT NULL,             -- scheduled, finished, discarded
    scheduled_at TEXT NOT NULL,
    finished_at TEXT,
    ranks TEXT,
    scores TEXT,
    reason TEXT,
    forfeits TEXT,
    replay TEXT,
    decisions INTEGER,
    worker TEXT,
    seconds REAL,
    substituted TEXT
);
CREATE TABLE IF NOT EXISTS webhooks (
    owner TEXT PRIMARY KEY,           -- an author's name, or '@operator' for the ladder's own
    url TEXT NOT NULL,
    secret TEXT NOT NULL,             -- the HMAC-SHA256 key; shown once, when set
    set_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS deliveries (
    id INTEGER PRIMARY KEY,
    owner TEXT NOT NULL,              -- whose webhook it goes to (webhooks.owner)
    event TEXT NOT NULL,              -- notices.Event
    body TEXT NOT NULL,               -- the JSON POSTed, byte for byte what is signed
    made_at TEXT NOT NULL,
    state TEXT NOT NULL,              -- pending, delivered, gave-up
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at TEXT NOT NULL,            -- when the next attempt is due
    last_outcome TEXT NOT NULL DEFAULT '',  -- the last attempt's HTTP status or error, in short
    delivered_at TEXT
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (state, next_at);
"""
    + SEAT_TIMES_TABLE
    + ";\n"
)

_SCHEMA = (
    """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE bots (
    name TEXT PRIMARY KEY,
    status TEXT NOT NULL,             -- active, paused, retired
    reason TEXT NOT NULL DEFAULT '',  -- why it is paused or retired, and by whom
    remote_token TEXT,                -- a remote bot's secret; NULL for bots the ladder starts
    connected INTEGER NOT NULL DEFAULT 0,  -- a remote bot, as serve last saw it
    added_at TEXT NOT NULL,
    changed_at TEXT NOT NULL,
    author TEXT NOT NULL DEFAULT 'house' REFERENCES authors(name)
);
CREATE TABLE versions (
    key TEXT PRIMARY KEY,             -- NAME@N: what the matches and ratings name
    bot TEXT NOT NULL REFERENCES bots(name),
    number INTEGER NOT NULL,
    spec TEXT NOT NULL,
    added_at TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    matches INTEGER NOT NULL DEFAULT 0,
    content_hash TEXT,                -- an uploaded version's: its folder versions/<hash>
    status TEXT NOT NULL DEFAULT 'live',  -- building, validating, live, failed (VERSION_STATUSES)
    reason TEXT NOT NULL DEFAULT '',  -- why it failed, in plain words; or how it went live
    build_log TEXT,                   -- its build's log, from the ladder's folder
    UNIQUE (bot, number)
);
CREATE TABLE matches (
    seq INTEGER PRIMARY KEY,
    match_id TEXT NOT NULL UNIQUE,
    table_no INTEGER NOT NULL,
    deal TEXT NOT NULL,
    bots TEXT NOT NULL,               -- JSON: the version key in each seat
    specs TEXT NOT NULL,              -- JSON: the SPEC in each seat
    status TEXT NOT NULL,             -- scheduled, finished, discarded
    scheduled_at TEXT NOT NULL,
    finished_at TEXT,
    ranks TEXT,
    scores TEXT,
    reason TEXT,
    forfeits TEXT,
    replay TEXT,
    decisions INTEGER,
    worker TEXT,
    seconds REAL,
    substituted TEXT,                 -- JSON: per seat, decisions the referee played for it
    rated INTEGER UNIQUE              -- the order the ratings were updated in: 1, 2, ...
);
CREATE INDEX matches_status ON matches (status, seq);
"""
    + AUTHORS_SCHEMA
    + FROZEN_SCHEMA
    + audit_log.SCHEMA
    + RETURNS_SCHEMA
)


class LadderStoreError(Exception):
    """A folder with no ladder in it, or a database this version cannot read."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Finished:
    """A finished match as the ladder keeps it."""

    record: MatchRecord
    seq: int
    finished_at: str


# (mu, sigma) of each seat, with the ranks -> the new (mu, sigma) of each seat.
Rater = Callable[[list[tuple[float, float]], tuple[int, ...]], list[tuple[float, float]]]


class LadderStore:
    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.db = connection
        self.path = path

    @classmethod
    def create(cls, folder: Path) -> LadderStore:
        path = folder / DATABASE
        if path.exists():
            raise LadderStoreError(f"{folder} already holds a ladder")
        store = cls(_connect(path), path)
        store.db.executescript(_SCHEMA)
        with store.write():
            store.set_meta("schema_version", str(SCHEMA_VERSION))
            # Every deal's key derives from it; it leaves this file only for the hosts.
            store.set_meta("deal_secret", series_secret(None).hex())
            store.set_meta("created_at", now())
            _add_house(store.db)
        return store

    @classmethod
    def open(cls, folder: Path) -> LadderStore:
        path = folder / DATABASE
        if not path.is_file():
            raise LadderStoreError(f"{folder} holds no ladder (no {DATABASE}): arena ladder init")
        try:
            store = cls(_connect(path), path)
            version = store.meta("schema_version")
        except sqlite3.OperationalError as exc:  # a full disk: no room for its WAL index
            raise LadderStoreError(f"cannot open {path}: {exc} (is its disk full?)") from None
        except sqlite3.DatabaseError as exc:
            raise LadderStoreError(f"{path} is not a ladder database: {exc}") from None
        for old, upgrade, new in _MIGRATIONS:
            if version == str(old):
                try:
                    upgrade(path)
                except sqlite3.Error as exc:
                    store.close()
                    raise LadderStoreError(
                        f"{path} has schema version {version}; upgrading it to "
                        f"{SCHEMA_VERSION} failed: {exc}"
                    ) from None
                version = str(new)
        if version != str(SCHEMA_VERSION):
            raise LadderStoreError(
                f"{path} has schema version {version}, this arena reads {SCHEMA_VERSION}"
            )
        return store

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction, taken at once (BEGIN IMMEDIATE): a reader's view is
        never half of it, and two writers wait for each other instead of failing late."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
            self.db.commit()
        except BaseException:
            # A COMMIT that failed (a full disk) may leave the transaction open: the next
            # BEGIN would fail, and a retry must start from what is on disk.
            if self.db.in_transaction:
                self.db.rollback()
            raise

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """Several reads of one committed state: a writer in another process that commits
        between them is seen by all of them or by none. Inside write() that transaction is the
        snapshot already."""
        if self.db.in_transaction:
            yield self.db
            return
        self.db.execute("BEGIN")  # deferred: WAL fixes the snapshot at its first read
        try:
            yield self.db
        finally:
            self.db.execute("COMMIT")

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def deal_secret(self) -> bytes:
        return bytes.fromhex(self.meta("deal_secret") or "")

    # --- matches ---------------------------------------------------------------------------

    def next_table_no(self) -> int:
        row = self.db.execute("SELECT MAX(table_no) FROM matches").fetchone()
        return 0 if row[0] is None else int(row[0]) + 1

    def schedule(self, table_no: int, jobs: Iterable[MatchJob]) -> None:
        with self.write():
            self.db.executemany(
                "INSERT INTO matches (match_id, table_no, deal, bots, specs, status, "
                "scheduled_at) VALUES (?, ?, ?, ?, ?, 'scheduled', ?)",
                [
                    (j.match_id, table_no, j.deal, json.dumps(j.bots), json.dumps(j.specs), now())
                    for j in jobs
                ],
            )

    def discard(self, match_ids: Iterable[str], rate: Rater) -> None:
        """Discard the matches still scheduled; a deal left with no seating to play has its
        finished matches rated."""
        ids = list(match_ids)
        with self.write():
            deals = {
                str(deal)
                for match_id in ids
                for (deal,) in self.db.execute(
                    "SELECT deal FROM matches WHERE match_id = ? AND status = 'scheduled'",
                    (match_id,),
                )
            }
            self.db.executemany(
                "UPDATE matches SET status = 'discarded' WHERE match_id = ? "
                "AND status = 'scheduled'",
                [(m,) for m in ids],
            )
            for deal in sorted(deals):
                self._rate_deal(deal, rate)

    def unfinished(self) -> list[tuple[int, MatchJob]]:
        """(table number, job) of every match scheduled and neither finished nor discarded."""
        rows = self.db.execute(
            "SELECT table_no, match_id, deal, bots, specs FROM matches "
            "WHERE status = 'scheduled' ORDER BY seq"
        ).fetchall()
        return [
            (t, MatchJob(m, 0, d, tuple(json.loads(b)), tuple(json.loads(s))))
            for t, m, d, b, s in rows
        ]

    def attempts(self, match_id: str) -> int:
        base = match_id.split("~")[0]
        row = self.db.execute(
            "SELECT COUNT(*) FROM matches WHERE match_id = ? OR match_id LIKE ?",
            (base, f"{base}~%"),
        ).fetchone()
        return int(row[0])

    def finish(self, record: MatchRecord, worker: str, seconds: float, rate: Rater) -> None:
        """Record the match, and rate it in the same transaction once no seating of its deal
        is left to play (with the deal's seatings finished before it, in their order): a
        rating that moved while another seating of the deal is in play would tell how that
        deal went, and so something of its cards, to whoever reads the leaderboard."""
        with self.write():
            if not finish_scheduled(self.db, "matches", record, worker, seconds):
                raise LadderStoreError(f"match {record.match_id} was not in flight")
            self._rate_deal(record.deal, rate)

    def _in_play(self, deal: str) -> bool:
        """Whether a seating of the deal is still to play."""
        found = self.db.execute(
            "SELECT 1 FROM matches WHERE deal = ? AND status = 'scheduled' LIMIT 1", (deal,)
        ).fetchone()
        return found is not None

    def _rate_deal(self, deal: str, rate: Rater) -> None:
        """Rate the deal's finished matches not rated yet, in the order they finished, unless
        a seating of it is still to play."""
        if self._in_play(deal):
            return
        rows = self.db.execute(
            "SELECT match_id, bots, ranks FROM matches "
            "WHERE deal = ? AND status = 'finished' AND rated IS NULL ORDER BY seq",
            (deal,),
        ).fetchall()
        for match_id, bots, ranks in rows:
            keys = json.loads(bots)
            updated = rate([self._rating(key) for key in keys], tuple(json.loads(ranks)))
            self.db.execute(
                "UPDATE matches SET rated = (SELECT COALESCE(MAX(rated), 0) + 1 FROM matches) "
                "WHERE match_id = ?",
                (match_id,),
            )
            for key, (mu, sigma) in zip(keys, updated, strict=True):
                self.db.execute(
                    "UPDATE versions SET mu = ?, sigma = ?, matches = matches + 1 WHERE key = ?",
                    (mu, sigma, key),
                )
            rating_history.record(self.db, match_id)
        hook_events.first_forfeits(self.db, [str(match_id) for match_id, _, _ in rows])

    def _rating(self, key: str) -> tuple[float, float]:
        row = self.db.execute("SELECT mu, sigma FROM versions WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise LadderStoreError(f"match seats {key!r}, which is no version of the ladder")
        return float(row[0]), float(row[1])

    def finished(
        self,
        version: str | None = None,
        limit: int | None = None,
        until: str | None = None,
        discarded: bool = False,
    ) -> list[Finished]:
        """Finished matches, oldest first; only those seating `version` when given; only those
        finished by `until` (ISO 8601 UTC) when given; only the last `limit` when given; with
        those the operator discarded when `discarded`."""
        status = "status = 'finished'"
        if discarded:
            status = f"({status} OR match_id IN (SELECT match_id FROM discards))"
        query = (
            "SELECT seq, match_id, deal, bots, ranks, scores, reason, forfeits, replay, "
            f"decisions, finished_at, substituted FROM matches WHERE {status}"
        )
        args: list[object] = []
        if version is not None:
            # JSON arrays of keys: the quoted key cannot match another key's text.
            query += " AND instr(bots, ?) > 0"
            args.append(json.dumps(version))
        if until is not None:
            query += " AND finished_at <= ?"
            args.append(until)
        query += " ORDER BY seq DESC"
        if limit is not None:
            query += " LIMIT ?"
            args.append(limit)
        rows = self.db.execute(query, args).fetchall()
        return [_finished(row) for row in reversed(rows)]

    def finished_at(self, match_id: str) -> str | None:
        row = self.db.execute(
            "SELECT finished_at FROM matches WHERE match_id = ?", (match_id,)
        ).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def match_state(self, match_id: str) -> tuple[str, str, str | None] | None:
        """(status, deal, replay path) of a match; None for no such match."""
        row = self.db.execute(
            "SELECT status, deal, replay FROM matches WHERE match_id = ?", (match_id,)
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]), row[2])

    def rated_since(self, rated: int) -> list[tuple[int, MatchRecord]]:
        """The matches rated after the `rated`-th, in the order they were rated, each with its
        number: a reader that kept sums up to one match reads only what came after it."""
        rows = self.db.execute(
            "SELECT rated, seq, match_id, deal, bots, ranks, scores, reason, forfeits, replay, "
            "decisions, finished_at, substituted FROM matches WHERE rated > ? ORDER BY rated",
            (rated,),
        ).fetchall()
        return [(int(row[0]), _finished(row[1:]).record) for row in rows]

    def times_rated(self, after: int, upto: int) -> list[tuple[list[str], tuple[SeatTimes, ...]]]:
        """The seat times of the matches rated after the `after`-th up to the `upto`-th, each
        with its seats' version keys: a deal's times are read only once it is rated, so they
        tell nothing of a deal still in play."""
        rows = self.db.execute(
            "SELECT m.bots, s.times FROM matches m JOIN seat_times s USING (match_id) "
            "WHERE m.rated > ? AND m.rated <= ? ORDER BY m.rated",
            (after, upto),
        ).fetchall()
        return [(json.loads(bots), times_of(times)) for bots, times in rows]

    def deals_in_play(self) -> set[str]:
        """The deals with a match still to play: their other seatings' replays show its cards."""
        rows = self.db.execute("SELECT DISTINCT deal FROM matches WHERE status = 'scheduled'")
        return {str(deal) for (deal,) in rows}

    def progress(self) -> tuple[int, int]:
        """(matches scheduled and not yet finished, matches finished)."""
        rows = self.db.execute(
            "SELECT status, COUNT(*) FROM matches WHERE status != 'discarded' GROUP BY status"
        )
        counts = {str(status): int(n) for status, n in rows}
        return counts.get("scheduled", 0), counts.get("finished", 0)

    def scheduled_counts(self) -> dict[str, int]:
        """Matches each version is seated in, finished or still to play."""
        counts: dict[str, int] = {}
        for (bots,) in self.db.execute(
            "SELECT bots FROM matches WHERE status IN ('scheduled', 'finished')"
        ):
            for key in json.loads(bots):
                counts[key] = counts.get(key, 0) + 1
        return counts

    def last_tables(self) -> dict[str, int]:
        """The last table each version was seated at."""
        last: dict[str, int] = {}
        for table_no, bots in self.db.execute(
            "SELECT table_no, bots FROM matches WHERE status != 'discarded' ORDER BY seq"
        ):
            for key in json.loads(bots):
                last[key] = int(table_no)
        return last


def finish_scheduled(
    db: sqlite3.Connection,
    table: Literal["matches", "challenge_matches"],
    record: MatchRecord,
    worker: str,
    seconds: float,
) -> bool:
    """Inside the caller's transaction: the scheduled match (rated, or a challenge's) finished
    with the record's result, and its seat times kept; False when it was not scheduled (and
    nothing is written)."""
    changed = db.execute(
        f"UPDATE {table} SET status = 'finished', finished_at = ?, ranks = ?, scores = ?, "
        "reason = ?, forfeits = ?, replay = ?, decisions = ?, worker = ?, seconds = ?, "
        "substituted = ? WHERE match_id = ? AND status = 'scheduled'",
        (now(), *finished_columns(record, worker, seconds), record.match_id),
    ).rowcount
    if changed != 1:
        return False
    save_times(db, record)
    return True


def _finished(row: tuple[object, ...]) -> Finished:
    seq, match_id, deal, bots, ranks, scores, reason, forfeits, replay, decisions, at, subs = row
    record = MatchRecord(
        match_id=str(match_id),
        deal=str(deal),
        bots=tuple(json.loads(str(bots))),
        ranks=tuple(json.loads(str(ranks))),
        scores=tuple(json.loads(str(scores))),
        reason=str(reason),
        forfeits=tuple((int(s), str(c), str(d)) for s, c, d in json.loads(str(forfeits))),
        replay=None if replay is None else str(replay),
        decisions=int(str(decisions or 0)),
        substituted=substituted_of(subs),
    )
    return Finished(record, int(str(seq)), str(at))


def _add_house(db: sqlite3.Connection) -> None:
    """The house: an author with no token (nobody logs in as it)."""
    db.execute("INSERT INTO authors (name, created_at) VALUES (?, ?)", (HOUSE, now()))


def migrate_to_authors(path: Path) -> None:
    """Bring a store written before the ladder knew authors (schema version 2) to version 3:
    the authors table with the house in it, and every bot the house's. Once, whoever opens it
    first (the write lock decides); sqlite3.Error when the file cannot be written."""
    connection = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        (version,) = connection.execute(
            "SELECT value FROM meta WHERE key = 'schema_version'"
        ).fetchone()
        if version == str(AUTHORLESS_VERSION):
            connection.execute(AUTHORS_SCHEMA)  # one statement
            _add_house(connection)
            connection.execute(
                "ALTER TABLE bots ADD COLUMN author TEXT NOT NULL DEFAULT 'house' "
                "REFERENCES authors(name)"
            )
            connection.execute(
                "UPDATE meta SET value = ? WHERE key = 'schema_version'",
                (str(UNSUBMITTED_VERSION),),
            )
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.rollback()
        raise
    finally:
        connection.close()


SUBMISSION_COLUMNS = (
    "content_hash TEXT",
    "status TEXT NOT NULL DEFAULT 'live'",
    "reason TEXT NOT NULL DEFAULT ''",
    "build_log TEXT",
)


def migrate_to_submissions(path: Path) -> None:
    """Bring a store of schema version 3 to 4: each version's content hash, status, reason and
    build log (every version there is live: the operator's and remote bots'). Once, whoever
    opens it first; sqlite3.Error when the file cannot be written."""
    connection = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        (version,) = connection.execute(
            "SELECT value FROM meta WHERE key = 'schema_version'"
        ).fetchone()
        if version == str(UNSUBMITTED_VERSION):
            for column in SUBMISSION_COLUMNS:
                connection.execute(f"ALTER TABLE versions ADD COLUMN {column}")
            connection.execute(
                "UPDATE meta SET value = ? WHERE key = 'schema_version'",
                (str(UNAUDITED_VERSION),),
            )
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.rollback()
        raise
    finally:
        connection.close()


def _migrate_by_script(path: Path, script: str, old: int, new: int) -> None:
    """Bring a store from schema version `old` to `new` with a script of statements that are
    each idempotent (CREATE ... IF NOT EXISTS), in one transaction: two processes opening the
    file at once both end at `new` (executescript runs no statement conditionally; the guarded
    UPDATE moves the version once). sqlite3.Error when the file cannot be written."""
    connection = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    try:
        connection.executescript(
            "BEGIN IMMEDIATE;"
            + script
            + f"UPDATE meta SET value = '{new}' WHERE key = 'schema_version' "
            f"AND value = '{old}';" + "COMMIT;"
        )
    except BaseException:
        if connection.in_transaction:
            connection.rollback()
        raise
    finally:
        connection.close()


def migrate_to_audited(path: Path) -> None:
    """Bring a store of schema version 4 to 5: the audit log (empty: nothing before it was
    recorded) and the freeze's pins."""
    _migrate_by_script(
        path, FROZEN_SCHEMA + audit_log.SCHEMA, UNAUDITED_VERSION, UNHISTORIED_VERSION
    )


def migrate_to_histories(path: Path) -> None:
    """Bring a store of schema version 5 to 6: rating history (empty: the ratings' past was not
    kept), challenges, webhooks and seat times."""
    _migrate_by_script(path, RETURNS_SCHEMA, UNHISTORIED_VERSION, SCHEMA_VERSION)


def _connect(path: Path) -> sqlite3.Connection:
    # isolation_level None: transactions only where write() opens them, so a reader never holds
    # a snapshot (or a lock) between its statements.
    connection = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    connection.execute("PRAGMA busy_timeout = 30000")
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")  # a commit is on disk before serve moves on
    return connection


# Each step brings an old ladder.sqlite one schema version on, in order: open() runs the ones
# from the file's version to SCHEMA_VERSION.
_MIGRATIONS: tuple[tuple[int, Callable[[Path], None], int], ...] = (
    (
        UNSUBSTITUTED_VERSION,
        lambda path: add_substituted_column(
            path, str(UNSUBSTITUTED_VERSION), str(AUTHORLESS_VERSION)
        ),
        AUTHORLESS_VERSION,
    ),
    (AUTHORLESS_VERSION, migrate_to_authors, UNSUBMITTED_VERSION),
    (UNSUBMITTED_VERSION, migrate_to_submissions, UNAUDITED_VERSION),
    (UNAUDITED_VERSION, migrate_to_audited, UNHISTORIED_VERSION),
    (UNHISTORIED_VERSION, migrate_to_histories, SCHEMA_VERSION),
)
