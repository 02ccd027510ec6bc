"""Who meets whom: the tables of each tournament format, as tuples of bot names.

Seat order inside a table is not decided here (the schedule rotates seats over a deal).
Everything random draws from the random.Random passed in, so a seed gives the same tables.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# The two-seat Swiss search stops after this many steps with the best pairing found so far; a
# field where no rematch-free pairing exists can otherwise take exponential time to prove it.
SWISS_SEARCH_STEPS = 20_000
# Ladder: the mu distance at which an opponent is e^(1/2) times less likely than an equal one,
# before uncertainty widens it; openskill's default beta (25/6), the spread of one performance.
LADDER_SPREAD = 25 / 6

Rematch = Callable[[str, str], bool]  # have these two met before?


def _check_names(names: Sequence[str], what: str) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"{what} must be unique; repeated: {', '.join(repeated)}")


def _check_table(available: int, seats: int, what: str) -> None:
    if seats < 2:
        raise ValueError(f"a table needs at least 2 seats, not {seats}")
    if available < seats:
        raise ValueError(f"{available} {what} cannot fill a table of {seats} seats")


def round_robin(bots: Sequence[str], seats: int) -> list[tuple[str, ...]]:
    """Every set of `seats` bots, once (n choose seats tables)."""
    _check_names(bots, "bot names")
    _check_table(len(bots), seats, "bots")
    return list(itertools.combinations(bots, seats))


def gauntlet(challengers: Sequence[str], field: Sequence[str], seats: int) -> list[tuple[str, ...]]:
    """Each challenger, first at its table, with every set of seats-1 bots of the field;
    challengers never meet each other."""
    _check_names([*challengers, *field], "challengers and field bots")
    if not challengers:
        raise ValueError("a gauntlet needs at least one challenger")
    _check_table(len(field) + 1, seats, "bots (a challenger and the field)")
    return [
        (challenger, *others)
        for challenger in challengers
        for others in itertools.combinations(field, seats - 1)
    ]


# --- Swiss -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SwissRound:
    tables: tuple[tuple[str, ...], ...]  # the top-ranked table first
    byes: tuple[str, ...]  # bots that sit this round out, in ranking order


def swiss_round(
    points: Mapping[str, float],
    met: Mapping[frozenset[str], int],
    seats: int,
    rng: random.Random,
    byes: Mapping[str, int] | None = None,
) -> SwissRound:
    """Pair one Swiss round.

    Bots are ranked by points, ties in an order shuffled by `rng`. When the field does not
    divide into tables, the leftover bots sit out: among those with the fewest byes so far
    (`byes`), the lowest ranked. The rest fill tables from the top, avoiding rematches (pairs
    counted in `met`): at two seats a backtracking search over the ranking finds a pairing
    without rematches whenever one exists (else the one with the fewest; see
    SWISS_SEARCH_STEPS), preferring partners close in the ranking. At three or four seats each
    table takes, top down, the next bots with the fewest rematches against it; then bots are
    swapped between tables while a swap lowers the number of rematches.
    """
    _check_table(len(points), seats, "bots")
    byes = byes or {}
    stray = sorted(set(byes) - set(points))
    if stray:
        raise ValueError(f"bye counts for bots not in the round: {', '.join(stray)}")
    ranking = sorted(points)
    rng.shuffle(ranking)
    ranking.sort(key=lambda bot: -points[bot])  # stable: the shuffle breaks ties in points
    rest_count = len(ranking) % seats
    low_first = list(reversed(ranking))
    resting = set(sorted(low_first, key=lambda bot: byes.get(bot, 0))[:rest_count])
    playing = [bot for bot in ranking if bot not in resting]

    def rematch(a: str, b: str) -> bool:
        return met.get(frozenset((a, b)), 0) > 0

    tables = pair_two(playing, rematch) if seats == 2 else fill_tables(playing, seats, rematch)
    return SwissRound(tuple(tables), tuple(bot for bot in ranking if bot in resting))


def pair_two(ranking: list[str], rematch: Rematch) -> list[tuple[str, str]]:
    """Branch and bound, top down: the highest unpaired bot tries partners in ranking order; a
    branch stops when even its best completion cannot beat the best pairing found yet."""
    not_met = {a: {b for b in ranking if b != a and not rematch(a, b)} for a in ranking}
    best = [list(zip(ranking[::2], ranking[1::2], strict=True))]  # 1-2, 3-4, ...: a fallback
    best_cost = [sum(rematch(a, b) for a, b in best[0])]
    steps = [0]

    def floor(remaining: list[str]) -> int:
        # Each bot that has met everyone left needs a rematch, and a rematch serves two of them.
        others = set(remaining)
        stuck = sum(1 for a in remaining if not_met[a].isdisjoint(others - {a}))
        return (stuck + 1) // 2

    def search(remaining: list[str], cost: int, chosen: list[tuple[str, str]]) -> None:
        steps[0] += 1
        if cost + floor(remaining) >= best_cost[0] or steps[0] > SWISS_SEARCH_STEPS:
            return
        if not remaining:
            best[0], best_cost[0] = list(chosen), cost
            return
        top = remaining[0]
        for k in range(1, len(remaining)):
            partner = remaining[k]
            rest = remaining[1:k] + remaining[k + 1 :]
            search(rest, cost + rematch(top, partner), [*chosen, (top, partner)])
            if best_cost[0] == 0:
                return

    search(ranking, 0, [])
    return best[0]


def fill_tables(ranking: list[str], seats: int, rematch: Rematch) -> list[tuple[str, ...]]:
    free = list(ranking)
    tables: list[list[str]] = []
    while free:
        table = [free.pop(0)]
        while len(table) < seats:
            pick = min(range(len(free)), key=lambda i: (_clashes(free[i], table, rematch), i))
            table.append(free.pop(pick))
        tables.append(table)
    _swap_while_better(tables, rematch)
    return [tuple(table) for table in tables]


def _clashes(bot: str, others: Sequence[str], rematch: Rematch) -> int:
    return sum(rematch(bot, other) for other in others if other != bot)


def _swap_while_better(tables: list[list[str]], rematch: Rematch) -> None:
    """Swap two bots of different tables whenever that lowers the rematches; every swap lowers
    their total, so this ends. Nearer tables are tried first to keep tables close in rank."""
    improved = True
    while improved:
        improved = False
        for i, j in itertools.combinations(range(len(tables)), 2):
            for x, y in itertools.product(range(len(tables[i])), range(len(tables[j]))):
                a, b = tables[i][x], tables[j][y]
                stay_i = [o for o in tables[i] if o != a]
                stay_j = [o for o in tables[j] if o != b]
                before = _clashes(a, stay_i, rematch) + _clashes(b, stay_j, rematch)
                after = _clashes(b, stay_i, rematch) + _clashes(a, stay_j, rematch)
                if after < before:
                    tables[i][x], tables[j][y] = b, a
                    improved = True


# --- ladder ----------------------------------------------------------------------------------


def ladder_table(
    ratings: Mapping[str, tuple[float, float]],
    played: Mapping[str, int],
    seats: int,
    rng: random.Random,
    parties: Mapping[str, str] | None = None,
) -> tuple[str, ...]:
    """The next table of a continuous ladder, the focus bot first.

    The focus is the bot with the fewest matches (`played`; missing counts 0), ties going to the
    highest sigma, then to an rng draw. Its opponents are seats-1 others drawn without
    replacement, each with weight exp(-(mu - mu_focus)^2 / (2 w^2)), where
    w^2 = LADDER_SPREAD^2 + sigma_focus^2 + sigma^2 (the Gumbel top-k draw): the nearest in mu
    are the likeliest, uncertain ratings widen the net, and every bot keeps a chance, so the
    same pair does not repeat forever once the ratings settle. With `parties` (bot -> the party
    it plays for; missing: its own), an opponent of a party already at the table is passed over
    for the next draw: ValueError when fewer than `seats` parties have bots.
    """
    _check_table(len(ratings), seats, "rated bots")
    stray = sorted(set(played) - set(ratings))
    if stray:
        raise ValueError(f"match counts for bots without a rating: {', '.join(stray)}")
    names = sorted(ratings)
    rng.shuffle(names)
    focus = min(names, key=lambda bot: (played.get(bot, 0), -ratings[bot][1]))
    mu_focus, sigma_focus = ratings[focus]

    def key(bot: str) -> float:
        mu, sigma = ratings[bot]
        width2 = LADDER_SPREAD**2 + sigma_focus**2 + sigma**2
        gumbel = -math.log(max(rng.expovariate(1.0), 1e-300))
        return -((mu - mu_focus) ** 2) / (2 * width2) + gumbel

    keyed = sorted(((key(bot), bot) for bot in names if bot != focus), reverse=True)
    party = dict(parties or {})
    table = [focus]
    seated = {party.get(focus, focus)}
    for _key, bot in keyed:
        if len(table) == seats:
            break
        if party.get(bot, bot) not in seated:
            table.append(bot)
            seated.add(party.get(bot, bot))
    if len(table) < seats:
        raise ValueError(f"{seats} seats, and only {len(seated)} parties can fill them")
    return tuple(table)
