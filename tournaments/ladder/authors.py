"""The ladder's authors: the people who enter bots, each an adversary of the others.

An author has a name (the rules of a bot's name), an optional team, and a token shown once, when
it is made, and stored only as its SHA-256: whoever reads the database learns no token. A token
is checked against every author's hash with hmac.compare_digest, all of them every time, so
neither the time taken nor the order of the rows tells which author (if any) a guess is close
to. `rotate` gives a new token (the old one stops working in the same transaction), `revoke`
leaves none; a revoked author's bots stay as they are, under the operator's control.

Every bot belongs to one author. The house (database.HOUSE) is the operator's own: the bots added
without an author are its, it has no token, and each of its bots is a party of its own (they are
the ladder's baselines: they may meet each other, and bots_per_author does not count them).
Any other author is one party with their team mates: matchmaking never seats two bots of one
party at one table (party_of).

With `[authors] registration = "invite"`, anyone holding the ladder's invite token (made by
`arena ladder author invite`, stored hashed too; a new one replaces the old) may register as an
author over HTTP, in a team of their own or none: only the operator adds an author to a team
that has members.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from tournaments import audit_log
from tournaments.ladder.database import HOUSE, LadderStore, now
from tournaments.ladder.hook_settings import drop_hook
from tournaments.ladder.naming import NAME, folded

INVITE_META = "invite_token_hash"


class AuthorError(ValueError):
    """An author change that cannot be made; the message says why."""


class NoSuchAuthor(AuthorError):
    """A name that is no author of the ladder."""


class BadToken(Exception):
    """A token that is no live author's (or not the invite)."""


@dataclass(frozen=True)
class Author:
    name: str
    team: str | None
    created_at: str
    rotated_at: str | None
    revoked_at: str | None

    @property
    def party(self) -> str:
        return party_of("", self.name, self.team)


def party_of(bot: str, author: str, team: str | None) -> str:
    """Who a bot plays for: its author's team, else its author; a house bot for itself."""
    if author == HOUSE:
        return f"bot:{bot}"
    if team is not None:
        return f"team:{folded(team)}"  # `Red-Team` and `redteam` are one team
    return f"author:{author}"


