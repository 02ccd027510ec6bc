"""Challenges: the unrated games an author asks for, their bot's live version against chosen
live versions (or the leaderboard's top N), on fresh deals.

A challenge's matches are written whole when it is asked (`challenge_matches`, never `matches`:
no read of the rated matches, the leaderboard, the public pages or the running totals can show
one) and serve plays them beside the rated ones (challenge_slots.py). Their ids and deals start
with `c` (`c7-g0`, `c7-d0`), where every rated one starts with `t`: no rated deal has their
cards, while the deal's key still comes from the ladder's secret as a rated deal's does. Each
deal is played in every seating, and the bot pools (referee/hosting/bot_pool.py) never give a
process a deal it has already been seated for, so no process sees two seatings of one deal.

Remote bots neither challenge nor are challenged: a remote bot is one party whatever processes
it runs, so it would see every seating of a challenge's deal; and its one session is the rated
ladder's.

A challenge stops (status `stopped`, with its reason) at the freeze, when its bot or an
opponent is paused, retired or has a new live version, or when the operator stops it; it is
`done` when its last match has ended. Either way the challenger's webhook hears of it
("challenge done", a summary and W-D-L, nothing of a card)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from tournaments import audit_log
from tournaments.ladder import freeze, notices
from tournaments.ladder.config_file import LadderConfig
from tournaments.ladder.database import LadderStore, finish_scheduled, now
from tournaments.ladder.roster import REMOTE_SPEC
from tournaments.records import MatchRecord
from tournaments.schedule import MatchJob

PREFIX = "c"  # of every challenge match's id and deal; rated ones start with "t"
OPEN = ("queued", "playing")
HOUR, DAY = timedelta(hours=1), timedelta(days=1)


class ChallengeRefused(Exception):
    """A challenge that cannot be asked for: one line saying what was wrong."""


class OverLimit(Exception):
    """Over one of the operator's limits: names it, and when the next game is allowed."""


class NoSuchChallenge(Exception):
    """No challenge of that id the asker may see (the same words whether it exists or not)."""


@dataclass(frozen=True)
class Challenge:
    id: int
    author: str
    bot: str
    version: str
    opponents: tuple[str, ...]
    games: int
    status: str
    reason: str
    asked_at: str
    done_at: str | None


@dataclass(frozen=True)
class Opponents:
    """Whom a challenge plays: bots by name, or the leaderboard's top N."""

    names: tuple[str, ...] = ()
    top: int = 0


def is_challenge(match_id: str) -> bool:
    return match_id.startswith(PREFIX)


# --- asking ------------------------------------------------------------------------------------


