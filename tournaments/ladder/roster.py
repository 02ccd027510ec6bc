"""The ladder's bots and their versions: what `add`, `update`, `pause`, `resume`, `retire` and
`list` do, from any process, while serve runs. Each change is one short transaction.

A bot has versions NAME@1, NAME@2, ...; the newest live one is the one that plays (an author's
uploaded version is live once serve has built and validated it, ladder/vetting.py; a bot none
of whose versions is live yet is on no list here). An update adds a
version: the old one's matches and rating stay, the new one starts at openskill's defaults and is
provisional (matchmaking seats it first) until it has played enough. A remote bot is one an
author runs elsewhere: it connects to the ladder's referee with the secret `add --remote` gave.
Every bot has an author (authors.py), the house unless one is named; a bot made active (added or
resumed) beyond its author's `bots_per_author` is refused, in the same transaction that counts.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from referee.bots.launcher import COMMAND_PREFIXES, SpecError, parse_spec
from tournaments import audit_log
from tournaments.ladder import authors, hook_events
from tournaments.ladder.database import HOUSE, MU, SIGMA, LadderStore, now
from tournaments.ladder.naming import NAME, folded

REMOTE_SPEC = "remote"
STATUSES = ("active", "paused", "retired")


class RosterError(ValueError):
    """A roster change that cannot be made; the message says why."""


class NoSuchBot(RosterError):
    """A name that is no bot of the ladder."""


@dataclass(frozen=True)
class VersionRow:
    key: str  # NAME@N
    bot: str
    number: int
    spec: str
    added_at: str
    mu: float
    sigma: float
    matches: int
    uploaded: bool = False  # an author's upload (runs at bubblewrap or docker only)


@dataclass(frozen=True)
class BotRow:
    name: str
    status: str
    reason: str
    remote: bool
    connected: bool
    current: VersionRow
    added_at: str
    changed_at: str  # last added, updated, paused, resumed or retired
    author: str = HOUSE
    team: str | None = None

    @property
    def party(self) -> str:
        """Who it plays for: never two bots of one party at a table."""
        return authors.party_of(self.name, self.author, self.team)


def version_key(name: str, number: int) -> str:
    return f"{name}@{number}"


def checked_spec(spec: str) -> str:
    """The SPEC, a bot file made absolute (serve may run from another folder)."""
    if spec == REMOTE_SPEC:
        raise RosterError("'remote' is not a SPEC: use --remote for a bot run elsewhere")
    try:
        parse_spec(spec)
    except SpecError as exc:
        raise RosterError(f"spec {spec!r}: {exc}") from None
    if spec.startswith((*COMMAND_PREFIXES, "example:")):
        return spec
    path, sep, class_name = spec.partition(".py:")
    file = Path(f"{path}.py" if sep else spec).resolve()
    return str(file) + (f":{class_name}" if sep else "")


def add_bot(
    store: LadderStore,
    name: str,
    spec: str | None,
    remote: bool = False,
    author: str = HOUSE,
    bots_per_author: int = 1,
    who: str = "operator",
    why: str = "",
) -> str | None:
    """Add a bot (its first version) of the author's; a remote bot's secret is returned, else
    None. Refused when the author has bots_per_author active bots already. Logged (audit_log)
    as done by `who`, in the same write."""
    if not NAME.fullmatch(name):
        raise RosterError(
            f"bot name {name!r}: 1 to 40 letters, digits, '_', '.' or '-', starting with a "
            "letter or digit"
        )
    if remote == (spec is not None):
        raise RosterError("give either --spec SPEC (the ladder starts the bot) or --remote")
    final = REMOTE_SPEC if remote else checked_spec(spec or "")
    token = secrets.token_urlsafe(24) if remote else None
    with store.write() as db:
        if db.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone():
            raise RosterError(f"bot {name!r} is on the ladder already: `update` gives it a version")
        for (other,) in db.execute("SELECT name FROM bots"):
            if folded(other) == folded(name):
                raise RosterError(
                    f"bot name {name!r} is too like {other!r}, on the ladder already: names "
                    "are compared without case and without '_', '.' or '-'"
                )
        if authors.author(store, author) is None:
            raise RosterError(f"no author {author!r} on the ladder: `arena ladder author add`")
        _check_room(store, author, bots_per_author, name)
        db.execute(
            "INSERT INTO bots (name, status, remote_token, added_at, changed_at, author) "
            "VALUES (?, 'active', ?, ?, ?, ?)",
            (name, token, now(), now(), author),
        )
        _add_version(store, name, 1, final)
        detail: dict[str, object] = {"version": version_key(name, 1), "author": author}
        audit_log.record(db, who, "bot added", name, why, detail | {"remote": remote})
    return token


def _check_room(store: LadderStore, author: str, bots_per_author: int, bot: str) -> None:
    try:
        authors.check_room(store, author, bots_per_author, bot)
    except authors.AuthorError as exc:
        raise RosterError(str(exc)) from None


def _add_version(store: LadderStore, name: str, number: int, spec: str) -> str:
    key = version_key(name, number)
    store.db.execute(
        "INSERT INTO versions (key, bot, number, spec, added_at, mu, sigma) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (key, name, number, spec, now(), MU, SIGMA),
    )
    return key


def next_number(store: LadderStore, name: str) -> int:
    """The number of the bot's next version: after every one it has, failed ones too."""
    row = store.db.execute("SELECT MAX(number) FROM versions WHERE bot = ?", (name,)).fetchone()
    return 1 if row[0] is None else int(row[0]) + 1


