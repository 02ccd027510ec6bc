"""The `arena` command line."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from arena_games import GAMES, get_game
from arena_games.base import GameError
from arena_games.deals import series_secret
from arena_games.match_settings import MatchSettings, Policies, Policy
from arena_games.replay_file import ReplayError
from rich.table import Table
from rich.text import Text

from referee.bots.conformance import bot_app
from referee.bots.launcher import BotSpec, SpecError, parse_spec
from referee.console import logging as arena_logging
from referee.console.jsonshape import JSON_HELP, describe
from referee.console.reports import (
    GameInfo,
    GamesReport,
    MatchReport,
    PlayReport,
    ReplayView,
    VerifiedFile,
    VerifyReport,
)
from referee.console.terminal import (
    Terminated,
    console,
    errors,
    fail,
    plain_when_piped,
    print_json,
    run_stoppable,
    visible,
    writable_folder,
)
from referee.matches.match import MatchOutcome
from referee.owner_only import keep_state_private
from referee.replays.replay_view import text, view
from referee.replays.verify import Divergence, verify
from referee.series.series_host import BotExited, ListenError, SeriesPlan, run_series
from referee.series.series_report import match_line, match_report, play_report, print_report
from referee.wire.server import TlsError
from tournaments.ladder.ladder_cli import ladder_app
from tournaments.tournament_cli import tournament_app

PRACTICE_SEED_HELP = (
    "practice only: the same deals on every run, and guessable by any bot; without it every "
    "deal comes from a fresh secret"
)

app = typer.Typer(no_args_is_help=True, add_completion=False, help="The bot arena's referee.")
replay_app = typer.Typer(no_args_is_help=True, help="Inspect and verify replay files.")
app.add_typer(replay_app, name="replay")
app.add_typer(tournament_app, name="tournament")
app.add_typer(ladder_app, name="ladder")
app.add_typer(bot_app, name="bot")


@app.callback()
def _setup(
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error")] = "warning",
    log_file: Annotated[Path | None, typer.Option(help="JSON log lines go here")] = None,
) -> None:
    arena_logging.configure(log_level, log_file)


@app.command(epilog=describe(GamesReport))
def games(
    json_: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """List the games this referee knows."""
    report = GamesReport(
        games=[
            GameInfo(
                name=g.name, title=g.title, seats=list(g.seat_counts), rules_version=g.rules_version
            )
            for g in GAMES.values()
        ]
    )
    if json_:
        print_json(report)
        return
    table = Table("name", "title", "seats", "rules version")
    for game in report.games:
        table.add_row(game.name, game.title, ", ".join(map(str, game.seats)), game.rules_version)
    console.print(table)


def _options(raw: list[str]) -> dict[str, object]:
    options: dict[str, object] = {}
    for item in raw:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise fail(f"--option takes key=value, not {item!r}")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


@app.command(epilog=describe(PlayReport))
def play(
    game: Annotated[str, typer.Argument(help="game name, see `arena games`")],
    bot: Annotated[list[str], typer.Option("--bot", help="bot SPEC, once per seat")],
    games_: Annotated[int, typer.Option("--games", min=1, help="matches to play")] = 2,
    seed: Annotated[int | None, typer.Option(help=PRACTICE_SEED_HELP)] = None,
    replays: Annotated[Path, typer.Option(help="folder for replay files")] = Path("replays"),
    option: Annotated[list[str] | None, typer.Option(help="game option key=value")] = None,
    decision_ms: Annotated[int, typer.Option(min=1)] = 1000,
    time_bank_ms: Annotated[int, typer.Option(min=0)] = 5000,
    on_misbehaviour: Annotated[Policy, typer.Option(help="forfeit or random")] = Policy.FORFEIT,
    listen: Annotated[str, typer.Option(help="address the referee listens on")] = "127.0.0.1:0",
    json_: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Play GAME between bot processes over gRPC and print the results.

    A bot SPEC is FILE.py (a Bot class in it; FILE.py:Class to pick one), example:NAME or
    cmd:COMMAND. FILE.py@PYTHON runs the bot on its own interpreter PYTHON (a venv's
    bin/python holding the bot's dependencies, and grpcio and protobuf): arena gives it its
    own SDK. A Python bot runs in its own folder, which is on its sys.path."""
    plan = _series_plan(
        game, bot, games_, seed, replays, option or [], decision_ms, time_bank_ms, on_misbehaviour
    )
    matches: list[MatchReport] = []

    def on_match(index: int, outcome: MatchOutcome, lineup: list[int]) -> None:
        matches.append(match_report(plan, index, outcome, lineup))
        if not json_:
            console.print(visible(match_line(matches[-1])))

    try:
        run_stoppable(run_series(plan, listen, on_match=on_match, stop_at_exit=True))
    except (SpecError, BotExited, ListenError) as exc:
        raise fail(str(exc)) from None
    except (KeyboardInterrupt, Terminated) as exc:
        _print_series(play_report(plan, matches), json_)
        code = exc.code if isinstance(exc, Terminated) else 130
        errors.print(
            f"stopped after {len(matches)} of {plan.games} matches: the results so far are "
            "above, the finished matches' replays are kept"
        )
        raise typer.Exit(code) from None
    _print_series(play_report(plan, matches), json_)