def ask(
    store: LadderStore,
    config: LadderConfig,
    author: str,
    bot: str,
    against: Opponents,
    games: int,
    at: datetime | None = None,
) -> Challenge:
    """Record the challenge and its matches; freeze.Frozen, ChallengeRefused or OverLimit
    (nothing recorded) otherwise."""
    moment = at or datetime.now(UTC)
    limits = config.challenges
    seats = config.table.seats
    if not 1 <= games <= limits.games_per_challenge:
        raise ChallengeRefused(
            f"games must be 1 to {limits.games_per_challenge} ([challenges] games_per_challenge)"
        )
    matches = math.ceil(games / seats) * seats  # whole deals: each in every seating
    with store.write() as db:
        freeze.refuse_if_frozen(store, config, "asking for a challenge")
        mine = _live(store, bot)
        if mine is None or _author_of(store, bot) != author:
            raise ChallengeRefused(f"{bot!r} is no live bot of yours")
        names = against.names or _top(store, against.top, bot)
        keys = tuple(_opponent(store, name, bot) for name in dict.fromkeys(names))
        if len(keys) < seats - 1:
            raise ChallengeRefused(
                f"a table has {seats} seats: name at least {seats - 1} opponents"
            )
        _check_limits(store, author, matches, config, moment)
        asked = moment.isoformat(timespec="seconds")
        cursor = db.execute(
            "INSERT INTO challenges (author, bot, version, opponents, games, status, asked_at) "
            "VALUES (?, ?, ?, ?, ?, 'queued', ?)",
            (author, bot, mine, json.dumps(keys), matches, asked),
        )
        number = int(cursor.lastrowid or 0)
        specs = {k: _spec(store, k) for k in (mine, *keys)}
        _schedule(store, _jobs(number, mine, keys, matches // seats, seats, specs))
        detail = {"bot": bot, "version": mine, "opponents": list(keys), "games": matches}
        audit_log.record(
            db, f"author {author}", "challenge asked", f"challenge {number}", "", detail
        )
    found = one(store, number)
    assert found is not None
    return found


def _check_limits(
    store: LadderStore, author: str, games: int, config: LadderConfig, moment: datetime
) -> None:
    """OverLimit when `games` more would put the author over games_per_hour or _per_day."""
    limits = config.challenges
    for window, most, key in ((HOUR, limits.games_per_hour, "games_per_hour"),
                              (DAY, limits.games_per_day, "games_per_day")):  # fmt: skip
        since = (moment - window).isoformat(timespec="seconds")
        rows = store.db.execute(
            "SELECT asked_at, games FROM challenges WHERE author = ? AND asked_at > ? "
            "ORDER BY asked_at",
            (author, since),
        ).fetchall()
        used = sum(int(g) for _, g in rows)
        if used + games <= most:
            continue
        named = f"[challenges] {key} = {most}"
        if games > most:
            raise OverLimit(f"{games} games are over {named}: ask for fewer")
        for asked_at, g in rows:  # the window frees the oldest asks first
            used -= int(g)
            if used + games <= most:
                allowed = datetime.fromisoformat(str(asked_at)) + window
                raise OverLimit(
                    f"{named}: you asked for {used + int(g)} games in the last "
                    f"{'hour' if window == HOUR else '24 hours'}; {games} more are allowed "
                    f"from {allowed.isoformat(timespec='seconds')}"
                )


def _live(store: LadderStore, bot: str) -> str | None:
    """The bot's live version key when it is active and plays on this machine; None otherwise."""
    row = store.db.execute(
        "SELECT v.key, v.spec FROM versions v JOIN bots b ON b.name = v.bot "
        "WHERE b.name = ? AND b.status = 'active' AND v.status = 'live' "
        "ORDER BY v.number DESC LIMIT 1",
        (bot,),
    ).fetchone()
    if row is None or row[1] == REMOTE_SPEC:
        return None
    return str(row[0])


def _author_of(store: LadderStore, bot: str) -> str | None:
    row = store.db.execute("SELECT author FROM bots WHERE name = ?", (bot,)).fetchone()
    return None if row is None else str(row[0])


def _opponent(store: LadderStore, name: str, bot: str) -> str:
    if name == bot:
        raise ChallengeRefused(f"{bot!r} cannot challenge itself")
    key = _live(store, name)
    if key is None:
        raise ChallengeRefused(
            f"{name!r} is no active bot of the ladder that plays here (remote bots are "
            "never challenged)"
        )
    return key


def _top(store: LadderStore, count: int, bot: str) -> list[str]:
    """The `count` active bots with the best conservative rating (mu - 3 sigma), bot aside."""
    if count < 1:
        raise ChallengeRefused("name the opponents, or a pool top:N with N at least 1")
    rows = store.db.execute(
        "SELECT b.name, v.mu - 3 * v.sigma, v.spec FROM bots b JOIN versions v ON v.bot = b.name "
        "WHERE b.status = 'active' AND v.status = 'live' AND b.name != ? AND v.number = "
        "(SELECT MAX(number) FROM versions WHERE bot = b.name AND status = 'live')",
        (bot,),
    ).fetchall()
    ranked = sorted((r for r in rows if r[2] != REMOTE_SPEC), key=lambda r: (-r[1], r[0]))
    return [str(r[0]) for r in ranked[:count]]


def _spec(store: LadderStore, key: str) -> str:
    row = store.db.execute("SELECT spec FROM versions WHERE key = ?", (key,)).fetchone()
    return str(row[0])


def _jobs(
    number: int,
    mine: str,
    keys: tuple[str, ...],
    deals: int,
    seats: int,
    specs: dict[str, str],
) -> list[MatchJob]:
    """Each deal at a table of the challenger and the next seats-1 opponents in turn, played in
    every rotation of its seats."""
    jobs = []
    for deal in range(deals):
        table = [mine, *(keys[(deal * (seats - 1) + i) % len(keys)] for i in range(seats - 1))]
        for rotation in range(seats):
            lineup = tuple(table[(rotation + s) % seats] for s in range(seats))
            match_id = f"{PREFIX}{number}-g{deal * seats + rotation}"
            jobs.append(
                MatchJob(
                    match_id,
                    0,
                    f"{PREFIX}{number}-d{deal}",
                    lineup,
                    tuple(specs[k] for k in lineup),
                )
            )
    return jobs


def _schedule(store: LadderStore, jobs: Iterable[MatchJob]) -> None:
    """Inside the caller's transaction."""
    store.db.executemany(
        "INSERT INTO challenge_matches (challenge, match_id, deal, bots, specs, status, "
        "scheduled_at) VALUES (?, ?, ?, ?, ?, 'scheduled', ?)",
        [
            (
                _number(j.match_id),
                j.match_id,
                j.deal,
                json.dumps(j.bots),
                json.dumps(j.specs),
                now(),
            )
            for j in jobs
        ],
    )


def _number(match_id: str) -> int:
    return int(match_id.removeprefix(PREFIX).split("-")[0])


# --- playing -----------------------------------------------------------------------------------


def next_job(store: LadderStore, busy: set[str]) -> MatchJob | None:
    """The oldest challenge match to play, of an open challenge, not in `busy` (in flight)."""
    rows = store.db.execute(
        "SELECT m.match_id, m.deal, m.bots, m.specs FROM challenge_matches m "
        "JOIN challenges c ON c.id = m.challenge "
        "WHERE m.status = 'scheduled' AND c.status IN ('queued', 'playing') ORDER BY m.seq"
    ).fetchall()
    for match_id, deal, bots, specs in rows:
        if match_id not in busy:
            return MatchJob(match_id, 0, deal, tuple(json.loads(bots)), tuple(json.loads(specs)))
    return None


def finish(store: LadderStore, record: MatchRecord, worker: str, seconds: float) -> None:
    """Record a challenge match's result and its seat times; the challenge is done (and its
    author told) once none of its matches is left to play. A result of a match its challenge's
    stop discarded is dropped."""
    with store.write() as db:
        if not finish_scheduled(db, "challenge_matches", record, worker, seconds):
            return
        number = _number(record.match_id)
        db.execute(
            "UPDATE challenges SET status = 'playing' WHERE id = ? AND status = 'queued'",
            (number,),
        )
        left = db.execute(
            "SELECT 1 FROM challenge_matches WHERE challenge = ? AND status = 'scheduled'",
            (number,),
        ).fetchone()
        if left is None:
            _end(store, number, "done", "")


def drop(store: LadderStore, match_id: str) -> None:
    """A match the host failed (not a bot): discarded, as a rated one would be."""
    with store.write():
        store.db.execute(
            "UPDATE challenge_matches SET status = 'discarded' WHERE match_id = ? "
            "AND status = 'scheduled'",
            (match_id,),
        )
        _end_if_played(store, _number(match_id))


def replay_left(store: LadderStore) -> None:
    """At serve's start: the challenge matches a previous serve left unplayed are discarded
    and scheduled again under a new id, with the same deal and seats (fresh processes: none
    has seen the deal)."""
    with store.write() as db:
        rows = db.execute(
            "SELECT match_id, deal, bots, specs FROM challenge_matches WHERE status = 'scheduled'"
        ).fetchall()
        for match_id, deal, bots, specs in rows:
            base = str(match_id).split("~")[0]
            (tries,) = db.execute(
                "SELECT COUNT(*) FROM challenge_matches WHERE match_id = ? OR match_id LIKE ?",
                (base, f"{base}~%"),
            ).fetchone()
            db.execute(
                "UPDATE challenge_matches SET status = 'discarded' WHERE match_id = ?",
                (match_id,),
            )
            again = MatchJob(
                f"{base}~{tries}", 0, deal, tuple(json.loads(bots)), tuple(json.loads(specs))
            )
            _schedule(store, [again])


# --- stopping ----------------------------------------------------------------------------------


def stop_due(store: LadderStore, config: LadderConfig) -> list[int]:
    """Stop the open challenges that may not go on: every one at the freeze; one whose bot or
    an opponent is paused, retired or has a new live version. The ids stopped."""
    when = freeze.frozen_at(store, config)
    stopped = []
    for c in challenges(store, OPEN):
        why = f"the ladder froze at {freeze.iso(when)}" if when is not None else None
        why = why or next(filter(None, (_gone(store, k) for k in (c.version, *c.opponents))), None)
        if why is not None:
            with store.write():
                _end(store, c.id, "stopped", why)
            stopped.append(c.id)
    return stopped


def _gone(store: LadderStore, key: str) -> str | None:
    """Why the version no longer plays, or None when it does."""
    bot = key.rsplit("@", 1)[0]
    row = store.db.execute("SELECT status, reason FROM bots WHERE name = ?", (bot,)).fetchone()
    if row is None:
        return f"{bot} is gone"
    if row[0] != "active":
        return f"{bot} was {row[0]}" + (f": {row[1]}" if row[1] else "")
    if _live(store, bot) != key:
        return f"{bot} has a new version ({key} no longer plays)"
    return None


def stop(store: LadderStore, number: int, why: str, who: str = "operator") -> Challenge:
    """The operator stops a challenge (audited); NoSuchChallenge when it is not open."""
    with store.write() as db:
        found = one(store, number)
        if found is None or found.status not in OPEN:
            state = "no such challenge" if found is None else f"it is {found.status}"
            raise NoSuchChallenge(f"challenge {number} cannot be stopped: {state}")
        _end(
            store,
            number,
            "stopped",
            f"stopped by the operator: {why}" if why else "stopped by the operator",
        )
        audit_log.record(db, who, "challenge stopped", f"challenge {number}", why)
    ended = one(store, number)
    assert ended is not None
    return ended


def _end_if_played(store: LadderStore, number: int) -> None:
    left = store.db.execute(
        "SELECT 1 FROM challenge_matches WHERE challenge = ? AND status = 'scheduled'", (number,)
    ).fetchone()
    if left is None:
        _end(store, number, "done", "")


def _end(store: LadderStore, number: int, status: str, reason: str) -> None:
    """Inside the caller's transaction: the challenge ends, its matches not played are
    discarded, and its author is told (a summary and W-D-L, nothing of a card)."""
    changed = store.db.execute(
        "UPDATE challenges SET status = ?, reason = ?, done_at = ? "
        "WHERE id = ? AND status IN ('queued', 'playing')",
        (status, reason, now(), number),
    ).rowcount
    if changed != 1:
        return
    store.db.execute(
        "UPDATE challenge_matches SET status = 'discarded' WHERE challenge = ? "
        "AND status = 'scheduled'",
        (number,),
    )
    c = one(store, number)
    assert c is not None
    wins, draws, losses = record_of(store, c)
    notices.notify(
        store.db,
        "challenge done",
        c.author,
        {
            "challenge": c.id,
            "bot": c.bot,
            "version": c.version,
            "opponents": list(c.opponents),
            "status": c.status,
            "reason": c.reason,
            "games": wins + draws + losses,
            "wins": wins,
            "draws": draws,
            "losses": losses,
        },
    )


# --- reading -----------------------------------------------------------------------------------

_COLUMNS = "id, author, bot, version, opponents, games, status, reason, asked_at, done_at"


def _challenge(row: tuple[object, ...]) -> Challenge:
    number, author, bot, version, opponents, games, status, reason, asked_at, done_at = row
    return Challenge(
        int(str(number)),
        str(author),
        str(bot),
        str(version),
        tuple(json.loads(str(opponents))),
        int(str(games)),
        str(status),
        str(reason),
        str(asked_at),
        None if done_at is None else str(done_at),
    )


def one(store: LadderStore, number: int) -> Challenge | None:
    row = store.db.execute(f"SELECT {_COLUMNS} FROM challenges WHERE id = ?", (number,)).fetchone()
    return None if row is None else _challenge(row)


def challenges(
    store: LadderStore, statuses: tuple[str, ...] | None = None, author: str | None = None
) -> list[Challenge]:
    """The challenges, the latest first; only of `author`, of `statuses`, when given."""
    rows = store.db.execute(f"SELECT {_COLUMNS} FROM challenges ORDER BY id DESC").fetchall()
    found = [_challenge(r) for r in rows]
    return [
        c
        for c in found
        if (statuses is None or c.status in statuses) and (author is None or c.author == author)
    ]


def record_of(store: LadderStore, c: Challenge) -> tuple[int, int, int]:
    """(wins, draws, losses) of the challenger's seat against each other seat, over the
    finished matches whose deals have ended (no seating left to play)."""
    rows = store.db.execute(
        "SELECT deal, bots, ranks FROM challenge_matches WHERE challenge = ? AND status = "
        "'finished'",
        (c.id,),
    ).fetchall()
    in_play = deals_in_play(store, c.id)
    tally = [0, 0, 0]
    for deal, bots, ranks in rows:
        if deal in in_play:
            continue
        seats, order = json.loads(bots), json.loads(ranks)
        mine = seats.index(c.version)
        for other in range(len(seats)):
            if other != mine:
                diff = order[mine] - order[other]
                tally[0 if diff < 0 else 1 if diff == 0 else 2] += 1
    return tally[0], tally[1], tally[2]


def deals_in_play(store: LadderStore, number: int | None = None) -> set[str]:
    """The challenge deals with a seating still to play (of one challenge when given)."""
    query = "SELECT DISTINCT deal FROM challenge_matches WHERE status = 'scheduled'"
    args: tuple[int, ...] = ()
    if number is not None:
        query += " AND challenge = ?"
        args = (number,)
    return {str(d) for (d,) in store.db.execute(query, args)}
