"""The audit log keeps every row it was given, and no statement can change or remove one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tournaments import audit_log


def _db(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    audit_log.create(db)
    return db


def test_rows_come_back_in_order_with_what_they_said(tmp_path: Path) -> None:
    db = _db(tmp_path / "a.sqlite")
    audit_log.record(db, "operator", "bot paused", "alpha", why="crashes", detail={"n": 3})
    audit_log.record(db, "author ann", "version submitted", "alpha")
    db.commit()
    first, second = audit_log.entries(_db(tmp_path / "a.sqlite"))
    assert (first.seq, first.who, first.action, first.why, first.detail) == (
        1,
        "operator",
        "bot paused",
        "crashes",
        {"n": 3},
    )
    assert (second.who, second.action, second.why) == ("author ann", "version submitted", "")
    assert [e.seq for e in audit_log.entries(db, after=1)] == [2]


def test_an_unknown_action_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no audit action 'bot deleted'"):
        audit_log.record(_db(tmp_path / "a.sqlite"), "operator", "bot deleted", "x")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "statement", ["UPDATE audit SET why = 'nothing happened'", "DELETE FROM audit"]
)
def test_no_statement_edits_the_past(tmp_path: Path, statement: str) -> None:
    db = _db(tmp_path / "a.sqlite")
    audit_log.record(db, "operator", "frozen", "ladder", why="the deadline")
    db.commit()
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute(statement)
    assert [e.why for e in audit_log.entries(db)] == ["the deadline"]


def test_control_the_same_table_without_its_guards_is_edited(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "a.sqlite")
    db.executescript(audit_log.SCHEMA.split("CREATE TRIGGER")[0])
    audit_log.record(db, "operator", "frozen", "ladder", why="the deadline")
    db.execute("UPDATE audit SET why = 'nothing happened'")
    assert [e.why for e in audit_log.entries(db)] == ["nothing happened"]
