"""The 13-slot formation: which slots cover which, which touch, and how far a commander is.

Slots are numbered 1..13 as in the seed; a formation is a list of 14 card ids indexed by slot
number (index 0 is never used), EMPTY where no card is.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from arena_games import cards

DECISION_CAP = 1000
"""A guard only, on the decisions of one deal: every battle removes a card or ends the deal,
but gifts could go on forever."""
DEAL_LIMIT = 100
"""A scoring match ends after this many deals, ranked by score: deals that score nothing (a
drawn war, the decision cap) could otherwise go on forever."""

EMPTY = -1
SLOTS = tuple(range(1, 14))
COMMANDER = 13
GIFTABLE_SLOTS = tuple(range(1, 13))
"""Every slot but the commander's: the only slots a gift may take from or fill."""

COVERS: dict[int, tuple[int, ...]] = {
    1: (),
    2: (),
    3: (),
    4: (),
    5: (1, 2),
    6: (2, 3),
    7: (3, 4),
    8: (5,),
    9: (6,),
    10: (7,),
    11: (8, 9),
    12: (9, 10),
    13: (11, 12),
}
"""Slot -> the slots whose cards cover it (RULINGS.md)."""

SIDE_BY_SIDE = ((1, 2), (2, 3), (3, 4), (5, 6), (6, 7), (8, 9), (9, 10), (11, 12))


def _adjacency() -> dict[int, tuple[int, ...]]:
    pairs = set(SIDE_BY_SIDE)
    pairs.update((c, s) for s, cover in COVERS.items() for c in cover)
    return {
        slot: tuple(sorted({b for a, b in pairs if a == slot} | {a for a, b in pairs if b == slot}))
        for slot in SLOTS
    }


ADJACENT: dict[int, tuple[int, ...]] = _adjacency()
"""Slot -> the slots touching it: the cover pairs both ways and the side-by-side pairs."""

# Cover states, numbered as the wire's CaptureTheCommanderCover.
FULLY_UNCOVERED, PARTIALLY_UNCOVERED, COVERED = 1, 2, 3

# A formation's shape as a bitmask of its holes (bit s set: slot s is empty), so that the cover
# questions the legal lists ask at every decision are a table look-up, not a walk of the slots.
BIT = tuple(1 << s for s in range(14))
ALL_HOLES = sum(BIT[s] for s in SLOTS)
"""The holes of an empty formation: every slot 1..13."""
COVER_BITS = (0, *(sum(BIT[c] for c in COVERS[s]) for s in SLOTS))
ADJACENT_BITS = (0, *(sum(BIT[a] for a in ADJACENT[s]) for s in SLOTS))


def new_formation() -> list[int]:
    return [EMPTY] * 14


def holes_of(formation: Sequence[int]) -> int:
    """The bitmask of the formation's empty slots."""
    return sum(BIT[s] for s in SLOTS if formation[s] == EMPTY)


def cover_state(formation: Sequence[int], slot: int) -> int:
    """FULLY_UNCOVERED when every card of the slot's cover set is gone (always for 1..4),
    PARTIALLY_UNCOVERED when some but not all are, COVERED when none is."""
    cover = COVERS[slot]
    gone = sum(1 for c in cover if formation[c] == EMPTY)
    if gone == len(cover):
        return FULLY_UNCOVERED
    return PARTIALLY_UNCOVERED if gone else COVERED


@cache
def attackers(holes: int) -> tuple[int, ...]:
    """Slots of a formation with these holes that hold a card its owner may attack with."""
    return tuple(s for s in SLOTS if not holes & BIT[s] and holes & COVER_BITS[s] == COVER_BITS[s])


@cache
def exposed(holes: int) -> tuple[int, ...]:
    """Slots of a formation with these holes that hold a card an opponent may attack: fully
    or partially uncovered (no cover, or some of it gone)."""
    return tuple(
        s for s in SLOTS if not holes & BIT[s] and (not COVER_BITS[s] or holes & COVER_BITS[s])
    )


def fully_uncovered(formation: Sequence[int]) -> list[int]:
    """Slots holding a card its owner may attack with."""
    return list(attackers(holes_of(formation)))


def targetable(formation: Sequence[int]) -> list[int]:
    """Slots holding a card an opponent may attack: fully or partially uncovered."""
    return list(exposed(holes_of(formation)))


def removals_to_expose(formation: Sequence[int], slot: int) -> int:
    """The fewest cards an opponent must still remove before the card in `slot` becomes
    targetable: partially uncovered is enough, so one emptied slot of its cover set will do."""
    cover = COVERS[slot]
    if not cover or any(formation[c] == EMPTY for c in cover):
        return 0
    return min(1 + removals_to_expose(formation, c) for c in cover)


def commander_distance(formation: Sequence[int]) -> int:
    """Battles an opponent must still win to capture this commander: the removals that expose
    it, plus the capture itself (4 + 1 = 5 for an untouched formation)."""
    return removals_to_expose(formation, COMMANDER) + 1


RANKS = tuple(cards.rank(c) for c in cards.DECK)
"""Card -> rank, 2..14 (ace high)."""


def beats(mine: int, theirs: int, twos_beat_aces: bool) -> int:
    """1 when card `mine` wins the comparison, -1 when it loses, 0 for a tie (a war). With
    twos_beat_aces a two beats an ace and still loses to everything else."""
    a, b = RANKS[mine], RANKS[theirs]
    if twos_beat_aces and a != b and a in (2, 14) and b in (2, 14):
        return 1 if a == 2 else -1
    return (a > b) - (a < b)


OUTCOMES = {
    twos: tuple(tuple(beats(mine, theirs, twos) for theirs in cards.DECK) for mine in cards.DECK)
    for twos in (False, True)
}
"""twos_beat_aces -> mine -> theirs -> beats(mine, theirs, twos_beat_aces): a battle looks its
outcome up here instead of calling beats."""
