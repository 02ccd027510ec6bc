"""`arena tournament run | resume | standings | release | audit | export | plan`."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel
from rich.table import Table
from rich.text import Text

from referee import log_config as arena_logging
from referee.commands.jsonshape import JSON_HELP, describe
from referee.commands.terminal import Terminated, console, errors, fail, print_json, writable_folder
from referee.printable import visible
from tournaments.audit_log import AuditEntry
from tournaments.cli.progress_bar import MatchProgress
from tournaments.cli.standings_print import print_standings
from tournaments.config import ConfigError, TournamentConfig, load_config, parse_config
from tournaments.contest import Release
from tournaments.cores_executor import ExecutorError
from tournaments.cost_plan import THINK_MS, CostPlan, cost_plan, plan_lines
from tournaments.lock import LockError, RunnerLock, describe_state, holder
from tournaments.read_models.errors import FolderError
from tournaments.read_models.tournament_reads import TournamentFolder
from tournaments.runner import RunSummary, run_tournament
from tournaments.standings import StandingsReport, standings_report
from tournaments.standings_grids import never_played
from tournaments.store import Store, StoreError
from tournaments.web.static_site import ExportError, export_site

FOLDER_FILE = "tournament.toml"  # what `run FOLDER` plays
tournament_app = typer.Typer(
    no_args_is_help=True, help="Run, resume and inspect tournaments of bots."
)


@tournament_app.command("run")
def run(
    config_file: Annotated[
        Path,
        typer.Argument(
            metavar="CONFIG", help="tournament TOML file, or a folder holding tournament.toml"
        ),
    ],
    out: Annotated[Path | None, typer.Option(help="folder for the tournament's state")] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="matches at once")] = None,
    executor: Annotated[str | None, typer.Option(help="local, cores or dask")] = None,
    progress: Annotated[bool, typer.Option(help="show the live progress bar")] = True,
) -> None:
    """Start the tournament CONFIG describes; its state, replays and logs go to one folder."""
    if config_file.is_dir():  # a final's folder (`arena ladder final`), or any like it
        config_file = config_file / FOLDER_FILE
        if not config_file.is_file():
            raise fail(f"{config_file.parent} holds no {FOLDER_FILE}: give the tournament file")
    try:
        config = _override(load_config(config_file), concurrency, executor)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    folder = (out or Path(config.output or Path("runs") / config.name)).resolve()
    writable_folder(folder, "the tournament")
    for line in plan_lines(cost_plan(config)):
        console.print(visible(line))
    lock = _hold(folder)
    try:
        try:
            store = Store.create(folder, config)
        except StoreError as exc:
            raise fail(str(exc)) from None
        shutil.copyfile(config_file, folder / "config.toml")
        play(folder, store, progress)
    finally:
        lock.release()


def _hold(folder: Path) -> RunnerLock:
    """The folder's runner lock, held until the command ends: one runner per folder."""
    try:
        return RunnerLock.acquire(folder)
    except LockError as exc:
        raise fail(str(exc)) from None


def _override(
    config: TournamentConfig, concurrency: int | None, executor: str | None
) -> TournamentConfig:
    changes: dict[str, object] = {}
    if concurrency is not None:
        changes["concurrency"] = concurrency
    if executor is not None:
        changes["executor"] = executor
    if not changes:
        return config
    raw = config.model_dump()
    raw["run"].update(changes)
    return parse_config(raw, "command line")


@tournament_app.command("resume")
def resume(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="the tournament's folder")],
    progress: Annotated[bool, typer.Option(help="show the live progress bar")] = True,
) -> None:
    """Continue a tournament that was stopped or killed: matches in flight are played again
    with the same seeds; finished ones are kept."""
    try:
        store = Store.open(folder.resolve())
    except StoreError as exc:
        raise fail(str(exc)) from None
    lock = _hold(folder.resolve())
    try:
        play(folder.resolve(), store, progress)
    finally:
        lock.release()


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def play(folder: Path, store: Store, show_progress: bool) -> RunSummary:
    try:
        config = store.config()
    except StoreError as exc:
        raise fail(str(exc)) from None
    writable_folder(folder / "replays", "replays")
    writable_folder(folder / "logs", "bot logs")
    arena_logging.configure("info", folder / "tournament.log")
    bar = MatchProgress(console, config.name, enabled=show_progress and console.is_terminal)
    previous = signal.signal(signal.SIGTERM, _terminated)  # stops as Ctrl-C does
    try:
        summary = run_tournament(folder, store, bar)
    except ExecutorError as exc:  # the cores executor's referee processes did not start
        raise fail(str(exc)) from None
    except (KeyboardInterrupt, Terminated) as exc:
        store.set_state("interrupted")
        errors.print(f"interrupted: `arena tournament resume {folder}` continues it")
        raise typer.Exit(exc.code if isinstance(exc, Terminated) else 130) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    print_standings(standings_report(config, summary.ledger), console)
    console.print(f"replays: {folder / 'replays'}\nlog: {folder / 'tournament.log'}")
    unsaved = sum(1 for record in summary.ledger.records() if record.replay is None)
    if unsaved:
        errors.print(
            f"warning: {unsaved} matches have no replay: they could not be written (see the "
            "log); their results count"
        )
    # A bot that never played makes standings that mean nothing: said here, not only in the log.
    absent = never_played(summary.ledger, config.bot_names())
    exits = [
        fail(f"bot {name} never played: {summary.absent.get(name, cause)}", code=1)
        for name, cause in absent.items()
    ]
    if summary.state != "finished":
        raise fail(
            f"{len(summary.failed)} matches failed (see the log); "
            f"`arena tournament resume {folder}` plays them again",
            code=1,
        )
    if exits:
        raise exits[0]
    return summary


