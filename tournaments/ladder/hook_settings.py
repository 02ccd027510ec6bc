"""Setting a webhook: the operator's (owner notices.OPERATOR) for every event of the ladder, an
author's for their own bots'. `set` makes a fresh random secret each time and returns it, to be
shown once: it is the HMAC key the receiver checks each body with, and nothing shows it again.
Each change is logged (audit_log) with the URL's host only (its path may hold the receiver's own
token). What whoever set a hook sees of it: its URL, and the state of its deliveries, never the
secret and never a receiver's answer."""

from __future__ import annotations

import secrets
import sqlite3
import urllib.parse

from pydantic import BaseModel, ConfigDict, Field

from tournaments import audit_log
from tournaments.ladder.database import LadderStore, now
from tournaments.ladder.hook_urls import checked_url, target
from tournaments.ladder.notices import OPERATOR

SHOWN_DELIVERIES = 50


class Delivery(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int = Field(description="sent as the header X-Arena-Delivery: a repeat has the same")
    event: str
    made_at: str
    state: str = Field(description="pending, delivered or gave-up")
    attempts: int
    next_at: str = Field(description="when the next attempt is due (pending)")
    last_outcome: str = Field(description="the last attempt's HTTP status, or its error's kind")
    delivered_at: str | None


class Webhook(BaseModel):
    model_config = ConfigDict(frozen=True)

    url: str
    set_at: str
    deliveries: list[Delivery] = Field(description=f"the latest {SHOWN_DELIVERIES}, newest first")


class WebhookSet(BaseModel):
    model_config = ConfigDict(frozen=True)

    url: str
    secret: str = Field(description="the HMAC-SHA256 key: shown this once, never again")


class WebhookUrl(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(max_length=4000)


def set_hook(
    store: LadderStore, owner: str, url: str, allow_private: bool, who: str, why: str = ""
) -> str:
    """Point the owner's webhook at url (replacing any) with a fresh secret, returned; an
    author's URL checked (hook_urls.target) unless allow_private; HookRefused otherwise."""
    if owner == OPERATOR or allow_private:
        checked_url(url)
    else:
        target(url, trusted=False)
    secret = secrets.token_urlsafe(32)
    with store.write() as db:
        db.execute(
            "INSERT OR REPLACE INTO webhooks (owner, url, secret, set_at) VALUES (?, ?, ?, ?)",
            (owner, url, secret, now()),
        )
        host = urllib.parse.urlsplit(url).hostname or ""
        audit_log.record(db, who, "webhook set", owner, why, {"host": host})
    return secret


def remove_hook(store: LadderStore, owner: str, who: str, why: str = "") -> bool:
    """No webhook for the owner from now on; its pending deliveries are given up. Whether it
    had one."""
    with store.write() as db:
        if not drop_hook(db, owner, "webhook removed"):
            return False
        audit_log.record(db, who, "webhook removed", owner, why)
    return True


def drop_hook(db: sqlite3.Connection, owner: str, outcome: str) -> bool:
    """Remove the owner's webhook and give up its pending deliveries with `outcome`, inside the
    caller's transaction; whether it had one."""
    if not db.execute("DELETE FROM webhooks WHERE owner = ?", (owner,)).rowcount:
        return False
    db.execute(
        "UPDATE deliveries SET state = 'gave-up', last_outcome = ? "
        "WHERE owner = ? AND state = 'pending'",
        (outcome, owner),
    )
    return True


def hook_of(store: LadderStore, owner: str) -> Webhook | None:
    """The owner's webhook (no secret) with its latest deliveries; None when none is set."""
    with store.snapshot() as db:
        row = db.execute("SELECT url, set_at FROM webhooks WHERE owner = ?", (owner,)).fetchone()
        if row is None:
            return None
        rows = db.execute(
            "SELECT id, event, made_at, state, attempts, next_at, last_outcome, delivered_at "
            "FROM deliveries WHERE owner = ? ORDER BY id DESC LIMIT ?",
            (owner, SHOWN_DELIVERIES),
        ).fetchall()
    fields = tuple(Delivery.model_fields)
    shown = [Delivery.model_validate(dict(zip(fields, r, strict=True))) for r in rows]
    return Webhook(url=str(row[0]), set_at=str(row[1]), deliveries=shown)
