"""What each of the ladder's events says (notices.notify queues it), called inside the
transaction of the change it tells of. Every text here is cut to what its receiver may know: a
forfeit's or a failure's cause, never its detail (an illegal action names a card, a crash's
message is the bot's output), never a path, a deal or a log."""

from __future__ import annotations

import json
import sqlite3

from tournaments.ladder.notices import notify

MAX_REASON_CHARS = 300


def _author(db: sqlite3.Connection, bot: str) -> str | None:
    row = db.execute("SELECT author FROM bots WHERE name = ?", (bot,)).fetchone()
    return None if row is None else str(row[0])


def _bot_of(db: sqlite3.Connection, key: str) -> str:
    row = db.execute("SELECT bot FROM versions WHERE key = ?", (key,)).fetchone()
    return key.rsplit("@", 1)[0] if row is None else str(row[0])


def _short(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= MAX_REASON_CHARS else line[: MAX_REASON_CHARS - 3] + "..."


def version_live(db: sqlite3.Connection, key: str) -> None:
    bot = _bot_of(db, key)
    notify(db, "version live", _author(db, bot), {"bot": bot, "version": key})


def version_failed(db: sqlite3.Connection, key: str, reason: str) -> None:
    """reason: the failure in words fit for the payload (vetting.public_reason)."""
    bot = _bot_of(db, key)
    detail: dict[str, object] = {"bot": bot, "version": key, "reason": _short(reason)}
    notify(db, "version failed", _author(db, bot), detail)


def bot_paused(db: sqlite3.Connection, bot: str, by: str, reason: str) -> None:
    """by: 'serve' (its health rule), 'operator', or who else paused it. Serve's reason names
    forfeits' causes only (bot_health.failing), as the public bot page shows it."""
    detail: dict[str, object] = {"bot": bot, "by": by, "reason": _short(reason)}
    notify(db, "bot paused", _author(db, bot), detail)


def first_forfeits(db: sqlite3.Connection, match_ids: list[str]) -> None:
    """For each match just rated (its deal's every seating ended), in order: each seat's version
    that forfeited there and in no match rated before it, with the forfeit's cause."""
    for match_id in match_ids:
        row = db.execute(
            "SELECT bots, forfeits, rated FROM matches WHERE match_id = ?", (match_id,)
        ).fetchone()
        if row is None or row[2] is None:
            continue
        keys: list[str] = json.loads(row[0])
        told: set[str] = set()  # a seat's forfeits after its first in the match are one
        for seat, cause, _detail in json.loads(row[1] or "[]"):
            key = keys[int(seat)]
            if key in told or _forfeited_before(db, key, int(row[2])):
                continue
            told.add(key)
            bot = _bot_of(db, key)
            detail: dict[str, object] = {
                "bot": bot,
                "version": key,
                "cause": str(cause),
                "match_id": match_id,
            }
            notify(db, "first forfeit", _author(db, bot), detail)


def _forfeited_before(db: sqlite3.Connection, key: str, rated: int) -> bool:
    rows = db.execute(
        "SELECT bots, forfeits FROM matches WHERE rated < ? AND instr(bots, ?) > 0 "
        "AND forfeits IS NOT NULL AND forfeits != '[]'",
        (rated, json.dumps(key)),
    )
    for bots, forfeits in rows:
        seats = {i for i, k in enumerate(json.loads(bots)) if k == key}
        if any(int(seat) in seats for seat, _, _ in json.loads(forfeits)):
            return True
    return False


def final_released(db: sqlite3.Connection, release: str) -> None:
    """The release after the freeze: to the operator's hook, and, unless it is hidden, to every
    author's."""
    detail: dict[str, object] = {"release": release}
    notify(db, "final released", None, detail)
    if release == "hidden":
        return
    owners = db.execute("SELECT owner FROM webhooks WHERE owner IN (SELECT name FROM authors)")
    for (owner,) in owners.fetchall():
        notify(db, "final released", str(owner), detail, operator=False)
