"""The referee's commands: `arena games`, `play`, `serve` and `replay`."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from enum import StrEnum
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

from referee.bots.launcher import BotSpec, SpecError, parse_spec
from referee.commands.jsonshape import JSON_HELP, describe
from referee.commands.play_report import match_line, match_report, play_report, print_report
from referee.commands.reports import (
    GameInfo,
    GamesReport,
    MatchReport,
    PlayReport,
    VerifiedFile,
    VerifyReport,
)
from referee.commands.terminal import (
    Terminated,
    console,
    errors,
    fail,
    print_json,
    run_stoppable,
    writable_folder,
)
from referee.hosting.series import BotExited, ListenError, SeriesPlan, run_series
from referee.matches.match import MatchOutcome
from referee.printable import visible
from referee.replays.verify import Divergence, verify
from referee.replays.walk import ReplayView, text, view
from referee.wire.server import TlsError

PRACTICE_SEED_HELP = (
    "practice only: the same deals on every run, and guessable by any bot; without it every "
    "deal comes from a fresh secret"
)

# The referee's own commands, mounted by the root `arena` app (tournaments/cli/arena_app.py)
# beside the tournament's: `commands` holds games, play and serve; `replay_app` the replay group.
commands = typer.Typer()
replay_app = typer.Typer(no_args_is_help=True, help="Inspect and verify replay files.")


@commands.command(epilog=describe(GamesReport))
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


class Clock(StrEnum):
    WALL = "wall"
    CPU = "cpu"


CLOCK_HELP = (
    "what the time counts: wall, or cpu (the CPU time of each bot's process tree; needs root "
    "and control groups)"
)
WALL_CAP_HELP = "--clock cpu: a decision also ends after this many times its allowance, wall"


@commands.command(epilog=describe(PlayReport))
def play(
    game: Annotated[str, typer.Argument(help="game name, see `arena games`")],
    bot: Annotated[list[str], typer.Option("--bot", help="bot SPEC, once per seat")],
    games_: Annotated[int, typer.Option("--games", min=1, help="matches to play")] = 2,
    seed: Annotated[int | None, typer.Option(help=PRACTICE_SEED_HELP)] = None,
    replays: Annotated[Path, typer.Option(help="folder for replay files")] = Path("replays"),
    option: Annotated[list[str] | None, typer.Option(help="game option key=value")] = None,
    decision_ms: Annotated[int, typer.Option(min=1)] = 1000,
    time_bank_ms: Annotated[int, typer.Option(min=0)] = 5000,
    clock: Annotated[Clock, typer.Option(help=CLOCK_HELP)] = Clock.WALL,
    wall_cap: Annotated[float, typer.Option(min=1.0, help=WALL_CAP_HELP)] = 3.0,
    on_misbehaviour: Annotated[Policy, typer.Option(help="forfeit or random")] = Policy.FORFEIT,
    listen: Annotated[str, typer.Option(help="address the referee listens on")] = "127.0.0.1:0",
    json_: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Play GAME between bot processes over gRPC and print the results.

    A bot SPEC is FILE.py (a Bot class in it; FILE.py:Class to pick one), example:NAME,
    cmd:COMMAND, or cmd@FOLDER:COMMAND (run in FOLDER, an absolute path). FILE.py@PYTHON
    runs the bot on its own interpreter PYTHON (a venv's bin/python holding the bot's
    dependencies, and grpcio and protobuf): arena gives it its own SDK. A Python bot runs in
    its own folder, which is on its sys.path. It is named after its class (the one named, else
    the file's one Bot class), or the name = "..." the class sets, else after its file."""
    times = MatchSettings(
        decision_ms=decision_ms,
        time_bank_ms=time_bank_ms,
        clock="cpu" if clock is Clock.CPU else "wall",
        wall_cap=wall_cap,
    )
    plan = _series_plan(game, bot, games_, seed, replays, option or [], times, on_misbehaviour)
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
    times: MatchSettings,
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
    settings = times.model_copy(
        update={
            "policies": Policies(
                illegal_action=rule, timeout=rule, crash=rule, malformed=rule, protocol=rule
            )
        }
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


@commands.command()
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
    from referee.commands.serve_series import serve_series

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
    from referee.replays.viewer import model, page

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
    from referee.commands.stepper import Stepper, steps

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
