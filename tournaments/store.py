"""A tournament's state in SQLite (WAL): its configuration, every match scheduled, and every
match finished, committed the moment it finishes. A runner killed at any point (kill -9
included) loses only matches in flight, which a resume plays again with the same deal key; a reader
(`arena tournament standings`) can look while the runner writes.

Beside them, a final's terms: who may see its results now (its release, which the operator
changes while it runs or after, `arena tournament release`), the entrants who may see their own,
and the audit log of what the operator did (tournaments/audit_log.py)."""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from arena_games.deals import series_secret
from pydantic import ValidationError

from tournaments import audit_log
from tournaments.audit_log import AuditEntry
from tournaments.config import TournamentConfig, describe
from tournaments.contest import Entrants, Release
from tournaments.deal_book import DealBookError, read_book
from tournaments.entrants_file import EntrantsError, read_entrants
from tournaments.records import (
    SEAT_TIMES_TABLE,
    MatchRecord,
    add_substituted_column,
    finished_columns,
    read_times,
    save_times,
    substituted_of,
)
from tournaments.schedule import Ledger, MatchJob

DATABASE = "tournament.sqlite"
SCHEMA_VERSION = 4

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    seq INTEGER PRIMARY KEY,
    match_id TEXT NOT NULL UNIQUE,
    round INTEGER NOT NULL,
    deal TEXT NOT NULL,
    bots TEXT NOT NULL,
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
"""


class StoreError(Exception):
    """A folder that holds no tournament, or a database this version cannot read."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store:
    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.db = connection
        self.path = path

    @classmethod
    def create(cls, folder: Path, config: TournamentConfig) -> Store:
        path = folder / DATABASE
        if path.exists():
            raise StoreError(
                f"{folder} already holds a tournament: `arena tournament resume {folder}` "
                "continues it, or choose another output folder"
            )
        book = _book(config)  # before the database: a book that cannot be read leaves none
        entrants = _entrants(config)
        folder.mkdir(parents=True, exist_ok=True)
        store = cls(_connect(path), path)
        with store.db:
            store.db.executescript(_SCHEMA)
            store.db.execute(SEAT_TIMES_TABLE)
            audit_log.create(store.db)
            store._set("schema_version", str(SCHEMA_VERSION))
            store._set("config", config.model_dump_json())
            # Every deal's key derives from it: it never leaves this file but for the hosts.
            store._set("deal_secret", series_secret(config.seed).hex())
            # Read once, now: a resume plays the same deals whatever became of the file.
            store._set("deal_book", json.dumps(book))
            # Spectators of its matches need it; each host logs its address beside it.
            store._set("spectator_token", secrets.token_urlsafe(32))
            store._set("created_at", _now())
            store._set("state", "running")
            store._set("release", config.contest.release.value)
            # Read once, now, as the book: the web server checks authors' tokens against it.
            store._set("entrants", "" if entrants is None else entrants.model_dump_json())
        return store

    @classmethod
    def open(cls, folder: Path, read_only: bool = False) -> Store:
        path = folder / DATABASE
        if not path.is_file():
            raise StoreError(f"{folder} holds no tournament (no {DATABASE} in it)")
        try:
            connection = _connect(path, read_only)
            store = cls(connection, path)
            version = store.get("schema_version")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path} is not a tournament database: {exc}") from None
        while version in _UPGRADES:
            try:
                _UPGRADES[version](path)
            except sqlite3.Error as exc:
                store.close()
                raise StoreError(
                    f"{path} has schema version {version}; upgrading it to "
                    f"{SCHEMA_VERSION} failed: {exc}"
                ) from None
            version = str(int(version) + 1)
        if version != str(SCHEMA_VERSION):
            store.close()
            raise StoreError(
                f"{path} has schema version {version}, this arena reads {SCHEMA_VERSION}"
            )
        if not read_only:
            with store.db:
                store.db.execute(SEAT_TIMES_TABLE)
        return store

    def close(self) -> None:
        self.db.close()

    def _set(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def get(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_state(self, state: str) -> None:
        with self.db:
            self._set("state", state)

    def release(self) -> Release:
        """Who may see the results now."""
        raw = self.get("release")
        try:
            return Release(raw or "")
        except ValueError:
            raise StoreError(f"{self.path} holds no release this arena knows: {raw!r}") from None

    def set_release(self, to: Release, why: str = "", who: str = "operator") -> Release:
        """Release the results to `to`, logged in the same transaction; the release it was.
        The same release again changes and logs nothing."""
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")  # read and write as one: two at once queue
                was = self.release()
                if was is not to:
                    self._set("release", to.value)
                    detail: dict[str, object] = {"from": was.value, "to": to.value}
                    audit_log.record(self.db, who, "released", self.config().name, why, detail)
        except sqlite3.Error as exc:  # locked past the busy timeout, a read-only disk...
            raise StoreError(f"{self.path}: the release could not be saved: {exc}") from None
        return was

    def entrants(self) -> Entrants | None:
        """Who entered each bot (a final's), or None for a tournament without entrants."""
        raw = self.get("entrants")
        return Entrants.model_validate_json(raw) if raw else None

    def audit(self) -> list[AuditEntry]:
        """The audit log, oldest first."""
        found: list[AuditEntry] = []
        while page := audit_log.entries(self.db, after=found[-1].seq if found else 0):
            found.extend(page)
        return found

    def deal_secret(self) -> bytes:
        raw = self.get("deal_secret")
        if raw is None:
            raise StoreError(f"{self.path} has no deal secret")
        return bytes.fromhex(raw)

    def deal_book(self) -> tuple[str, ...]:
        """The book of deals the tournament plays (tournaments/deal_book.py); () for none."""
        raw = self.get("deal_book")
        return tuple(json.loads(raw)) if raw else ()

    def config(self) -> TournamentConfig:
        raw = self.get("config")
        if raw is None:
            raise StoreError(f"{self.path} has no configuration")
        try:
            return TournamentConfig.model_validate_json(raw)
        except ValidationError as exc:  # saved by an arena that let more through
            raise StoreError(
                f"{self.path} holds a configuration this arena refuses:\n{describe(exc)}"
            ) from None

    def schedule(self, jobs: Iterable[MatchJob]) -> None:
        with self.db:
            self.db.executemany(
                "INSERT INTO matches (match_id, round, deal, bots, scheduled_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [(j.match_id, j.round, j.deal, json.dumps(j.bots), _now()) for j in jobs],
            )

    def finish(self, record: MatchRecord, worker: str, seconds: float) -> None:
        with self.db:
            changed = self.db.execute(
                "UPDATE matches SET finished_at = ?, ranks = ?, scores = ?, reason = ?, "
                "forfeits = ?, replay = ?, decisions = ?, worker = ?, seconds = ?, substituted = ? "
                "WHERE match_id = ? AND finished_at IS NULL",
                (_now(), *finished_columns(record, worker, seconds), record.match_id),
            ).rowcount
            if changed == 1:
                save_times(self.db, record)
        if changed != 1:
            raise StoreError(f"match {record.match_id} was not in flight: finished twice?")

    def progress(self) -> tuple[int, int]:
        """(matches scheduled, matches finished): cheap, for watching a tournament move."""
        scheduled, finished = self.db.execute(
            "SELECT COUNT(*), COUNT(finished_at) FROM matches"
        ).fetchone()
        return int(scheduled), int(finished)

    def finish_times(self) -> dict[str, tuple[str, float | None]]:
        """match_id -> (when it finished, UTC ISO 8601; seconds it took) of finished matches."""
        rows = self.db.execute(
            "SELECT match_id, finished_at, seconds FROM matches WHERE finished_at IS NOT NULL"
        )
        return {match_id: (at, seconds) for match_id, at, seconds in rows}

    def ledger(self) -> Ledger:
        ledger = Ledger()
        times = read_times(self.db)
        rows = self.db.execute(
            "SELECT match_id, round, deal, bots, finished_at, ranks, scores, reason, "
            "forfeits, replay, decisions, substituted FROM matches ORDER BY seq"
        )
        for row in rows:
            match_id, round_, deal, bots_json = row[:4]
            bots = tuple(json.loads(bots_json))
            ledger.scheduled[match_id] = MatchJob(match_id, round_, deal, bots)
            if row[4] is not None:
                ledger.finished[match_id] = MatchRecord(
                    match_id=match_id,
                    deal=deal,
                    bots=bots,
                    ranks=tuple(json.loads(row[5])),
                    scores=tuple(json.loads(row[6])),
                    reason=row[7],
                    forfeits=tuple((int(s), str(c), str(d)) for s, c, d in json.loads(row[8])),
                    replay=row[9],
                    decisions=row[10],
                    substituted=substituted_of(row[11]),
                    times=times.get(match_id, ()),
                )
        return ledger


def _book(config: TournamentConfig) -> list[str]:
    if config.deals is None:
        return []
    try:
        return list(read_book(Path(config.deals)))
    except DealBookError as exc:
        raise StoreError(str(exc)) from None


def _entrants(config: TournamentConfig) -> Entrants | None:
    if config.contest.entrants is None:
        return None
    try:
        return read_entrants(Path(config.contest.entrants), config.bot_names())
    except EntrantsError as exc:
        raise StoreError(str(exc)) from None


def _add_release(path: Path) -> None:
    """Version 3 to 4: the audit log, and a release. A tournament from before releases showed
    its results to all: it goes on doing so (public), with no entrants. Once, whoever opens it
    first (the write lock decides); sqlite3.Error when the file cannot be written."""
    connection = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    try:
        audit_log.create(connection)  # idempotent: a step cut short here is taken again whole
        connection.execute("BEGIN IMMEDIATE")
        (version,) = connection.execute(
            "SELECT value FROM meta WHERE key = 'schema_version'"
        ).fetchone()
        if version == "3":
            connection.executemany(
                "INSERT OR IGNORE INTO meta VALUES (?, ?)",
                [("release", Release.PUBLIC.value), ("entrants", "")],
            )
            connection.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
        connection.execute("COMMIT")
    finally:
        connection.close()


# The steps from each older schema version to the next, taken in turn when a store is opened.
_UPGRADES: dict[str, Callable[[Path], None]] = {
    "2": lambda path: add_substituted_column(path, "2", "3"),  # the matches' substitutions
    "3": _add_release,
}


def _connect(path: Path, read_only: bool = False) -> sqlite3.Connection:
    uri = path.resolve().as_uri() + ("?mode=ro" if read_only else "")
    connection = sqlite3.connect(uri, uri=True, timeout=30.0)
    connection.execute("PRAGMA busy_timeout = 30000")
    if not read_only:
        connection.execute("PRAGMA journal_mode = WAL")
        # Every commit reaches the disk before the runner moves on: a kill loses nothing.
        connection.execute("PRAGMA synchronous = FULL")
    return connection
