"""Deals of a seat's unseen cards (its own cards nobody else has seen: its unseen hand cards and
its deck), uniform over the deals that keep a state possible.

Play tells one thing of a hand: a series begun can always be finished (rule 7: a start and
each addition are offered only then), so while a seat lays a series its hand can finish it.
Whether it can depends only on the naturals of the series' suit and the number of aces in the
hand, so the deals fall into groups by those two, each group's size a product of binomials:
a deal picks a group that can finish in proportion to its size, then its cards uniformly.
That is exact, where rejecting uniform deals could need millions of tries (a series laid from
2 and 9 needs all of 3..8).
"""

from __future__ import annotations

import random
from bisect import bisect_right
from functools import lru_cache
from itertools import accumulate
from math import comb
from typing import NamedTuple

from arena_games.officers_battle import rules
from arena_games.officers_battle.rules import ACE, RANK_OF, SUIT_OF


class SeriesInProgress(NamedTuple):
    """A series being laid, as far as finishing it goes: its suit, the natural ranks laid (a
    mask, bit r for rank r), its card count, the top of the own pile through SERIES_TOP, and
    what the hand's cards already known hold towards it (natural ranks as a mask, aces)."""

    suit: int
    naturals: int
    laid: int
    top: int
    known_spare: int
    known_aces: int

    def finishable(self, spare: int, aces: int) -> bool:
        """Whether a hand with these naturals of the suit (known ones included) and aces has a
        legal next step: the same test as the state's series choices."""
        jokers = self.laid - self.naturals.bit_count()
        adds, ace = rules.series_additions(self.naturals, jokers, spare, aces, self.top)
        return bool(adds or ace or rules.series_finishes(self.naturals, self.laid, self.top))


Group = tuple[int, int]  # (a mask over the pool's naturals of the suit, a count of aces)


class _Groups(NamedTuple):
    naturals: tuple[int, ...]  # the pool's naturals of the series' suit
    aces: tuple[int, ...]
    others: tuple[int, ...]
    groups: tuple[Group, ...]
    cumulative: tuple[int, ...]  # running total of the groups' sizes


def deal(
    pool: list[int], count: int, rng: random.Random, series: SeriesInProgress | None
) -> list[int]:
    """count cards of the pool, uniformly over the deals with which the series (if any) can
    be finished."""
    if series is None:
        return rng.sample(pool, count)
    table = _finishing_groups(tuple(pool), count, series)
    if not table.cumulative or table.cumulative[-1] == 0:
        raise ValueError(f"no deal of {count} cards can finish the series in progress")
    chosen, aces = table.groups[bisect_right(table.cumulative, rng.randrange(table.cumulative[-1]))]
    naturals = [card for index, card in enumerate(table.naturals) if chosen >> index & 1]
    dealt = naturals + rng.sample(table.aces, aces)
    return dealt + rng.sample(table.others, count - len(dealt))


@lru_cache(maxsize=64)
def _finishing_groups(pool: tuple[int, ...], count: int, series: SeriesInProgress) -> _Groups:
    """The groups of deals that can finish the series with their sizes, made once per pool:
    search deals for one position many times."""
    naturals = tuple(c for c in pool if SUIT_OF[c] == series.suit and RANK_OF[c] != ACE)
    aces = tuple(c for c in pool if RANK_OF[c] == ACE)
    others = tuple(c for c in pool if c not in naturals and c not in aces)
    groups: list[Group] = []
    sizes: list[int] = []
    for chosen in range(1 << len(naturals)):
        taken = chosen.bit_count()
        spare = series.known_spare
        for index, card in enumerate(naturals):
            if chosen >> index & 1:
                spare |= 1 << RANK_OF[card]
        for ace_count in range(min(len(aces), count - taken) + 1):
            size = comb(len(aces), ace_count) * comb(len(others), count - taken - ace_count)
            if size and series.finishable(spare, series.known_aces + ace_count):
                groups.append((chosen, ace_count))
                sizes.append(size)
    return _Groups(naturals, aces, others, tuple(groups), tuple(accumulate(sizes)))
