"""The standings in the terminal: each grid of tournaments/standings_grids.py as a rich table,
then the SPRT's state or the bracket, every cell made visible()."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from referee.printable import visible
from tournaments.cli.bracket_print import print_bracket
from tournaments.standings import StandingsReport
from tournaments.standings_grids import Grid, grids, sprt_text


def print_standings(report: StandingsReport, console: Console) -> None:
    """Every table the report holds, its text made visible(): a bot's name and a forfeit's
    detail can hold what the bot chose to print."""
    for grid in grids(report):
        console.print(_rich(grid))
    if report.sprt is not None:
        console.print(visible(sprt_text(report.sprt)))
    if report.bracket is not None:
        print_bracket(report.bracket, console)


def _rich(grid: Grid) -> Table:
    header = [visible(cell) for cell in grid.header]
    table = Table(*header, title=visible(grid.title), caption=visible(grid.caption) or None)
    for row in grid.rows:
        table.add_row(*map(visible, row))
    return table
