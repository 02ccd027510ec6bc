"""`arena bot check`: the command of a conformance run (referee/hosting/conformance.py)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from arena_games import get_game
from arena_games.base import GameError
from arena_games.match_settings import MatchSettings

from referee.bots.launcher import SpecError, parse_spec
from referee.bots.sandbox import Sandbox, SandboxError, Tier
from referee.commands.jsonshape import JSON_HELP, describe
from referee.commands.terminal import console, fail, print_json, writable_folder
from referee.hosting.conformance import (
    DROP_GRACE_S,
    CheckReport,
    check_bot,
    check_report,
    report,
)
from referee.printable import visible

bot_app = typer.Typer(no_args_is_help=True, help="Check a bot before it plays for real.")


@bot_app.callback()
def _bot() -> None:
    """Check a bot before it plays for real."""


@bot_app.command(epilog=describe(CheckReport))
def check(
    spec: Annotated[
        str,
        typer.Argument(help="bot SPEC: FILE.py, example:NAME, cmd:COMMAND or cmd@FOLDER:COMMAND"),
    ],
    game: Annotated[str, typer.Option(help="game name, see `arena games`")],
    games: Annotated[int, typer.Option(min=1, help="games per seat count, at least")] = 4,
    all_seat_counts: Annotated[
        bool, typer.Option(help="every seat count, not the smallest")
    ] = False,
    decision_ms: Annotated[int, typer.Option(min=1)] = 1000,
    time_bank_ms: Annotated[int, typer.Option(min=0)] = 5000,
    join_timeout_s: Annotated[float, typer.Option(min=0.1, help="how long to wait to join")] = 20.0,
    sandbox: Annotated[Tier, typer.Option(help="sandbox tier for the bot")] = Tier.NONE,
    drop: Annotated[
        bool,
        typer.Option(
            help="cut its connection at its 3rd decision, at once and silently, and report "
            "whether it joins again with its token and finishes the game"
        ),
    ] = False,
    drop_grace_s: Annotated[
        float, typer.Option(min=0.1, help="with --drop: how long it has to come back")
    ] = DROP_GRACE_S,
    keep: Annotated[Path | None, typer.Option(help="keep replays and logs in this folder")] = None,
    json_: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Play SPEC against the random bot in every seat and say what it does wrong."""
    try:
        definition = get_game(game)
        bot = parse_spec(spec)
    except (GameError, SpecError) as exc:
        raise fail(str(exc)) from None
    settings = MatchSettings(decision_ms=decision_ms, time_bank_ms=time_bank_ms)
    if keep is not None:
        writable_folder(keep.resolve(), "replays and logs")
    with tempfile.TemporaryDirectory(prefix="arena-check-") as scratch:
        workdir = (keep or Path(scratch)).resolve()
        try:
            run = asyncio.run(
                check_bot(
                    bot,
                    definition,
                    games,
                    workdir,
                    settings,
                    all_seat_counts,
                    Sandbox(tier=sandbox),
                    join_timeout_s,
                    drop_grace_s if drop else None,
                )
            )
        except (SpecError, SandboxError) as exc:
            raise fail(str(exc)) from None
    verdict = check_report(run)
    if json_:
        print_json(verdict)
    else:
        console.print(visible("\n".join(report(verdict))))
    raise typer.Exit(0 if verdict.clean else 1)