def _series_plan(
    game: str,
    bot: list[str],
    games: int,
    seed: int | None,
    replays: Path,
    option: list[str],
    decision_ms: int,
    time_bank_ms: int,
    rule: Policy,
) -> SeriesPlan:
    """The series `arena play` was asked for; a clear error for anything wrong in it."""
    try:
        definition = get_game(game)
        if len(bot) not in definition.seat_counts:
            counts = ", ".join(str(n) for n in definition.seat_counts)
            raise fail(f"{game} needs {counts} bots (--bot), got {len(bot)}")
        # The game itself says whether it can be played so: options, and its rules for them.
        definition.new_state(_options(option), len(bot))
        specs = _distinct_names([parse_spec(s) for s in bot])
    except (GameError, SpecError) as exc:
        raise fail(str(exc)) from None
    writable_folder(replays.resolve() / "logs", "replays and bot logs")
    settings = MatchSettings(
        decision_ms=decision_ms,
        time_bank_ms=time_bank_ms,
        policies=Policies(
            illegal_action=rule, timeout=rule, crash=rule, malformed=rule, protocol=rule
        ),
    )
    return SeriesPlan(
        definition, specs, games, series_secret(seed), _options(option), settings, replays.resolve()
    )


def _print_series(report: PlayReport, json_: bool) -> None:
    if json_:
        print_json(report)
    else:
        print_report(report, console)


def _distinct_names(specs: list[BotSpec]) -> list[BotSpec]:
    """Number the bots that share a name (two copies of one bot), so standings tell them apart."""
    names = [s.name for s in specs]
    return [
        replace(s, name=f"{s.name}#{i + 1}") if names.count(s.name) > 1 else s
        for i, s in enumerate(specs)
    ]


@app.command()
def serve(
    listen: Annotated[str, typer.Option(help="host:port or unix:/path")] = "127.0.0.1:50051",
    game: Annotated[str, typer.Option(help="game to host")] = "opposing-force",
    seats: Annotated[int, typer.Option(min=1)] = 2,
    games_: Annotated[int, typer.Option("--games", min=1)] = 2,
    seed: Annotated[int | None, typer.Option(help=PRACTICE_SEED_HELP)] = None,
    replays: Annotated[Path, typer.Option()] = Path("replays"),
    connect_timeout_s: Annotated[float, typer.Option(help="how long to wait for the bots")] = 300,
    tls_cert: Annotated[
        Path | None, typer.Option(help="serve TLS with this certificate (PEM)")
    ] = None,
    tls_key: Annotated[
        Path | None, typer.Option(help="the certificate's private key (PEM)")
    ] = None,
    rejoin_grace_s: Annotated[
        float,
        typer.Option(min=0, help="how long a bot whose connection dropped may rejoin its match"),
    ] = 30.0,
) -> None:
    """Host a series for bots that connect on their own: prints one token per seat. With
    --tls-cert and --tls-key the bots connect over TLS (the SDK: $ARENA_ROOT_CERT)."""
    from referee.series.serve import serve_series

    try:
        definition = get_game(game)
        definition.new_state(None, seats)
    except GameError as exc:
        raise fail(str(exc)) from None
    writable_folder(replays.resolve(), "replays")
    try:
        asyncio.run(
            serve_series(
                definition,
                listen,
                seats,
                games_,
                series_secret(seed),
                replays.resolve(),
                connect_timeout_s,
                console,
                tls_cert=tls_cert,
                tls_key=tls_key,
                rejoin_grace_s=rejoin_grace_s,
            )
        )
    except (ListenError, TlsError) as exc:
        raise fail(str(exc)) from None