@tournament_app.command("standings", epilog=describe(StandingsReport))
def standings(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="the tournament's folder")],
    json_: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Print the standings now, also while the tournament runs."""
    try:
        store = Store.open(folder.resolve(), read_only=True)
        config, ledger, state = store.config(), store.ledger(), store.get("state")
    except StoreError as exc:
        raise fail(str(exc)) from None
    report = standings_report(
        config, ledger, describe_state(state, holder(folder.resolve()), folder)
    )
    if json_:
        print_json(report)
        return
    print_standings(report, console)
    console.print(f"state: {report.state}")


@tournament_app.command("release")
def release(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="the tournament's folder")],
    to: Annotated[Release, typer.Option("--to", help="who sees the results from now on")],
    why: Annotated[str, typer.Option("--why", help="the reason, kept in the audit log")] = "",
) -> None:
    """Release the results to the operator alone (hidden), to each author their own
    (participants) or to all (public), while the tournament runs or after: a running `arena
    web` follows at once. Logged in the audit log (`arena tournament audit`)."""
    try:
        store = Store.open(folder.resolve())
    except StoreError as exc:
        raise fail(str(exc)) from None
    try:
        was = store.set_release(to, why.strip())
    except StoreError as exc:
        raise fail(str(exc)) from None
    finally:
        store.close()
    if was is to:
        console.print(f"{folder}: the results were {to.value} already; nothing changed")
    else:
        console.print(f"{folder}: the results are {to.value} now (they were {was.value})")


class AuditLog(BaseModel):
    """`arena tournament audit --json`: what the operator did to the tournament, oldest first."""

    entries: list[AuditEntry]


@tournament_app.command("audit", epilog=describe(AuditLog))
def audit(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="the tournament's folder")],
    json_: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Print the audit log: every release, with who, when and why. No command edits it."""
    try:
        store = Store.open(folder.resolve(), read_only=True)
    except StoreError as exc:
        raise fail(str(exc)) from None
    try:
        entries = store.audit()
    finally:
        store.close()
    if json_:
        print_json(AuditLog(entries=entries))
        return
    if not entries:
        console.print(f"{folder}: nothing in the audit log")
        return
    table = Table("#", "at", "who", "action", "subject", "why", "detail")
    for e in entries:
        detail = ", ".join(f"{k}={v}" for k, v in e.detail.items())
        cells = (str(e.seq), e.at, e.who, e.action, e.subject, e.why, detail)
        # As written, never as rich markup, and no control character reaches the terminal.
        table.add_row(*(Text(visible(cell)) for cell in cells))
    console.print(table)


@tournament_app.command("export")
def export(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="the tournament's folder")],
    out: Annotated[Path, typer.Option("--out", "-o", metavar="SITE", help="folder for the site")],
    force: Annotated[
        bool, typer.Option(help="replace SITE when it holds an earlier export")
    ] = False,
) -> None:
    """Write the tournament as a static site (standings, bracket, every match's public replay,
    JSON) that opens from disk or any web host: no server, no network."""
    try:
        exported = export_site(TournamentFolder(folder.resolve()), out.resolve(), force)
    except (ExportError, FolderError) as exc:
        raise fail(str(exc)) from None
    except OSError as exc:
        raise fail(f"cannot write the site to {out}: {exc.strerror or exc}") from None
    console.print(
        f"site: {exported.index} ({exported.matches} matches, {exported.replays} replays"
        + (f", {exported.held} held back" if exported.held else "")
        + ")"
    )
    if exported.still_running:
        console.print(
            f"the tournament is {exported.state}: the site says so, and holds back every match "
            "whose deal is still in play"
        )


@tournament_app.command("plan", epilog=describe(CostPlan))
def plan(
    config_file: Annotated[Path, typer.Argument(metavar="FILE", help="tournament TOML file")],
    concurrency: Annotated[int | None, typer.Option(min=1, help="matches at once")] = None,
    think_ms: Annotated[
        int, typer.Option(min=1, help="a typical bot's think time a decision, in ms")
    ] = THINK_MS,
    json_: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """What the tournament FILE describes will cost before it starts: its matches, the
    decisions expected from the game's mean length, and the wall time at the time control and
    at a typical think time, at its concurrency on this machine's cores."""
    try:
        config = _override(load_config(config_file), concurrency, None)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    estimate = cost_plan(config, think_ms)
    if json_:
        print_json(estimate)
        return
    for line in plan_lines(estimate):
        console.print(visible(line))
