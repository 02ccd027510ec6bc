"""When the ladder pauses a bot by itself: it forfeited (crashed, timed out, did not show up,
answered illegally or out of protocol) in too many of its recent matches.

Only matches whose deal has ended in every seating count, and the reason (shown on the public
bot page) names causes, never a forfeit's detail: a pause while a seating of the deal is in play
would tell how that seating went, and an illegal action's detail can name a card of the hand
another seat holds in the seating still in play. The detail stays in the match's record, for
the operator and, once the deal has ended, the bot's author."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

from tournaments.records import MatchRecord


def forfeits_of(record: MatchRecord, key: str) -> list[tuple[str, str]]:
    """(cause, detail) of each forfeit of the version's seat in the match."""
    seat = record.bots.index(key)
    return [(cause, detail) for s, cause, detail in record.forfeits if s == seat]


def failing(
    recent: Sequence[MatchRecord],
    key: str,
    window: int,
    max_failures: int,
    in_play: Collection[str] = frozenset(),
) -> str | None:
    """Why the version should be paused, or None: at least max_failures of its last `window`
    matches (recent, oldest first) whose deals are not `in_play` ended in a forfeit of its
    seat."""
    last = [record for record in recent if record.deal not in in_play][-window:]
    failed = [f for record in last if (f := forfeits_of(record, key))]
    if len(failed) < max_failures:
        return None
    causes = Counter(cause for forfeits in failed for cause, _ in forfeits)
    counted = ", ".join(f"{cause} x{n}" for cause, n in causes.most_common())
    return (
        f"paused by the ladder: forfeited {len(failed)} of its last {len(last)} matches "
        f"({counted}); last: {failed[-1][-1][0]}"
    )