@replay_app.command("show", epilog=describe(ReplayView))
def replay_show(
    file: Path,
    as_: Annotated[str, typer.Option("--as", help="referee, public or a seat number")] = "public",
    step: Annotated[int | None, typer.Option(min=0, help="stop after this many steps")] = None,
    boards: Annotated[
        bool, typer.Option(help="print the table after every decision (--json: in boards)")
    ] = False,
    json_: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Print a replay as the referee, a seat or a spectator sees it."""
    try:
        shown = view(file, as_, step, boards)
    except (ReplayError, ValueError, GameError) as exc:
        raise fail(str(exc)) from None
    if json_:
        print_json(shown)
    else:
        console.print(visible(text(shown)))


@replay_app.command("html")
def replay_html(
    file: Path,
    out: Annotated[Path, typer.Option("--out", "-o", help="the HTML file to write")],
    as_: Annotated[
        str, typer.Option("--as", help="referee (every viewpoint), public or a seat number")
    ] = "public",
) -> None:
    """Write the replay as one self-contained HTML page (no network needed to open it) that
    draws the table at every decision. A seat's or the public's page holds only what that
    viewpoint may see; the referee's switches between all of them."""
    from referee.viewer import model, page

    try:
        html = page.render(model.load(file, as_))
    except (ReplayError, ValueError, GameError) as exc:
        raise fail(str(exc)) from None
    try:
        out.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
    console.print(f"wrote {out}")


@replay_app.command("step")
def replay_step(
    file: Path,
    as_: Annotated[str, typer.Option("--as", help="referee, public or a seat number")] = "public",
) -> None:
    """Step through a replay in the terminal as the referee, a seat or a spectator sees it:
    left and right arrows, Home and End; q quits."""
    from referee.viewer.stepper import Stepper, steps

    try:
        title, shown = steps(file, as_)
    except (ReplayError, ValueError, GameError) as exc:
        raise fail(str(exc)) from None
    Stepper(title, shown).run()


@replay_app.command("verify", epilog=describe(VerifyReport))
def replay_verify(
    files: Annotated[list[Path], typer.Argument(help="replay files")],
    commitment: Annotated[
        str | None,
        typer.Option(help="the deal commitment your bot was sent in MatchStart: must match"),
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Re-simulate replays, and check each deal's key against the commitment every seat was
    sent; exit 1 with the first divergence when one does not match."""
    checked = []
    for file in files:
        try:
            steps = len(verify(file, commitment).state.history)
        except (ReplayError, Divergence) as exc:
            checked.append(VerifiedFile(file=str(file), ok=False, steps=None, error=str(exc)))
        else:
            checked.append(VerifiedFile(file=str(file), ok=True, steps=steps, error=None))
    report = VerifyReport(ok=all(f.ok for f in checked), files=checked)
    if json_:
        print_json(report)
    for verified in [] if json_ else checked:
        if verified.ok:
            console.print(visible(f"ok   {verified.file} ({verified.steps} steps)"))
        else:
            errors.print(Text.assemble(("FAIL", "red"), visible(f" {verified.error}")))
    if not report.ok:
        raise typer.Exit(1)


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
    from referee.web.access import Access
    from referee.web.webserver import StartError, prepare

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
    from tournaments.demo import run_demo

    folder = out.resolve()
    arena_logging.configure("info", folder.parent / f"{folder.name}.log")
    for where in run_demo(folder, games_per_pairing, console):
        console.print(f"replays: {where / 'replays'}")
    console.print(f"standings again: arena tournament standings {folder}/GAME")


def main() -> None:
    keep_state_private()  # before anything is written: see referee/owner_only.py
    plain_when_piped(app, replay_app, tournament_app, bot_app)
    try:
        app()
    except KeyboardInterrupt:
        errors.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
