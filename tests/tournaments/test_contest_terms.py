"""A final's terms in its tournament file ([contest] release and entrants) and in its SQLite: an
entrants.json that is not one is refused at load in one line naming what is wrong; the release
starts as the file says, changes only through set_release, which logs it; a version-3 file (from
before releases) is brought to version 4, public as it always was."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tournaments.config import ConfigError, load_config
from tournaments.contest import Release
from tournaments.ladder.authors import hashed
from tournaments.read_models.release_views import WrongToken, bots_of
from tournaments.store import DATABASE, Store

FILE = """
name = "final"
game = "opposing-force"
[[bots]]
name = "alpha"
spec = "example:opposing-force"
[[bots]]
name = "beta"
spec = "example:random"
[format]
kind = "round-robin"
[contest]
release = "participants"
entrants = "entrants.json"
"""


def entrant(bot: str, token: str = "tok-a", **changes: Any) -> dict[str, Any]:
    found = {
        "bot": bot,
        "author": "ann",
        "token_sha256": hashed(token),
        "version": "v1",
        "seed": 1,
        "rating": 3.5,
    }
    return found | changes


def write(tmp_path: Path, entrants: object, text: str = FILE) -> Path:
    body = entrants if isinstance(entrants, str) else json.dumps(entrants)
    (tmp_path / "entrants.json").write_text(body)
    path = tmp_path / "final.toml"
    path.write_text(text)
    return path


def document(*entrants: dict[str, Any]) -> dict[str, Any]:
    return {"ladder": "spring", "frozen_at": "2026-11-28T10:00:00+00:00", "entrants": entrants}


def test_a_good_contest_loads_with_its_entrants_path_made_absolute(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, document(entrant("alpha"), entrant("beta", "tok-b"))))
    assert config.contest.release is Release.PARTICIPANTS
    assert config.contest.entrants == str((tmp_path / "entrants.json").resolve())


def test_without_a_contest_the_results_are_public(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, document(), FILE.split("[contest]")[0]))
    assert config.contest.release is Release.PUBLIC and config.contest.entrants is None


@pytest.mark.parametrize(
    ("entrants", "said"),
    [
        (document(entrant("gamma")), "entrants.0.bot: 'gamma' is not a bot of the tournament file"),
        (document(entrant("alpha"), entrant("alpha")), "entrants.1.bot: 'alpha' is entered twice"),
        (
            document(entrant("alpha", token_sha256="plain-token")),
            "entrants.0.token_sha256: not a sha256 hex digest",
        ),
        (document(entrant("alpha", seed=0)), "entrants.0.seed: Input should be greater than"),
        (document(entrant("alpha", extra=1)), "entrants.0.extra: Extra inputs are not permitted"),
        ("{not json", "Invalid JSON"),
    ],
)
def test_a_bad_entrants_file_names_what_is_wrong(
    tmp_path: Path, entrants: object, said: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        load_config(write(tmp_path, entrants))
    message = str(refused.value)
    assert "contest.entrants:" in message and said in message
    assert "Traceback" not in message and len(message.splitlines()) == 2


def test_an_entrants_path_that_is_no_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, document())
    (tmp_path / "entrants.json").unlink()
    (tmp_path / "entrants.json").mkdir()
    with pytest.raises(ConfigError, match=r"entrants\.json is not a file"):
        load_config(path)


def test_an_unknown_release_is_refused_by_name(tmp_path: Path) -> None:
    text = FILE.replace('"participants"', '"friends"')
    with pytest.raises(ConfigError, match=r"contest\.release: Input should be 'hidden'"):
        load_config(write(tmp_path, document(), text))


def test_an_author_is_known_by_every_bot_they_entered_and_nobody_else() -> None:
    from tournaments.contest import Entrants

    entrants = Entrants.model_validate(
        document(entrant("alpha"), entrant("beta", "tok-b"), entrant("gamma"))
    )
    assert bots_of(entrants, "tok-a") == {"alpha", "gamma"}
    assert bots_of(entrants, "tok-b") == {"beta"}
    for wrong in ("tok-c", hashed("tok-a"), ""):  # the hash itself is no token
        with pytest.raises(WrongToken):
            bots_of(entrants, wrong)
    with pytest.raises(WrongToken):
        bots_of(None, "tok-a")


def test_the_store_keeps_the_terms_and_logs_each_release(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, document(entrant("alpha"))))
    store = Store.create(tmp_path / "out", config)
    (tmp_path / "entrants.json").write_text("gone")  # read once, at the start
    assert store.release() is Release.PARTICIPANTS
    kept = store.entrants()
    assert kept is not None and [e.bot for e in kept.entrants] == ["alpha"]
    assert store.set_release(Release.HIDDEN, "a protest") is Release.PARTICIPANTS
    assert store.set_release(Release.HIDDEN, "again") is Release.HIDDEN  # nothing to change
    store.close()
    again = Store.open(tmp_path / "out", read_only=True)
    assert again.release() is Release.HIDDEN
    [entry] = again.audit()
    assert (entry.who, entry.action, entry.subject, entry.why, entry.detail) == (
        "operator",
        "released",
        "final",
        "a protest",
        {"from": "participants", "to": "hidden"},
    )


def version_3(folder: Path) -> None:
    """Make the store as the previous schema wrote it: no audit table, no release, version 3."""
    with sqlite3.connect(folder / DATABASE) as db:
        db.execute("DROP TRIGGER audit_never_updated")
        db.execute("DROP TRIGGER audit_never_deleted")
        db.execute("DROP TABLE audit")
        db.execute("DROP TABLE seat_times")  # kept since schema 4 (referee/matches/seat_times.py)
        db.execute("DELETE FROM meta WHERE key IN ('release', 'entrants')")
        db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")


def tables(folder: Path) -> set[str]:
    with sqlite3.connect(folder / DATABASE) as db:
        rows = db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")
        return {name for (name,) in rows}


def test_a_version_3_file_is_brought_to_4_and_stays_public(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, document(), FILE.split("[contest]")[0]))
    Store.create(tmp_path / "out", config).close()
    version_3(tmp_path / "out")
    assert tables(tmp_path / "out") == {"meta", "matches"}  # control: a version-3 file indeed
    store = Store.open(tmp_path / "out", read_only=True)  # as `arena web` opens it
    assert store.get("schema_version") == "4"
    assert store.release() is Release.PUBLIC and store.entrants() is None
    assert store.audit() == []
    store.close()
    assert {"audit", "audit_never_updated", "audit_never_deleted"} <= tables(tmp_path / "out")
    writer = Store.open(tmp_path / "out")
    writer.set_release(Release.HIDDEN, "after the upgrade")
    assert [e.why for e in writer.audit()] == ["after the upgrade"]
