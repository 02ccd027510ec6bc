"""The root `arena` app: the referee's commands (referee/commands/) mounted beside the
tournament's, the ladder's, `web` and `demo`, and the one place logging is set up."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from referee import log_config as arena_logging
from referee.commands.terminal import Terminated, console, errors, fail, plain_when_piped
from referee.owner_only import keep_state_private

root = typer.Typer(no_args_is_help=True, add_completion=False, help="The bot arena's referee.")


@root.callback()
def _setup(
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error")] = "warning",
    log_file: Annotated[Path | None, typer.Option(help="JSON log lines go here")] = None,
) -> None:
    arena_logging.configure(log_level, log_file)


@root.command()
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


@root.command()
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


def _referee() -> list[typer.Typer]:
    from referee.commands import referee_group

    root.registered_commands[:0] = referee_group.commands.registered_commands
    root.add_typer(referee_group.replay_app, name="replay")
    return [referee_group.replay_app]


def _tournament() -> list[typer.Typer]:
    from tournaments.cli.tournament_group import tournament_app

    root.add_typer(tournament_app, name="tournament")
    return [tournament_app]


def _ladder() -> list[typer.Typer]:
    from tournaments.cli.ladder_group import ladder_app

    root.add_typer(ladder_app, name="ladder")
    return []  # its help has always kept typer's panels, piped or not


def _bot() -> list[typer.Typer]:
    from referee.commands.bot_group import bot_app

    root.add_typer(bot_app, name="bot")
    return [bot_app]


def _author() -> list[typer.Typer]:
    from tournaments.cli.author_group import author_app

    root.add_typer(author_app, name="author")
    return [author_app]


# Each group's module imports what its commands run (the games, the ladder's store, the web's
# templates): most of a second of CPU for them all, paid by every call of `arena`. So a call
# imports only the group its first word names. In the order --help has always listed them:
# games, play, serve (the referee's), web, demo (the root's own), then the groups.
GROUPS: dict[str, Callable[[], list[typer.Typer]]] = {
    "replay": _referee,
    "tournament": _tournament,
    "ladder": _ladder,
    "bot": _bot,
    "author": _author,
}
FIRST_WORDS = {"games": _referee, "play": _referee, "serve": _referee, **GROUPS}
ROOT_ONLY = {"web", "demo"}
ROOT_VALUED = {"--log-level", "--log-file"}
_mounted: list[typer.Typer] = []


def mount(argv: list[str] | None) -> list[typer.Typer]:
    """Mount what the command line argv (its arguments, without the program) names: one group
    when its first word names one, the root's own commands alone for `web` and `demo`, every
    group otherwise (None, --help, a word no group has: typer lists them or says what is
    unknown). Returns the typer apps mounted, the root first; a group is mounted once."""
    if _mounted:
        return _mounted
    word = _first_word(argv or [])
    apps = [root]
    if word in ROOT_ONLY:
        pass
    elif word in FIRST_WORDS:
        apps += FIRST_WORDS[word]()
    else:
        for load in GROUPS.values():
            apps += load()
    _mounted.extend(apps)
    return _mounted


def _first_word(argv: list[str]) -> str | None:
    """The first argument that is not the root's option nor an option's value."""
    args = iter(argv)
    for arg in args:
        if arg in ROOT_VALUED:
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return None


def __getattr__(name: str) -> typer.Typer:
    """`app`: the root with every group mounted, for the tests that invoke it in process."""
    if name == "app":
        mount(None)
        return root
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    keep_state_private()  # before anything is written: see referee/owner_only.py
    plain_when_piped(*mount(sys.argv[1:]))
    try:
        root()
    except KeyboardInterrupt:
        errors.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
