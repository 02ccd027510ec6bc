"""Authors' uploaded versions in the ladder's database: who may give a bot a version, the row
each accepted upload makes, and the status serve moves it through (ladder/vetting.py).

    building -> validating -> live | failed

A version row of an upload names its folder by content hash (versions/<hash>, stored by
tournaments/submissions) and keeps its status, the reason (why it failed, in plain words) and
its build log's path. Only a live version plays (roster.versions); the newest live one is its
bot's current version. An upload of a new name makes the author's bot in the same write that
counts their active bots (authors.check_room); a bot whose only versions failed is paused with
NOT_LIVE, so it takes none of its author's places, and their next upload to it resumes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tournaments import audit_log
from tournaments.ladder import authors, hook_events
from tournaments.ladder.database import HOUSE, MU, SIGMA, LadderStore, now
from tournaments.ladder.naming import NAME, folded
from tournaments.ladder.roster import next_number, version_key

VERSIONS_FOLDER = "versions"  # versions/<hash>: each upload's files, immutable
BUILDS_FOLDER = "builds"  # builds/<NAME@N>/: its build's log, the built copy, its check's files
NOT_LIVE = "no version of it is live yet: its last one failed"
PENDING = ("building", "validating")


class UploadRefused(ValueError):
    """An upload the ladder does not take for this bot; the message says why, on one line."""


class NotYours(UploadRefused):
    """The bot is another author's (or the house's)."""


@dataclass(frozen=True)
class Pending:
    """A version serve has still to build or validate."""

    key: str
    bot: str
    content_hash: str


@dataclass(frozen=True)
class UploadState:
    key: str
    bot: str
    status: str
    reason: str
    content_hash: str | None
    build_log: str | None


def check_upload(store: LadderStore, author: str, name: str, bots_per_author: int) -> None:
    """UploadRefused (NotYours for another's bot) unless the author may upload a version of
    the bot `name` now; before the archive is read, and again when it is recorded."""
    if author == HOUSE:
        raise NotYours(f"{HOUSE!r} uploads nothing: the operator adds its bots")
    row = store.db.execute("SELECT author, status, remote_token FROM bots WHERE name = ?", (name,))
    found = row.fetchone()
    if found is None:
        _check_new(store, author, name, bots_per_author)
        return
    owner, status, remote = found
    if owner != author:
        raise NotYours(f"bot {name!r} is another author's: choose a name of your own")
    if remote is not None:
        raise UploadRefused(
            f"bot {name!r} is a remote bot (its versions are registered at /api/remote-bots): "
            "upload under another name"
        )
    if status == "retired":
        raise UploadRefused(f"bot {name!r} is retired: upload under a new name")


def _check_new(store: LadderStore, author: str, name: str, bots_per_author: int) -> None:
    if not NAME.fullmatch(name):
        raise UploadRefused(
            f"bot name {name!r}: 1 to 40 letters, digits, '_', '.' or '-', starting with a "
            "letter or digit"
        )
    for (other,) in store.db.execute("SELECT name FROM bots"):
        if folded(str(other)) == folded(name):
            raise UploadRefused(
                f"bot name {name!r} is too like {other!r}, on the ladder already: names are "
                "compared without case and without '_', '.' or '-'"
            )
    _room(store, author, bots_per_author, name)


def _room(store: LadderStore, author: str, bots_per_author: int, name: str) -> None:
    try:
        authors.check_room(store, author, bots_per_author, name)
    except authors.AuthorError as exc:
        raise UploadRefused(str(exc)) from None


def record_upload(
    store: LadderStore,
    author: str,
    name: str,
    digest: str,
    spec: str,
    bots_per_author: int,
    still_open: Callable[[LadderStore], None] = lambda _: None,
) -> str:
    """The upload as the bot's next version, `building`, in one write that checks again what
    check_upload checked (and still_open: the freeze, ladder/freeze.py, which may have come
    while the archive was read); the bot made (active) when the name is new. Its key."""
    with store.write() as db:
        still_open(store)
        check_upload(store, author, name, bots_per_author)
        bot = db.execute("SELECT status, reason FROM bots WHERE name = ?", (name,)).fetchone()
        if bot is None:
            db.execute(
                "INSERT INTO bots (name, status, added_at, changed_at, author) "
                "VALUES (?, 'active', ?, ?, ?)",
                (name, now(), now(), author),
            )
        elif bot[0] == "paused" and bot[1] == NOT_LIVE:  # paused by us, not by the operator
            _room(store, author, bots_per_author, name)
            db.execute(
                "UPDATE bots SET status = 'active', reason = '', changed_at = ? WHERE name = ?",
                (now(), name),
            )
        key = version_key(name, next_number(store, name))
        db.execute(
            "INSERT INTO versions (key, bot, number, spec, added_at, mu, sigma, content_hash, "
            "status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'building')",
            (key, name, int(key.rsplit("@", 1)[1]), spec, now(), MU, SIGMA, digest),
        )
        detail: dict[str, object] = {"version": key, "content_hash": digest}
        audit_log.record(db, f"author {author}", "version submitted", name, "", detail)
    return key


def pending(store: LadderStore) -> list[Pending]:
    """The versions still to build or validate, oldest first (after a kill too: those serve
    was at when it stopped)."""
    rows = store.db.execute(
        "SELECT key, bot, content_hash FROM versions WHERE status IN (?, ?) "
        "AND content_hash IS NOT NULL ORDER BY added_at, key",
        PENDING,
    ).fetchall()
    return [Pending(str(k), str(b), str(h)) for k, b, h in rows]


def set_status(
    store: LadderStore,
    key: str,
    status: str,
    reason: str = "",
    build_log: str | None = None,
    told: str = "",
) -> None:
    """building, validating or failed (live: go_live), with the reason and the build log; a
    failure queues its webhook event, saying `told` (the reason without output or paths)."""
    if status not in (*PENDING, "failed"):
        raise ValueError(f"status {status!r}: building, validating or failed")
    with store.write() as db:
        db.execute(
            "UPDATE versions SET status = ?, reason = ?, build_log = COALESCE(?, build_log) "
            "WHERE key = ?",
            (status, reason, build_log, key),
        )
        if status == "failed":
            hook_events.version_failed(db, key, told or "it failed its build or its validation")
            _pause_if_none_live(store, key)


def _pause_if_none_live(store: LadderStore, key: str) -> None:
    (bot,) = store.db.execute("SELECT bot FROM versions WHERE key = ?", (key,)).fetchone()
    other = store.db.execute(
        "SELECT 1 FROM versions WHERE bot = ? AND status IN ('live', 'building', 'validating')",
        (bot,),
    ).fetchone()
    if other is None:
        paused = store.db.execute(
            "UPDATE bots SET status = 'paused', reason = ?, changed_at = ? "
            "WHERE name = ? AND status = 'active'",
            (NOT_LIVE, now(), bot),
        ).rowcount
        if paused:
            hook_events.bot_paused(store.db, str(bot), "serve", NOT_LIVE)


def go_live(store: LadderStore, key: str, spec: str, reason: str) -> None:
    """The version plays from now on, from spec (its built folder's), as `ladder update` makes
    a version current: the bot's slate for the pause rule starts again."""
    with store.write() as db:
        db.execute(
            "UPDATE versions SET status = 'live', spec = ?, reason = ? WHERE key = ?",
            (spec, reason, key),
        )
        db.execute(
            "UPDATE bots SET changed_at = ? WHERE name = (SELECT bot FROM versions WHERE key = ?)",
            (now(), key),
        )
        hook_events.version_live(db, key)


def upload_state(store: LadderStore, key: str) -> UploadState | None:
    row = store.db.execute(
        "SELECT key, bot, status, reason, content_hash, build_log FROM versions WHERE key = ?",
        (key,),
    ).fetchone()
    return None if row is None else UploadState(*row)


def content_hashes(store: LadderStore, keys: tuple[str, ...]) -> tuple[str, ...]:
    """Each version's files' hash, '' for one that is not an upload (the house's, a remote
    bot's): what its match's replay records of each seat."""
    marks = ", ".join("?" * len(keys))
    rows = store.db.execute(
        f"SELECT key, content_hash FROM versions WHERE key IN ({marks})", keys
    ).fetchall()
    found = {key: digest or "" for key, digest in rows}
    return tuple(found.get(key, "") for key in keys)
