"""`arena ladder board DIR [--json]`: the leaderboard at the terminal, as the web page shows it
(the same read model, LadderApi.leaderboard), with each version's time per decision."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import RootModel
from rich.table import Table

from referee.commands.terminal import console, fail, print_json
from referee.printable import visible
from tournaments.read_models.errors import BadQuery, FolderError
from tournaments.read_models.ladder_models import LeaderboardRow
from tournaments.read_models.ladder_reads import LadderApi

Folder = Annotated[Path, typer.Argument(metavar="DIR", help="the ladder's folder")]


class Leaderboard(RootModel[list[LeaderboardRow]]):
    """The rows of --json: the web server's /api/leaderboard, the operator's whole view."""


def board(
    folder: Folder,
    against: Annotated[
        str | None, typer.Option("--against", help="each row's win rate against this bot")
    ] = None,
    retired: Annotated[bool, typer.Option("--retired", help="with retired bots")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="as JSON")] = False,
) -> None:
    """The leaderboard: ratings, games and each version's time per decision (mean/longest, CPU
    under clock = "cpu", and wall), of its rated matches."""
    try:
        api = LadderApi.open(folder.resolve())
        rows = api.leaderboard(against=against, retired=retired, whole=True)
    except (FolderError, BadQuery) as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json(Leaderboard(rows))
        return
    table = Table("rank", "bot", "version", "mu", "sigma", "games", "time per decision", "status")
    for row in rows:
        table.add_row(
            str(row.rank),
            visible(row.bot),
            visible(row.version),
            f"{row.mu:.2f}",
            f"{row.sigma:.2f}",
            str(row.matches),
            row.time.brief(),
            row.status,
        )
    console.print(table)


def board_command(app: typer.Typer) -> None:
    app.command("board")(board)
