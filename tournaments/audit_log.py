"""Who did what to a ladder or a final, and why: one append-only table in the folder's own
SQLite file (fishtest's actions log). A row is written in the same transaction as the change it
records, so neither lands without the other. Triggers refuse every UPDATE and DELETE of it, so
nothing in the tool can edit the past (whoever holds the file can, as with any file: the log
is the tool's record, not a notary's)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

Action = Literal[
    "bot added",
    "bot updated",
    "bot paused",
    "bot resumed",
    "bot retired",
    "version submitted",
    "author added",
    "author registered",
    "author token rotated",
    "author revoked",
    "invite made",
    "frozen",
    "released",
    "match discarded",
    "match replayed",
    "final written",
    "webhook set",
    "webhook removed",
    "challenge asked",
    "challenge stopped",
]
ACTIONS: tuple[str, ...] = get_args(Action)

SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    who TEXT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    why TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS audit_never_updated BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: no row of it changes'); END;
CREATE TRIGGER IF NOT EXISTS audit_never_deleted BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: no row of it goes'); END;
"""


class AuditEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    seq: int = Field(description="1 is the first action; never reused")
    at: str = Field(description="ISO 8601 UTC, to the second")
    who: str = Field(description="'operator', 'author NAME', or 'serve' for the ladder itself")
    action: Action
    subject: str = Field(description="what it was done to: a bot, an author, a match, the ladder")
    why: str = Field(description="the reason given; empty when none was")
    detail: dict[str, object] = Field(description="what else the action names (a version...)")


def create(db: sqlite3.Connection) -> None:
    """Make the table and its guards (idempotent: every open may call it)."""
    db.executescript(SCHEMA)


def record(
    db: sqlite3.Connection,
    who: str,
    action: Action,
    subject: str,
    why: str = "",
    detail: dict[str, object] | None = None,
) -> None:
    """Add one row, inside the caller's transaction (the caller commits)."""
    if action not in ACTIONS:
        raise ValueError(f"no audit action {action!r}: one of {', '.join(ACTIONS)}")
    db.execute(
        "INSERT INTO audit (at, who, action, subject, why, detail) VALUES (?, ?, ?, ?, ?, ?)",
        (
            datetime.now(UTC).isoformat(timespec="seconds"),
            who,
            action,
            subject,
            why,
            json.dumps(detail or {}, sort_keys=True),
        ),
    )


def entries(db: sqlite3.Connection, after: int = 0, limit: int = 1000) -> list[AuditEntry]:
    """Rows after seq `after`, oldest first, at most `limit` of them."""
    rows = db.execute(
        "SELECT seq, at, who, action, subject, why, detail FROM audit WHERE seq > ? "
        "ORDER BY seq LIMIT ?",
        (after, limit),
    ).fetchall()
    return [
        AuditEntry(
            seq=seq,
            at=at,
            who=who,
            action=action,
            subject=subject,
            why=why,
            detail=json.loads(detail),
        )
        for seq, at, who, action, subject, why, detail in rows
    ]
