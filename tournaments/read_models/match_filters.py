"""The tournament's match list's filters (MatchQuery): which matches pass them, and which
filters do not fit the tournament. A match whose deal is in play is given without its record,
so the result and cause filters count it as still playing."""

from __future__ import annotations

from tournaments.read_models.errors import BadQuery
from tournaments.read_models.tournament_models import MatchQuery
from tournaments.records import MatchRecord
from tournaments.schedule import MatchJob


def check_query(query: MatchQuery, bots: list[str]) -> None:
    """BadQuery when the filters cannot fit a tournament of these bots."""
    if query.bot is not None and query.bot not in bots:
        raise BadQuery(f"no bot {query.bot!r} in this tournament; its bots: {', '.join(bots)}")
    if query.result in ("win", "loss") and query.bot is None:
        raise BadQuery(f"result={query.result} needs a bot: whose {query.result}?")


def passes(job: MatchJob, record: MatchRecord | None, query: MatchQuery) -> bool:
    """Whether the match passes every filter given; record is None while it may not show."""
    if query.bot is not None and query.bot not in job.bots:
        return False
    if query.result == "playing":
        return record is None
    if query.result is not None:
        if record is None:
            return False
        outcome = record.outcome_of(query.bot) if query.bot else _any_outcome(record)
        if outcome != query.result:
            return False
    if query.cause is not None:
        if record is None:
            return False
        seat = job.bots.index(query.bot) if query.bot is not None else None
        return any(
            (seat is None or s == seat) and (query.cause == "any" or cause == query.cause)
            for s, cause, _ in record.forfeits
        )
    return True


def _any_outcome(record: MatchRecord) -> str:
    return "draw" if len(set(record.ranks)) == 1 else "decided"
