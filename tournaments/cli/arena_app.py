"""The root `arena` app: the referee's commands (referee/commands/) mounted beside the
tournament's, the ladder's, `web` and `demo`, and the one place logging is set up."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Annotated

import typer

from referee import log_config as arena_logging
from referee.commands import referee_group
from referee.commands.bot_group import bot_app
from referee.commands.referee_group import replay_app
from referee.commands.terminal import Terminated, console, errors, fail, plain_when_piped
from referee.owner_only import keep_state_private
from tournaments.cli.author_group import author_app
from tournaments.cli.ladder_group import ladder_app
from tournaments.cli.tournament_group import tournament_app

app = typer.Typer(no_args_is_help=True, add_completion=False, help="The bot arena's referee.")


@app.callback()
def _setup(
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error")] = "warning",
    log_file: Annotated[Path | None, typer.Option(help="JSON log lines go here")] = None,
) -> None:
    arena_logging.configure(log_level, log_file)


@app.command()
def web(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="a tournament's folder")],
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="0: any free port")] = 8000,
    as_: Annotated[
        str,
        typer.Option(
            "--as",
            help="public: matches are shown as a spectator saw them; referee: also as the "
            "referee and every seat (loopback addresses only)",
        ),
    ] = "public",
    max_live: Annotated[int, typer.Option(min=1, help="pages updated live at once")] = 16,
    host_name: Annotated[
        list[str] | None,
        typer.Option(
            help="a Host name to answer to besides 127.0.0.1, localhost and ::1 (repeatable): "
            "any other is refused, as a DNS-rebinding page would send"
        ),
    ] = None,
) -> None:
    """Serve a tournament's page, running or finished: the standings, the matches with filters,
    each match in the replay viewer, live updates while it runs, and JSON for all of it."""
    from tournaments.web.access import Access
    from tournaments.web.webserver import StartError, prepare

    if as_ not in tuple(Access):
        raise fail(f"--as takes public or referee, not {as_!r}")
    try:
        server, sock, address = prepare(folder, host, port, Access(as_), max_live, host_name or ())
    except StartError as exc:
        raise fail(str(exc)) from None
    console.print(
        f"serving {folder.resolve()} at {address} (Ctrl-C stops)", highlight=False, soft_wrap=True
    )
    previous = signal.signal(signal.SIGTERM, _terminated)  # uvicorn raises it again at its end
    try:
        with sock:
            server.run(sockets=[sock])
    except Terminated as exc:
        raise typer.Exit(exc.code) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


@app.command()
def demo(
    games_per_pairing: Annotated[int, typer.Option(min=1, help="matches per pairing")] = 4,
    out: Annotated[Path, typer.Option(help="folder for the demo's tournaments")] = Path(
        "runs/demo"
    ),
) -> None:
    """A small round-robin of the example bots in every game, over gRPC."""
    from tournaments.cli.demo import run_demo

    folder = out.resolve()
    arena_logging.configure("info", folder.parent / f"{folder.name}.log")
    for where in run_demo(folder, games_per_pairing, console):
        console.print(f"replays: {where / 'replays'}")
    console.print(f"standings again: arena tournament standings {folder}/GAME")


# In the order --help has always listed them: games, play, serve, web, demo, then the groups.
app.registered_commands[:0] = referee_group.commands.registered_commands
app.add_typer(replay_app, name="replay")
app.add_typer(tournament_app, name="tournament")
app.add_typer(ladder_app, name="ladder")
app.add_typer(bot_app, name="bot")
app.add_typer(author_app, name="author")


def main() -> None:
    keep_state_private()  # before anything is written: see referee/owner_only.py
    plain_when_piped(app, replay_app, tournament_app, bot_app, author_app)
    try:
        app()
    except KeyboardInterrupt:
        errors.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