def update_bot(
    store: LadderStore, name: str, spec: str | None, who: str = "operator", why: str = ""
) -> str:
    """A new version of the bot, which plays from now on; returns its key. Logged."""
    bot = bot_row(store, name)
    if bot.status == "retired":
        raise RosterError(f"bot {name!r} is retired: add it under a new name")
    if bot.remote != (spec is None):
        need = "no --spec (a remote bot)" if bot.remote else "--spec SPEC"
        raise RosterError(f"bot {name!r} needs {need}")
    final = REMOTE_SPEC if spec is None else checked_spec(spec)
    with store.write():
        key = _add_version(store, name, next_number(store, name), final)
        store.db.execute("UPDATE bots SET changed_at = ? WHERE name = ?", (now(), name))
        audit_log.record(store.db, who, "bot updated", name, why, {"version": key})
    return key


STATUS_ACTIONS: dict[str, audit_log.Action] = {
    "active": "bot resumed",
    "paused": "bot paused",
    "retired": "bot retired",
}


def set_status(
    store: LadderStore,
    name: str,
    status: str,
    reason: str = "",
    bots_per_author: int = 1,
    who: str = "operator",
) -> None:
    """pause (with why), resume (status active) or retire a bot; a retired bot stays so. A
    resume beyond its author's bots_per_author is refused. Logged, the reason as its why."""
    if status not in STATUSES:
        raise RosterError(f"status {status!r}: one of {', '.join(STATUSES)}")
    with store.write() as db:
        row = db.execute("SELECT status, author FROM bots WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise NoSuchBot(f"no bot {name!r} on the ladder")
        if row[0] == "retired" and status != "retired":
            raise RosterError(f"bot {name!r} is retired: add it under a new name")
        if status == "active":
            _check_room(store, str(row[1]), bots_per_author, name)
        db.execute(
            "UPDATE bots SET status = ?, reason = ?, changed_at = ? WHERE name = ?",
            (status, reason, now(), name),
        )
        audit_log.record(db, who, STATUS_ACTIONS[status], name, reason)
        if status == "paused" and row[0] != "paused":
            hook_events.bot_paused(db, name, who, reason)


def bots(store: LadderStore) -> list[BotRow]:
    """Every bot with its current version. Both tables are read in one snapshot: a bot added
    between the two reads (by `add` or the web, in another process) has no version yet in the
    first."""
    with store.snapshot():
        current = {v.bot: v for v in versions(store)}  # ordered by number: the newest wins
        rows = store.db.execute(
            "SELECT b.name, b.status, b.reason, b.remote_token, b.connected, b.added_at, "
            "b.changed_at, b.author, a.team FROM bots b LEFT JOIN authors a ON a.name = b.author "
            # An uploaded bot none of whose versions is live yet is not on the ladder.
            "WHERE EXISTS (SELECT 1 FROM versions v WHERE v.bot = b.name AND v.status = 'live') "
            "ORDER BY b.name"
        ).fetchall()
    return [
        BotRow(n, s, r, token is not None, bool(c), current[n], added, changed, who, team)
        for n, s, r, token, c, added, changed, who, team in rows
    ]


def bot_row(store: LadderStore, name: str) -> BotRow:
    for bot in bots(store):
        if bot.name == name:
            return bot
    raise NoSuchBot(f"no bot {name!r} on the ladder")


def versions(store: LadderStore, bot: str | None = None) -> list[VersionRow]:
    """The live versions (of the bot, when given); an uploaded one building, validating or
    failed is none of them."""
    query = (
        "SELECT key, bot, number, spec, added_at, mu, sigma, matches, "
        "content_hash IS NOT NULL FROM versions WHERE status = 'live'"
    )
    args: tuple[str, ...] = ()
    if bot is not None:
        query += " AND bot = ?"
        args = (bot,)
    rows = store.db.execute(query + " ORDER BY bot, number", args).fetchall()
    return [
        VersionRow(k, b, n, spec, at, mu, sigma, m, bool(up))
        for k, b, n, spec, at, mu, sigma, m, up in rows
    ]


def remote_tokens(store: LadderStore) -> dict[str, str]:
    """Each active remote bot's current version key -> its secret."""
    with store.snapshot():
        return {
            b.current.key: token
            for b in bots(store)
            if b.remote and b.status == "active" and (token := _token(store, b.name)) is not None
        }


def remote_secret(store: LadderStore, name: str) -> str | None:
    """The secret a remote bot connects with (None for a bot the ladder starts)."""
    return _token(store, name)


def _token(store: LadderStore, name: str) -> str | None:
    row = store.db.execute("SELECT remote_token FROM bots WHERE name = ?", (name,)).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def set_connected(store: LadderStore, present: set[str]) -> None:
    """Which remote bots are connected now (by name), as serve sees them."""
    with store.write() as db:
        db.execute("UPDATE bots SET connected = 0 WHERE connected = 1")
        db.executemany("UPDATE bots SET connected = 1 WHERE name = ?", [(n,) for n in present])
