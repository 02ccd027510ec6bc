"""A knockout or double-elimination bracket in the terminal: round by round, each table with its
bots' seeds and points, who went through and how the table was decided."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from referee.printable import visible
from tournaments.bracket_models import BracketEntrant, BracketTable, BracketView


def print_bracket(view: BracketView, console: Console) -> None:
    for round_ in view.rounds:
        grid = Table(
            "table", "seed", "bot", "points", "through", "status", title=visible(round_.label)
        )
        for table in round_.tables:
            if not table.entrants:  # a losers' table whose feeders were byes: nobody comes
                grid.add_row(visible(table.table_id), "", "-", "", "", "empty", end_section=True)
            for number, entrant in enumerate(table.entrants):
                first = number == 0
                grid.add_row(
                    visible(table.table_id) if first else "",
                    "" if entrant.seed is None else str(entrant.seed),
                    visible(entrant.bot) if entrant.bot is not None else "?",
                    _points(entrant),
                    "yes" if entrant.through else "",
                    _status(table) if first else "",
                    end_section=number == len(table.entrants) - 1,
                )
        console.print(grid)
    if view.champion is not None:
        console.print(f"champion: {visible(view.champion)}", highlight=False)
    places = "; ".join(", ".join(visible(bot) for bot in group) for group in view.placings)
    console.print(f"placings: {places}", highlight=False)


def _points(entrant: BracketEntrant) -> str:
    return "" if entrant.points is None else f"{entrant.points:g}"


def _status(table: BracketTable) -> str:
    """waiting, bye, playing (deals so far), or decided by points, tie-break deals or seed."""
    deals = f"{table.deals} deal{'' if table.deals == 1 else 's'}"
    if table.status == "decided":
        return f"decided by {table.decided_by} ({deals})"
    if table.status == "playing":
        return f"playing ({deals} done)"
    return table.status
