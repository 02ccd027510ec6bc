"""A bracket planned round by round, for what the classic tree (tournaments/knockout.py) cannot
fill: a count of bots that would leave a first-round table with an empty seat (8 bots at 3
seats: each table of three knocks two out, and 7 must go), and a double elimination whose
tables do not send half on (3 seats, or 4 with 1 through).

Each round of a side takes the bots waiting in it (seeds, the bots earlier tables sent on, the
winners' side's drops), best first. It plays as many full tables as it can without going
below what the side must keep (a knockout's winners' side, and a double elimination's: one
table's seats, its final; a double elimination's losers' side: the grand final's seats the
winners' side does not fill), and the best of the others rest (a bye: a table of one, who goes
on). When `through` at every table would knock out too many, the last table sends more on (a
wide table: at 3 seats, two of three). A winners' table drops the bots it does not send on to
the losers' side, once; a losers' table knocks them out: out after the second loss."""

from __future__ import annotations

from dataclasses import dataclass

from tournaments.bracket_models import Side
from tournaments.bracket_plan import Kind, Source, TablePlan, linked, snake_table


@dataclass(frozen=True)
class _Waiting:
    source: Source
    rank: tuple[int, int]  # (places behind on its way, best seed it can be): the better first


@dataclass(frozen=True)
class _Round:
    tables: list[TablePlan]
    sent_on: list[_Waiting]
    dropped: list[_Waiting]


def knocked_out(waiting: int, seats: int, through: int, keep: int) -> int:
    """How many bots a round knocks out (or drops): as many as its full tables can, but never
    below `keep`, nor to a count between `keep` and a table's seats (no table could be filled
    and the side could not end)."""
    full = waiting // seats
    if full == 0 or waiting <= keep:
        return 0
    out = min((seats - through) * full, waiting - keep)
    if keep < waiting - out < seats:
        out = waiting - seats
    return max(out, 0)


def _round(
    waiting: list[_Waiting], seats: int, through: int, keep: int, side: Side, number: int
) -> _Round | None:
    """One round of a side, or None when it plays no table."""
    out = knocked_out(len(waiting), seats, through, keep)
    if out == 0:
        return None
    best_first = sorted(waiting, key=lambda w: w.rank)
    count = -(-out // (seats - through))
    resting = len(waiting) - seats * count
    prefix = f"{side[0].upper()}{number}-T"
    tables: list[TablePlan] = []
    sent_on: list[_Waiting] = []
    for rest in best_first[:resting]:
        table_id = f"{prefix}{len(tables) + 1}"
        tables.append(TablePlan(table_id, side, number, (rest.source,), 1))
        sent_on.append(_Waiting(Source(table_id), rest.rank))
    seated: list[list[_Waiting]] = [[] for _ in range(count)]
    for place, entrant in enumerate(best_first[resting:]):
        seated[snake_table(place + 1, count)].append(entrant)
    dropped: list[_Waiting] = []
    wide = out - (seats - through) * (count - 1)  # the last table knocks out the rest
    for index, entrants in enumerate(seated):
        goes = seats - wide if index == count - 1 else through
        table_id = f"{prefix}{len(tables) + 1}"
        tables.append(TablePlan(table_id, side, number, tuple(e.source for e in entrants), goes))
        behind, seed = min(e.rank[0] for e in entrants), min(e.rank[1] for e in entrants)
        sent_on.extend(_Waiting(Source(table_id, index=i), (behind + i, seed)) for i in range(goes))
        dropped.extend(
            _Waiting(Source(table_id, index=i, dropped=True), (behind + goes + i, seed))
            for i in range(seats - goes)
        )
    return _Round(tables, sent_on, dropped)


def _side_final(waiting: list[_Waiting], through: int, number: int) -> _Round:
    """The winners' side's last table: a knockout's final, or a double elimination's winners'
    final (its `through` go on unbeaten, the others drop)."""
    table_id = f"W{number}-T1"
    ordered = sorted(waiting, key=lambda w: w.rank)
    plan = TablePlan(table_id, "winners", number, tuple(w.source for w in ordered), through)
    return _Round(
        [plan],
        [_Waiting(Source(table_id, index=i), (i, 1)) for i in range(through)],
        [
            _Waiting(Source(table_id, index=i, dropped=True), (through + i, 1))
            for i in range(len(waiting) - through)
        ],
    )


def _winners_rounds(kind: Kind, bots: int, seats: int, through: int) -> list[_Round]:
    waiting = [_Waiting(Source(None, seed=s), (0, s)) for s in range(1, bots + 1)]
    rounds: list[_Round] = []
    while played := _round(waiting, seats, through, seats, "winners", len(rounds) + 1):
        rounds.append(played)
        waiting = played.sent_on
    if len(waiting) != seats:  # a final of another size would need another game
        raise ValueError(f"{bots} bots leave {len(waiting)} for a final table of {seats}")
    final_through = 1 if kind == "knockout" else through
    rounds.append(_side_final(waiting, final_through, len(rounds) + 1))
    return rounds


def plan_tables(kind: Kind, bots: int, seats: int, through: int) -> tuple[TablePlan, ...]:
    """Every table of the bracket, each after the tables it waits on. Raises ValueError when
    the bots cannot be seated at full tables."""
    if bots < seats:
        raise ValueError(f"{bots} bots cannot fill a table of {seats}")
    winners = _winners_rounds(kind, bots, seats, through)
    if kind == "knockout":
        return linked([t for played in winners for t in played.tables])
    ordered: list[TablePlan] = []
    pool: list[_Waiting] = []
    keep = seats - through  # the grand final's seats the winners' side leaves
    number = 1
    for index, played in enumerate(winners):
        ordered.extend(played.tables)
        pool.extend(played.dropped)
        # One losers' round after each winners' round, so the sides keep in step; after the
        # winners' final, as many as the losers' side takes to come down to its finalists.
        last = index == len(winners) - 1
        while losers := _round(pool, seats, through, keep, "losers", number):
            ordered.extend(losers.tables)
            pool = losers.sent_on
            number += 1
            if not last:
                break
    if len(pool) != keep:
        raise ValueError(
            f"{bots} bots leave {len(pool)} on the losers' side for the {keep} seats it fills at "
            f"the grand final"
        )
    finalists = (*winners[-1].sent_on, *sorted(pool, key=lambda w: w.rank))
    grand = TablePlan("GF", "grand-final", 1, tuple(f.source for f in finalists), 1)
    return linked([*ordered, grand, TablePlan("GF2", "reset", 1, grand.sources, 1)])
