"""When the ladder pauses a bot by itself: it forfeited (crashed, timed out, did not show up,
answered illegally or out of protocol) in too many of its recent matches."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from tournaments.records import MatchRecord

LAST_FORFEIT = "; last: "  # where a pause's reason names its last forfeit's detail


def forfeits_of(record: MatchRecord, key: str) -> list[tuple[str, str]]:
    """(cause, detail) of each forfeit of the version's seat in the match."""
    seat = record.bots.index(key)
    return [(cause, detail) for s, cause, detail in record.forfeits if s == seat]


def failing(recent: Sequence[MatchRecord], key: str, window: int, max_failures: int) -> str | None:
    """Why the version should be paused, or None: at least max_failures of its last `window`
    matches (recent, oldest first) ended in a forfeit of its seat."""
    last = list(recent)[-window:]
    failed = [f for record in last if (f := forfeits_of(record, key))]
    if len(failed) < max_failures:
        return None
    causes = Counter(cause for forfeits in failed for cause, _ in forfeits)
    counted = ", ".join(f"{cause} x{n}" for cause, n in causes.most_common())
    last_cause, last_detail = failed[-1][-1]
    return (
        f"paused by the ladder: forfeited {len(failed)} of its last {len(last)} matches "
        f"({counted}){LAST_FORFEIT}{last_cause}: {last_detail}"
    )
