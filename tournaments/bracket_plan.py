"""A planned bracket's shape, shared by its two planners (tournaments/knockout.py, the classic
tree; tournaments/bracket_pool.py, round by round for the counts and tables the tree cannot
fill) and its reader (tournaments/bracket_results.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tournaments.bracket_models import Side

Kind = Literal["knockout", "double-elimination"]


@dataclass(frozen=True)
class Source:
    """One seat of a table: seed `seed` (table None), or the index-th bot that table `table`
    sends on (dropped False) or drops to the losers' side (dropped True)."""

    table: str | None
    seed: int = 0
    index: int = 0
    dropped: bool = False


@dataclass(frozen=True)
class TablePlan:
    table_id: str
    side: Side
    round: int
    sources: tuple[Source, ...]
    through: int  # places that go on; 1 at a final
    feeds: str | None = None
    losers_feed: str | None = None


@dataclass(frozen=True)
class Bracket:
    kind: Kind
    seats: int
    through: int
    bots: tuple[str, ...]  # seed order
    tables: tuple[TablePlan, ...]  # each after every table it depends on

    def seed(self, bot: str) -> int:
        return self.bots.index(bot) + 1


def snake_table(seed: int, tables: int) -> int:
    """The 0-based table the snake deals seed (1-based) to among `tables` tables."""
    rank, position = divmod(seed - 1, tables)
    return position if rank % 2 == 0 else tables - 1 - position


def linked(ordered: list[TablePlan]) -> tuple[TablePlan, ...]:
    """Every table with where its winners and its losers go (the first table each feeds), read
    from the sources; the reset's sources are the grand final's again and feed nothing."""
    goes: dict[str, str] = {}
    drops: dict[str, str] = {}
    for table in ordered:
        for source in table.sources if table.side != "reset" else ():
            if source.table is not None:
                (drops if source.dropped else goes).setdefault(source.table, table.table_id)
    return tuple(
        TablePlan(
            t.table_id,
            t.side,
            t.round,
            t.sources,
            t.through,
            goes.get(t.table_id),
            drops.get(t.table_id),
        )
        for t in ordered
    )