def hashed(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


def check_name(name: str, what: str = "author name") -> None:
    if not NAME.fullmatch(name):
        raise AuthorError(
            f"{what} {name!r}: 1 to 40 letters, digits, '_', '.' or '-', starting with a "
            "letter or digit"
        )


def add_author(
    store: LadderStore,
    name: str,
    team: str | None = None,
    new_team_only: bool = False,
    why: str = "",
) -> str:
    """A new author; their token, which nothing keeps but its hash. new_team_only (a
    registration over HTTP): refused when the team has members already, since a stranger who
    joined a team would share its places (bots_per_author) and keep it from its own bots.
    Logged: added by the operator, or registered by the author (new_team_only)."""
    check_name(name)
    if team is not None:
        check_name(team, "team name")
    token = new_token()
    with store.write() as db:
        for (other,) in db.execute("SELECT name FROM authors"):
            if other == name:
                raise AuthorError(f"author {name!r} is on the ladder already")
            if folded(other) == folded(name):
                raise AuthorError(
                    f"author name {name!r} is too like {other!r}, on the ladder already: names "
                    "are compared without case and without '_', '.' or '-'"
                )
        if team is not None and new_team_only:
            for (other,) in db.execute("SELECT team FROM authors WHERE team IS NOT NULL"):
                if folded(str(other)) == folded(team):
                    raise AuthorError(
                        f"team {team!r} has members already: the operator adds an author to a "
                        "team (`arena ladder author add --team`)"
                    )
        db.execute(
            "INSERT INTO authors (name, team, token_hash, created_at) VALUES (?, ?, ?, ?)",
            (name, team, hashed(token), now()),
        )
        if new_team_only:
            audit_log.record(db, f"author {name}", "author registered", name, why, {"team": team})
        else:
            audit_log.record(db, "operator", "author added", name, why, {"team": team})
    return token


def rotate(store: LadderStore, name: str, why: str = "") -> str:
    """A new token for the author (a revoked one's too); the old one stops working at once."""
    token = new_token()
    with store.write() as db:
        _existing(store, name)
        db.execute(
            "UPDATE authors SET token_hash = ?, rotated_at = ?, revoked_at = NULL WHERE name = ?",
            (hashed(token), now(), name),
        )
        audit_log.record(db, "operator", "author token rotated", name, why)
    return token


def revoke(store: LadderStore, name: str, why: str = "") -> None:
    """No token of the author's works from now on (until `rotate` gives a new one), and their
    webhook goes: a revoked author hears nothing more from the ladder."""
    with store.write() as db:
        _existing(store, name)
        db.execute(
            "UPDATE authors SET token_hash = NULL, revoked_at = ? WHERE name = ?", (now(), name)
        )
        drop_hook(db, name, "the author was revoked")
        audit_log.record(db, "operator", "author revoked", name, why)


def _existing(store: LadderStore, name: str) -> Author:
    if name == HOUSE:
        raise AuthorError(f"{HOUSE!r} is the operator's own author: it has no token")
    found = author(store, name)
    if found is None:
        raise NoSuchAuthor(f"no author {name!r} on the ladder")
    return found


def author(store: LadderStore, name: str) -> Author | None:
    row = store.db.execute(
        "SELECT name, team, created_at, rotated_at, revoked_at FROM authors WHERE name = ?",
        (name,),
    ).fetchone()
    return None if row is None else Author(*row)


def authors(store: LadderStore) -> list[Author]:
    """Every author, the house first; no token, no hash."""
    rows = store.db.execute(
        "SELECT name, team, created_at, rotated_at, revoked_at FROM authors "
        "ORDER BY name != ?, name",
        (HOUSE,),
    ).fetchall()
    return [Author(*row) for row in rows]


def authenticate(store: LadderStore, token: str) -> Author:
    """The live author whose token this is; BadToken otherwise. Every author's hash is
    compared, in constant time, whatever the token."""
    given = hashed(token).encode()
    rows = store.db.execute(
        "SELECT name, token_hash FROM authors WHERE token_hash IS NOT NULL"
    ).fetchall()
    match = None
    for name, stored in rows:  # no early exit: the time does not tell where a match was
        if hmac.compare_digest(given, str(stored).encode()):
            match = str(name)
    found = None if match is None else author(store, match)
    if found is None:
        raise BadToken("the author token is wrong (or revoked)")
    return found


def invite(store: LadderStore, why: str = "") -> str:
    """A new invite token (the old one stops working); nothing keeps it but its hash."""
    token = new_token()
    with store.write() as db:
        store.set_meta(INVITE_META, hashed(token))
        audit_log.record(db, "operator", "invite made", "the ladder", why)
    return token


def check_invite(store: LadderStore, token: str) -> None:
    """BadToken unless the token is the ladder's invite; in constant time."""
    stored = store.meta(INVITE_META)
    if stored is None or not hmac.compare_digest(hashed(token).encode(), stored.encode()):
        raise BadToken("the invite token is wrong")


def live_bots(store: LadderStore, author_name: str) -> list[str]:
    """The author's active bots (and their team mates'), by name."""
    found = author(store, author_name)
    if found is None or author_name == HOUSE:
        return []
    rows = store.db.execute(
        "SELECT b.name, b.author, a.team FROM bots b JOIN authors a ON a.name = b.author "
        "WHERE b.status = 'active' ORDER BY b.name"
    ).fetchall()
    return [bot for bot, who, team in rows if party_of(bot, who, team) == found.party]


def check_room(store: LadderStore, author_name: str, bots_per_author: int, adding: str) -> None:
    """AuthorError when the bot `adding` going live would give its author's party more active
    bots than bots_per_author; call it inside the write that makes the bot active."""
    if author_name == HOUSE:
        return
    live = [b for b in live_bots(store, author_name) if b != adding]
    if len(live) >= bots_per_author:
        raise AuthorError(
            f"author {author_name!r} has {len(live)} active bot(s) already "
            f"({', '.join(live)}), the most [authors] bots_per_author = {bots_per_author} "
            "allows: pause or retire one first"
        )
