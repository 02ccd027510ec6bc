"""The ladder's events for webhooks: what happened to a bot, queued in the same transaction as
the change that caused it, for the operator's webhook and its author's (when each has one set).
Delivery, signing and retries are ladder/webhooks.py's; this module only says what is sent.

A payload holds only what its receiver may know when it is sent: an event about a match is
queued once every seating of its deal has ended (with the deal's rating), never from the match's
own end, and no payload holds a card, a hand, a deal, a bot's output or a path."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Literal, get_args

Event = Literal[
    "version live",
    "version failed",
    "bot paused",
    "first forfeit",
    "challenge done",
    "final released",
]
EVENTS: tuple[str, ...] = get_args(Event)
OPERATOR = "@operator"  # the owner of the ladder's own webhook; no author's name starts with @


def notify(
    db: sqlite3.Connection,
    event: Event,
    author: str | None,
    detail: dict[str, object],
    operator: bool = True,
) -> None:
    """Queue `event` for the operator's webhook and for `author`'s (None: the operator's only),
    inside the caller's transaction: the event lands with its change or not at all. operator
    False: for the author's alone (an event told to many authors reaches the operator once)."""
    at = datetime.now(UTC).isoformat(timespec="seconds")
    owners = [OPERATOR] if operator else []
    owners += [] if author is None else [author]
    for owner in owners:
        hooked = db.execute("SELECT 1 FROM webhooks WHERE owner = ?", (owner,)).fetchone()
        if hooked is None:
            continue
        body = json.dumps({"event": event, "at": at, **detail}, sort_keys=True)
        db.execute(
            "INSERT INTO deliveries (owner, event, body, made_at, state, next_at) "
            "VALUES (?, ?, ?, ?, 'pending', ?)",
            (owner, event, body, at, at),
        )
