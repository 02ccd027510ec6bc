"""The operator's discard of a finished match (`arena ladder discard`): it leaves the ratings,
with every seating of its deal, since a duplicate deal is judged by all its seatings together;
and, with replay, its deal is scheduled again in the same seats (serve takes the new matches
in at its next tick).

The ratings are computed again from the start, in the order they were first made
(matches.rated), without the discarded matches: openskill's update depends on the order, so
nothing short of that gives the ratings the ladder would have had without them. The freeze's
pins (ladder/freeze.py) are set again to the ratings as they stood when they were taken. All
of it, with the audit log's row, is one write. RATINGS_EPOCH moves on, so a reader that keeps
sums over the rated matches (running_totals.py) starts again."""

from __future__ import annotations

import json
from dataclasses import dataclass

from tournaments import audit_log
from tournaments.ladder import rating_history
from tournaments.ladder.database import MU, RATINGS_EPOCH, SIGMA, LadderStore, Rater, now
from tournaments.ladder.freeze import PINNED_META

BY_OPERATOR = "discarded by the operator: it no longer counts"


class DiscardError(ValueError):
    """A match that cannot be discarded now; the message says why, on one line."""


@dataclass(frozen=True)
class Discarded:
    matches: list[str]  # the deal's seatings taken out
    replays: list[str]  # the matches that play the deal again


def discard_deal(
    store: LadderStore, match_id: str, why: str, replay: bool, rate: Rater
) -> Discarded:
    with store.write() as db:
        row = db.execute(
            "SELECT status, deal FROM matches WHERE match_id = ?", (match_id,)
        ).fetchone()
        if row is None:
            raise DiscardError(f"no match {match_id!r} on the ladder")
        status, deal = str(row[0]), str(row[1])
        if status != "finished":
            said = "is still being played" if status == "scheduled" else "never counted"
            raise DiscardError(f"match {match_id} {said}: only a finished match is discarded")
        if deal in store.deals_in_play():
            raise DiscardError(
                f"match {match_id}: another seating of its deal is still to be played; discard "
                "it once they have ended"
            )
        seatings = db.execute(
            "SELECT match_id, table_no, bots, specs FROM matches "
            "WHERE deal = ? AND status = 'finished' ORDER BY seq",
            (deal,),
        ).fetchall()
        ids = [str(m) for m, *_ in seatings]
        db.executemany(
            "UPDATE matches SET status = 'discarded', rated = NULL WHERE match_id = ?",
            [(m,) for m in ids],
        )
        replays = _schedule_again(store, deal, seatings) if replay else []
        db.executemany(
            "INSERT INTO discards (match_id, at, why, replayed_as) VALUES (?, ?, ?, ?)",
            [(m, now(), why, json.dumps(replays) if replay else None) for m in ids],
        )
        _rate_again(store, rate)
        detail: dict[str, object] = {"deal": deal, "matches": ids}
        audit_log.record(db, "operator", "match discarded", match_id, why, detail)
        if replay:
            again: dict[str, object] = {"deal": deal, "as": replays}
            audit_log.record(db, "operator", "match replayed", match_id, why, again)
    return Discarded(ids, replays)


def _schedule_again(store: LadderStore, deal: str, seatings: list[tuple[object, ...]]) -> list[str]:
    made = []
    for match_id, table_no, bots, specs in seatings:
        base = str(match_id).split("~")[0]
        again = f"{base}~{store.attempts(base)}"
        store.db.execute(
            "INSERT INTO matches (match_id, table_no, deal, bots, specs, status, scheduled_at) "
            "VALUES (?, ?, ?, ?, ?, 'scheduled', ?)",
            (again, table_no, deal, bots, specs, now()),
        )
        made.append(again)
    return made


def _rate_again(store: LadderStore, rate: Rater) -> None:
    """Every rating from the start, in the order first made, without the discarded matches,
    and the rating history with them; the pins set to the ratings as they were when taken."""
    db = store.db
    rows = db.execute(
        "SELECT match_id, bots, ranks, finished_at FROM matches WHERE rated IS NOT NULL "
        "ORDER BY rated"
    ).fetchall()
    db.execute("UPDATE matches SET rated = NULL WHERE rated IS NOT NULL")
    db.execute("UPDATE versions SET mu = ?, sigma = ?, matches = 0", (MU, SIGMA))
    ratings: dict[str, tuple[float, float, int]] = {}
    series: list[rating_history.RatedMatch] = []
    pinned_at = store.meta(PINNED_META)
    pins_set = pinned_at is None
    for number, (match_id, bots, ranks, finished_at) in enumerate(rows, 1):
        if not pins_set and str(finished_at) > str(pinned_at):
            _set_pins(store, ratings)
            pins_set = True
        keys: list[str] = json.loads(bots)
        before = [ratings.get(k, (MU, SIGMA, 0)) for k in keys]
        after = rate([(mu, sigma) for mu, sigma, _ in before], tuple(json.loads(ranks)))
        for key, (mu, sigma), (_, _, played) in zip(keys, after, before, strict=True):
            ratings[key] = (mu, sigma, played + 1)
        db.execute("UPDATE matches SET rated = ? WHERE match_id = ?", (number, match_id))
        ranked = tuple(json.loads(ranks))
        series.append(
            rating_history.RatedMatch(
                number, str(match_id), str(finished_at), tuple(keys), ranked, tuple(after)
            )
        )
    if not pins_set:
        _set_pins(store, ratings)
    db.executemany(
        "UPDATE versions SET mu = ?, sigma = ?, matches = ? WHERE key = ?",
        [(mu, sigma, played, key) for key, (mu, sigma, played) in ratings.items()],
    )
    rating_history.rewrite(db, series)
    epoch = int(store.meta(RATINGS_EPOCH) or 0) + 1
    store.set_meta(RATINGS_EPOCH, str(epoch))


def _set_pins(store: LadderStore, ratings: dict[str, tuple[float, float, int]]) -> None:
    for (version,) in store.db.execute("SELECT version FROM frozen").fetchall():
        mu, sigma, played = ratings.get(str(version), (MU, SIGMA, 0))
        store.db.execute(
            "UPDATE frozen SET mu = ?, sigma = ?, matches = ? WHERE version = ?",
            (mu, sigma, played, version),
        )


def discarded(store: LadderStore) -> frozenset[str]:
    """The matches the operator discarded."""
    return frozenset(str(m) for (m,) in store.db.execute("SELECT match_id FROM discards"))
