"""Knockout and double-elimination brackets planned, pure: no ledger, no I/O.

A bracket is planned once from the number of bots (seed 1 is the first of `[[bots]]`): its
tables, each with where every seat comes from (a seed, the bots a table sends on, or the bots a
table drops to the losers' side). The first round deals the seeds out in a snake (seed 1 to
table 1, seed 2 to table 2, ..., back up from the last table), so the top seed meets the
lowest; a later round's table k takes the bots of the earlier tables whose top seed would sit at
table k by the same snake, so at two seats seeds 1 and 2 can only meet in the final. When the
bots do not fill the first round, its first tables are byes: each holds `through` of the top
seeds, who all go on, and the other seeds are dealt by the snake to the tables that play (at
two seats this is the classic 1 v N bracket with byes for the top seeds). At 3-4 seats the
bots must then fill those tables exactly (fitting()): a table with an empty seat would need a
smaller game; a count that does not, and a double elimination whose tables do not send half
on, are planned round by round (tournaments/bracket_pool.py). tournaments/bracket_results.py
plays the plan out from the results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tournaments import bracket_pool
from tournaments.bracket_plan import Bracket as Bracket
from tournaments.bracket_plan import Kind as Kind
from tournaments.bracket_plan import Source as Source
from tournaments.bracket_plan import TablePlan as TablePlan
from tournaments.bracket_plan import linked
from tournaments.bracket_plan import snake_table as snake_table


def rounds_for(bots: int, seats: int, through: int) -> int:
    """Rounds of a knockout (the winners' side of a double elimination): the fewest whose first
    round seats every bot."""
    rounds = 1
    while seats * (seats // through) ** (rounds - 1) < bots:
        rounds += 1
    return rounds


def played_first(bots: int, seats: int, through: int) -> float:
    """How many first-round tables are played; the others are byes, each holding `through`
    of the top seeds, who all go on. Whole only when the bots fill those tables exactly, which
    at two seats they always do."""
    rounds = rounds_for(bots, seats, through)
    if rounds == 1:
        return 1.0 if bots == seats else 0.5
    second = through * int((seats // through) ** (rounds - 1))  # the second round's seats
    return (bots - second) / (seats - through)


def fitting(bots: int, seats: int, through: int) -> bool:
    """Whether the first round's played tables are full (a table with an empty seat would
    need a smaller game)."""
    return bots >= seats and played_first(bots, seats, through).is_integer()


def _winners_side(
    bots: int, seats: int, through: int, name: str, final_through: int = 1
) -> list[list[TablePlan]]:
    """The winners' side (the whole bracket of a knockout), round by round; its last table
    sends `final_through` on (a knockout's champion, or a double elimination's finalists)."""
    spread = seats // through
    rounds = rounds_for(bots, seats, through)
    counts = [spread ** (rounds - r) for r in range(1, rounds + 1)]  # tables per round
    sources: list[list[list[Source]]] = [[[] for _ in range(c)] for c in counts]
    played = int(played_first(bots, seats, through))
    resting = counts[0] - played  # bye tables: the first ones, for the top seeds
    for seed in range(1, bots + 1):
        if seed <= through * resting:
            table = snake_table(seed, resting)
        else:
            table = resting + snake_table(seed - through * resting, played)
        sources[0][table].append(Source(None, seed=seed))
    for r in range(1, rounds):
        for q in range(counts[r - 1]):
            target = sources[r][snake_table(q + 1, counts[r])]
            target.extend(Source(f"{name}{r}-T{q + 1}", index=i) for i in range(through))
    side: list[list[TablePlan]] = []
    for r, count in enumerate(counts):
        last = r == rounds - 1
        side.append(
            [
                TablePlan(
                    f"{name}{r + 1}-T{t + 1}",
                    "winners",
                    r + 1,
                    tuple(sources[r][t]),
                    final_through if last else through,
                    None if last else f"{name}{r + 2}-T{snake_table(t + 1, counts[r + 1]) + 1}",
                )
                for t in range(count)
            ]
        )
    return side


def plan_bracket(kind: Kind, bots: Sequence[str], seats: int, through: int) -> Bracket:
    """The classic tree when the bots fill it (and, for a double elimination, when a table
    sends half on); otherwise the bracket planned round by round (tournaments/bracket_pool.py).
    Raises ValueError when neither can seat the bots."""
    count = len(bots)
    if not fitting(count, seats, through) or (kind != "knockout" and not halves(seats, through)):
        tables = bracket_pool.plan_tables(kind, count, seats, through)
        return Bracket(kind, seats, through, tuple(bots), tables)
    if kind == "knockout":
        winners = _winners_side(count, seats, through, "W")
        tables = tuple(t for round_ in winners for t in round_)
        return Bracket(kind, seats, through, tuple(bots), tables)
    winners = _winners_side(count, seats, through, "W", final_through=through)
    return Bracket(kind, seats, through, tuple(bots), _double(winners, through))


def plannable(kind: Kind, bots: int, seats: int, through: int) -> bool:
    """Whether a bracket of `bots` can be planned with every table played full."""
    try:
        plan_bracket(kind, [str(n) for n in range(bots)], seats, through)
    except ValueError:
        return False
    return True


def halves(seats: int, through: int) -> bool:
    """Whether the classic double elimination fits: each table sends half on and drops half,
    so a losers' table is exactly the survivors of one table and the drops of another."""
    return through * 2 == seats


