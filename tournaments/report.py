"""The standings of a tournament as text tables, cell for cell the same in the terminal and on
the tournament web page: results and openskill ratings for every format; for two-seat games an
Elo table with error bars and a crosstable; the SPRT's state."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table

from referee.settings import Misbehaviour
from tournaments.config import TournamentConfig
from tournaments.records import MatchRecord
from tournaments.schedule import Ledger
from tournaments.standings import SprtState, Standings, as_crosstable, standings

NO_SHOW = Misbehaviour.NO_SHOW.value


@dataclass(frozen=True)
class Grid:
    """One table of the standings as text, cell for cell as the terminal and the web page show
    it: both print these, so they cannot differ."""

    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    caption: str = ""


def print_standings(
    config: TournamentConfig, ledger: Ledger, console: Console, brief: bool = False
) -> None:
    """Every table; brief: the results table only."""
    shown = standings(config, ledger)
    for grid in grids(shown)[: 1 if brief else None]:
        console.print(_rich(grid), highlight=False)
    if shown.sprt is not None and not brief:
        console.print(sprt_text(shown.sprt), highlight=False)


def grids(shown: Standings) -> list[Grid]:
    """The results table, then the Elo table and the crosstable where they apply."""
    out = [results_grid(shown)]
    if shown.elo is not None:
        out.append(elo_grid(shown))
    if shown.crosstable is not None:
        out.append(crosstable_grid(shown))
    return out


def _rich(grid: Grid) -> Table:
    table = Table(*grid.header, title=grid.title, caption=grid.caption or None)
    for row in grid.rows:
        table.add_row(*row)
    return table


def results_grid(shown: Standings) -> Grid:
    title = (
        f"{shown.name} ({shown.game}, {shown.format}): {shown.finished}/{shown.scheduled} matches"
    )
    header = ["#", "bot", "games", "W-D-L", "points", "forfeits", "mu", "sigma", "rating"]
    rows = [
        [
            str(row.place),
            row.bot,
            str(row.games),
            f"{row.wins}-{row.draws}-{row.losses}",
            f"{row.points:g}",
            str(row.forfeits),
            f"{row.mu:.1f}",
            f"{row.sigma:.1f}",
            f"{row.rating:.1f}",
        ]
        for row in shown.results
    ]
    return Grid(title, header, rows, "rating = mu - 3 sigma (openskill, Plackett-Luce)")


def elo_grid(shown: Standings) -> Grid:
    rows = [
        [row.bot, f"{row.elo:+.0f}", f"{row.error95:.0f}", str(row.games), f"{row.score:.1%}"]
        for row in shown.elo or []
    ]
    return Grid("Elo (Bradley-Terry)", ["bot", "Elo", "± 95%", "games", "score"], rows)


def crosstable_grid(shown: Standings) -> Grid:
    header, *body = as_crosstable(shown.crosstable or []).rows()
    return Grid("crosstable: the row's points against the column", header, body)


def sprt_verdict(state: SprtState) -> str:
    return {
        "H1": f"{state.candidate} is stronger (elo >= {state.elo1:g} accepted)",
        "H0": f"{state.candidate} is not stronger (elo <= {state.elo0:g} accepted)",
        "continue": "no decision yet",
    }[state.verdict]


def sprt_text(state: SprtState) -> str:
    return (
        f"SPRT {state.candidate} vs {state.baseline} (elo0 {state.elo0:g}, elo1 "
        f"{state.elo1:g}, alpha {state.alpha:g}, beta {state.beta:g}): {sprt_verdict(state)}\n"
        f"  LLR {state.llr:.2f} in [{state.lower:.2f}, {state.upper:.2f}] after "
        f"{state.pairs} pairs; all {state.finished_pairs} finished pairs, pentanomial "
        f"{state.pentanomial}; elo {state.elo:+.1f} "
        f"[{state.elo_low:+.1f}, {state.elo_high:+.1f}]"
    )


def never_played(ledger: Ledger, bots: list[str]) -> dict[str, str]:
    """Bot name -> the cause it was last absent for, for each bot seated in some finished match
    that was absent (never joined, or never started) from every one of them."""
    absent: dict[str, str] = {}
    for bot in bots:
        causes = [_no_show(record, bot) for record in ledger.records() if bot in record.bots]
        if causes and all(causes):
            absent[bot] = causes[-1] or ""
    return absent


def _no_show(record: MatchRecord, bot: str) -> str | None:
    seat = record.bots.index(bot)
    return next((d for s, c, d in record.forfeits if s == seat and c == NO_SHOW), None)
