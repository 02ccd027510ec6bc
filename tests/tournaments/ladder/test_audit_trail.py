"""The ladder's audit log in its own SQLite file: written by the real CLI in the same transaction
as each change, by serve itself when its health check pauses a bot, refused to any UPDATE or
DELETE through sqlite3 (the control: the same statement on a copy without the triggers goes
through), and added to a ladder file of schema version 4 when it is first opened."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.tournaments.ladder.contest_kit import audit, new_author, said, sql
from tests.tournaments.web.harness import arena
from tests.tournaments.web.ladder_harness import make_ladder, serving
from tournaments import audit_log
from tournaments.ladder import roster
from tournaments.ladder.database import LadderStore

pytestmark = pytest.mark.timeout(180)


def acted_on(folder: Path) -> None:
    """A few operator actions through the real CLI."""
    make_ladder(folder, {"house-first": "example:first"})
    new_author(folder, "alice", why="entered")
    for args in (
        ("add", folder, "--name", "alice-r", "--spec", "example:random", "--author", "alice"),
        ("pause", folder, "--name", "alice-r", "--why", "looked broken"),
        ("resume", folder, "--name", "alice-r", "--why", "it was not"),
        ("author", "rotate", folder, "alice", "--why", "leaked in a chat"),
        ("retire", folder, "--name", "house-first", "--reason", "superseded"),
        ("release", folder, "--to", "hidden", "--why", "results at the prize-giving"),
    ):
        done = arena("ladder", *args)
        assert done.returncode == 0, done.stderr


EDITS = (
    "UPDATE audit SET why = 'nothing happened' WHERE seq = 3",
    "DELETE FROM audit WHERE seq = 3",
)


def test_the_ladders_log_holds_each_action_and_sqlite3_cannot_edit_it(tmp_path: Path) -> None:
    acted_on(tmp_path)
    entries = audit(tmp_path)
    assert said(entries) == [
        ("operator", "bot added", "house-first", ""),
        ("operator", "author added", "alice", "entered"),
        ("operator", "bot added", "alice-r", ""),
        ("operator", "bot paused", "alice-r", "looked broken"),
        ("operator", "bot resumed", "alice-r", "it was not"),
        ("operator", "author token rotated", "alice", "leaked in a chat"),
        ("operator", "bot retired", "house-first", "superseded"),
        ("operator", "released", "the ladder", "results at the prize-giving"),
    ]
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(tmp_path / "ladder.sqlite", copy)
    for statement in EDITS:
        with (
            sqlite3.connect(tmp_path / "ladder.sqlite") as db,
            pytest.raises(sqlite3.DatabaseError, match="the audit log is append-only"),
        ):
            db.execute(statement)
    assert audit(tmp_path) == entries
    # The control: the same statements on a copy whose triggers are dropped go through.
    with sqlite3.connect(copy) as db:
        db.execute("DROP TRIGGER audit_never_updated")
        db.execute("DROP TRIGGER audit_never_deleted")
        assert [db.execute(statement).rowcount for statement in EDITS] == [1, 1]


def test_a_refused_change_logs_nothing_and_a_log_that_fails_undoes_the_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_ladder(tmp_path, {"house-first": "example:first"})
    refused = arena("ladder", "pause", tmp_path, "--name", "nobody", "--why", "x")
    assert refused.returncode != 0 and "no bot 'nobody'" in refused.stderr
    assert [e["action"] for e in audit(tmp_path)] == ["bot added"]
    store = LadderStore.open(tmp_path)

    def broken(*_: object, **__: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(audit_log, "record", broken)
    with pytest.raises(sqlite3.OperationalError):
        roster.set_status(store, "house-first", "paused", "by the operator")
    assert roster.bot_row(store, "house-first").status == "active"  # one transaction: neither
    monkeypatch.undo()  # the control: with its log written, the same change lands
    roster.set_status(store, "house-first", "paused", "by the operator")
    assert roster.bot_row(store, "house-first").status == "paused"
    store.close()


def test_a_version_4_ladder_gains_its_log_when_first_opened(tmp_path: Path) -> None:
    make_ladder(tmp_path, {"house-first": "example:first"})
    with sqlite3.connect(tmp_path / "ladder.sqlite") as db:
        db.executescript(
            "DROP TABLE audit; DROP TABLE frozen; DROP TABLE rating_history; "
            "DROP TABLE challenge_matches; DROP TABLE challenges; DROP TABLE deliveries; "
            "DROP TABLE webhooks; DROP TABLE seat_times; "
            "UPDATE meta SET value = '4' WHERE key = 'schema_version';"
        )
    with (  # the control: a version-4 file has no log
        sqlite3.connect(tmp_path / "ladder.sqlite") as db,
        pytest.raises(sqlite3.OperationalError, match="no such table: audit"),
    ):
        db.execute("SELECT * FROM audit")
    paused = arena("ladder", "pause", tmp_path, "--name", "house-first", "--why", "upgraded")
    assert paused.returncode == 0, paused.stderr
    assert sql(tmp_path, "SELECT value FROM meta WHERE key = 'schema_version'") == [("6",)]
    for table in ("rating_history", "challenges", "challenge_matches", "webhooks", "deliveries"):
        assert sql(tmp_path, f"SELECT COUNT(*) FROM {table}") == [(0,)]  # and version 6's
    assert said(audit(tmp_path)) == [("operator", "bot paused", "house-first", "upgraded")]
    with (
        sqlite3.connect(tmp_path / "ladder.sqlite") as db,
        pytest.raises(sqlite3.DatabaseError, match="append-only"),
    ):
        db.execute("DELETE FROM audit")


def test_serve_logs_the_pause_its_health_check_makes(tmp_path: Path) -> None:
    make_ladder(
        tmp_path,
        {"house-first": "example:first", "crasher": "cmd:/bin/false"},
        window=2,
        max_failures=2,
    )
    with serving(tmp_path) as served:
        served.wait_for(
            "the crasher paused",
            lambda: (
                sql(tmp_path, "SELECT status FROM bots WHERE name = 'crasher'") == [("paused",)]
            ),
        )
    paused = [e for e in audit(tmp_path) if e["action"] == "bot paused"]
    assert [(e["who"], e["subject"]) for e in paused] == [("serve", "crasher")]
    assert "forfeit" in paused[0]["why"], paused