def _double(winners: list[list[TablePlan]], through: int) -> tuple[TablePlan, ...]:
    """Double elimination, at tables of 2 * through seats: the losers of winners' round 1
    meet each other; each later winners' round drops its losers into the losers' side, which
    alternates a round against the drops and a round among its own; the grand final is the
    winners' side's `through` finalists against the losers' side's, then a reset (GF2) when
    the losers' side wins it."""

    def each(table: str, dropped: bool = False) -> tuple[Source, ...]:
        return tuple(Source(table, index=i, dropped=dropped) for i in range(through))

    losers: list[list[TablePlan]] = []
    champions_of_losers = each(winners[0][0].table_id, dropped=True)  # one table: its drops
    for k in range(1, len(winners)):
        # Paired as the winners' tables they come from are: those feeding one next table.
        among: list[list[Source]] = [[] for _ in winners[k]]
        for q, table in enumerate(winners[k - 1]):
            # Round 1's losers themselves; later, the survivors of the losers' tables they met.
            came = each(table.table_id, True) if k == 1 else each(losers[-1][q].table_id)
            among[snake_table(q + 1, len(winners[k]))].extend(came)
        lr = len(losers) + 1
        own = [
            TablePlan(f"L{lr}-T{i + 1}", "losers", lr, tuple(s), through)
            for i, s in enumerate(among)
        ]
        # The drops meet the losers' side in reverse order every other round: no rematch soon.
        drops = list(winners[k]) if k % 2 == 0 else list(reversed(winners[k]))
        against = [
            TablePlan(
                f"L{lr + 1}-T{i + 1}",
                "losers",
                lr + 1,
                (*each(own[i].table_id), *each(drops[i].table_id, dropped=True)),
                through,
            )
            for i in range(len(own))
        ]
        losers.extend([own, against])
        champions_of_losers = each(against[0].table_id)
    unbeaten = each(winners[-1][0].table_id)
    grand = TablePlan("GF", "grand-final", 1, (*unbeaten, *champions_of_losers), 1)
    reset = TablePlan("GF2", "reset", 1, grand.sources, 1)
    return _with_feeds(winners, losers, grand, reset)


def _with_feeds(
    winners: list[list[TablePlan]],
    losers: list[list[TablePlan]],
    grand: TablePlan,
    reset: TablePlan,
) -> tuple[TablePlan, ...]:
    """Every table with where its winners and its losers go, winners' round r before losers'
    rounds 2r-2 and 2r-1 (they wait on it), the grand finals last."""
    ordered = [*winners[0]]
    for r in range(1, len(winners)):
        ordered.extend([*losers[2 * r - 2], *winners[r], *losers[2 * r - 1]])
    ordered.extend([grand, reset])
    return linked(ordered)


def unplayed_total(bracket: Bracket, deals: int) -> int:
    """The matches the bracket plays without tie-break deals or a reset: every table that gets
    more bots than go through plays `deals` deals, each in every seating."""
    seated: dict[str, int] = {}
    total = 0
    for plan in bracket.tables:
        if plan.side == "reset":
            continue
        count = sum(_arriving(source, bracket, seated) for source in plan.sources)
        seated[plan.table_id] = count
        if count > plan.through:
            total += deals * count
    return total


def _arriving(source: Source, bracket: Bracket, seated: Mapping[str, int]) -> int:
    """1 when a bot will sit in this seat, 0 when the seat stays empty (a bye's)."""
    if source.table is None:
        return int(source.seed <= len(bracket.bots))
    sitting = seated[source.table]
    through = next(t.through for t in bracket.tables if t.table_id == source.table)
    count = max(sitting - through, 0) if source.dropped else min(sitting, through)
    return int(source.index < count)
