"""The ladder's freeze and its release (docs/contest.md, "The contest's end").

The freeze time is the earlier of `[contest] freeze_at` in ladder.toml and the time `arena ladder
freeze` stored (meta FREEZE_META); an earlier one always wins, so nobody can put a freeze off
by freezing again later. From that instant no author submits a version, registers a remote bot
or its new version, or registers as an author: every refusal is a Frozen naming the time, and
the checks compare the clock at each request, so a freeze set for later takes effect at its time
with no restart. The operator still changes the roster, and the audit log keeps each change.

At the freeze the live version of every bot is pinned (the `frozen` table: version, status,
rating and matches then): the final plays those, and the hidden pages show that leaderboard. The
first reader or writer that finds the freeze due pins (serve does it at every tick), in one
write that only the first can make; it is logged as serve's.

The release (`[contest] release`, or `arena ladder release`, stored in meta RELEASE_META, which
wins over the file) says who sees what happened after the freeze.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from tournaments import audit_log
from tournaments.contest import Release
from tournaments.ladder import hook_events, roster
from tournaments.ladder.config_file import LadderConfig
from tournaments.ladder.database import LadderStore
from tournaments.ladder.uploads import UploadRefused

FREEZE_META = "freeze_at"  # the time `arena ladder freeze` set, ISO 8601 UTC
PINNED_META = "frozen_pinned_at"  # when the pins were taken
RELEASE_META = "release"


class Frozen(UploadRefused):
    """An author's submission or registration after the freeze."""


@dataclass(frozen=True)
class Pin:
    bot: str
    version: str
    status: str
    mu: float
    sigma: float
    matches: int

    @property
    def conservative(self) -> float:
        return self.mu - 3 * self.sigma


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def freeze_time(store: LadderStore, config: LadderConfig) -> datetime | None:
    """When the ladder freezes (or froze): the earlier of the file's and the command's."""
    stored = store.meta(FREEZE_META)
    times = [t for t in (config.contest.freeze_at, _parsed(stored)) if t is not None]
    return min(times) if times else None


def frozen_at(
    store: LadderStore, config: LadderConfig, at: datetime | None = None
) -> datetime | None:
    """The freeze time once it has come (at `at`, now by default); None before it."""
    when = freeze_time(store, config)
    moment = at or datetime.now(UTC)
    return when if when is not None and when <= moment else None


def refuse_if_frozen(store: LadderStore, config: LadderConfig, what: str) -> None:
    """Frozen, naming the freeze time, once it has come; `what` is what the author tried."""
    when = frozen_at(store, config)
    if when is not None:
        raise Frozen(
            f"the ladder froze at {iso(when)}: {what} is closed (the operator may still act)"
        )


def set_freeze(
    store: LadderStore, config: LadderConfig, at: datetime | None, why: str = ""
) -> datetime:
    """The ladder freezes at `at` (now when None), unless it freezes earlier already; the
    freeze time that holds. Logged; the pins taken when that time has come."""
    moment = at or datetime.now(UTC)
    with store.write() as db:
        stored = _parsed(store.meta(FREEZE_META))
        if stored is None or moment < stored:
            store.set_meta(FREEZE_META, iso(moment))
        audit_log.record(db, "operator", "frozen", "the ladder", why, {"at": iso(moment)})
    pin_if_due(store, config, "operator")
    when = freeze_time(store, config)
    assert when is not None
    return when


def pin_if_due(store: LadderStore, config: LadderConfig, who: str = "serve") -> bool:
    """Pin every bot's live version, once the freeze has come and nothing is pinned yet;
    whether this call pinned. Logged as `who`'s: serve's when its time came while it ran."""
    when = frozen_at(store, config)
    if when is None or store.meta(PINNED_META) is not None:
        return False
    with store.write() as db:
        if store.meta(PINNED_META) is not None:  # another process was first
            return False
        pins = {}
        for bot in roster.bots(store):
            v = bot.current
            db.execute(
                "INSERT INTO frozen (bot, version, status, mu, sigma, matches) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (bot.name, v.key, bot.status, v.mu, v.sigma, v.matches),
            )
            pins[bot.name] = v.key
        store.set_meta(PINNED_META, iso(datetime.now(UTC)))
        detail: dict[str, object] = {"at": iso(when), "pinned": pins}
        audit_log.record(db, who, "frozen", "the ladder", "the freeze came", detail)
    return True


def pins(store: LadderStore) -> list[Pin]:
    """The pinned versions, best conservative rating at the freeze first (name breaks ties)."""
    rows = store.db.execute(
        "SELECT bot, version, status, mu, sigma, matches FROM frozen"
    ).fetchall()
    found = [Pin(*row) for row in rows]
    return sorted(found, key=lambda p: (-p.conservative, p.bot))


def release_of(store: LadderStore, config: LadderConfig) -> Release:
    """Who sees what happened after the freeze: the command's last word, else the file's."""
    stored = store.meta(RELEASE_META)
    return Release(stored) if stored is not None else config.contest.release


def set_release(store: LadderStore, to: Release, why: str = "") -> None:
    with store.write() as db:
        store.set_meta(RELEASE_META, to.value)
        audit_log.record(db, "operator", "released", "the ladder", why, {"to": to.value})
        hook_events.final_released(db, to.value)


def _parsed(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)
