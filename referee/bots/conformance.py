"""`arena bot check SPEC --game GAME`: a conformance run. The bot plays a few games against the
random bot over gRPC, in every seat, and the check says in plain words what it does wrong:
timeouts, illegal choices, malformed answers, crashes, never joining, slow decisions, messages
the referee had to ignore. Exit code 0 when clean, 1 when not, 2 for bad input."""

from __future__ import annotations

import asyncio
import math
import statistics
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated

import typer
from arena_games import get_game
from arena_games.base import GameDefinition, GameError, GameOptions
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings, Misbehaviour
from arena_games.replay_file import DecisionRecord

from referee.bots.launcher import LOG_TAIL_LINES, BotSpec, SpecError, log_tail, parse_spec
from referee.bots.sandbox import Sandbox, SandboxError, Tier
from referee.console.jsonshape import JSON_HELP, describe
from referee.console.reports import CheckReport, SeatPlayed
from referee.console.terminal import console, fail, print_json, visible, writable_folder
from referee.matches.match import MatchOutcome
from referee.series.series_host import SeriesPlan, bot_output_files, run_series
from referee.wire.server import RefereeServer
from referee.wire.sessions import BotSession

RANDOM = parse_spec("example:random")

# What each recorded cause means, said of the bot.
CAUSES = {
    Misbehaviour.TIMEOUT: "did not answer in time",
    Misbehaviour.ILLEGAL_ACTION: "chose an action that was not legal",
    Misbehaviour.MALFORMED: "sent a malformed answer",
    Misbehaviour.PROTOCOL: "answered a decision it was not asked (a wrong decision_id or match_id)",
    Misbehaviour.CRASH: "crashed or closed its connection",
    Misbehaviour.NO_SHOW: "never joined the referee",
}


@dataclass
class CheckRun:
    """What the checked bot did over all its games."""

    bot: BotSpec
    game: str
    settings: MatchSettings
    games: int = 0
    seats: set[tuple[int, int]] = field(default_factory=set)  # (seat count, seat)
    forfeits: list[tuple[Misbehaviour, str]] = field(default_factory=list)
    substituted: Counter[str] = field(default_factory=Counter)
    times_ms: list[float] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    log_tail: list[str] = field(default_factory=list)

    def add(self, outcome: MatchOutcome, lineup: list[int]) -> None:
        seat = lineup.index(0)  # the checked bot is bot 0 of every lineup
        self.games += 1
        self.seats.add((len(lineup), seat))
        self.forfeits += [(f.cause, f.detail) for f in outcome.forfeits if f.seat == seat]
        for record in outcome.records:
            if isinstance(record, DecisionRecord) and record.seat == seat:
                if record.substituted_for:
                    self.substituted[record.substituted_for] += 1
                else:
                    self.times_ms.append(record.time_ms)


def findings(run: CheckRun) -> list[str]:
    """Everything the bot did wrong, one plain sentence each; empty when it played clean."""
    found = []
    by_cause: dict[Misbehaviour, list[str]] = {}
    for cause, detail in run.forfeits:
        by_cause.setdefault(cause, []).append(detail)
    for cause, details in by_cause.items():
        found.append(
            f"It {CAUSES[cause]} and forfeited {len(details)} of {run.games} games "
            f"(first time: {details[0]})."
        )
    for why, count in run.substituted.items():
        found.append(f"The referee played {count} decisions for it after: {why}.")
    slow = [t for t in run.times_ms if t > run.settings.decision_ms]
    if slow:
        found.append(
            f"{len(slow)} of {len(run.times_ms)} decisions took longer than the "
            f"{run.settings.decision_ms} ms allowed per decision and drew on the time bank "
            f"(slowest {max(slow):.0f} ms)."
        )
    if run.notices:
        found.append(
            f"The referee ignored {len(run.notices)} of its messages (first: {run.notices[0]})."
        )
    return found


def check_report(run: CheckRun) -> CheckReport:
    """The check's verdict, as `arena bot check --json` prints it."""
    found = findings(run)
    times = run.times_ms
    return CheckReport(
        spec=run.bot.spec,
        game=run.game,
        games=run.games,
        seats=[SeatPlayed(seats=n, seat=s) for n, s in sorted(run.seats)],
        decisions=len(times),
        median_ms=statistics.median(times) if times else None,
        slowest_ms=max(times) if times else None,
        decision_ms=run.settings.decision_ms,
        time_bank_ms=run.settings.time_bank_ms,
        findings=found,
        clean=not found,
        log_tail=run.log_tail if found else [],
    )


def report(check: CheckReport) -> list[str]:
    """The whole report, in lines."""
    seats = ", ".join(f"seat {s.seat} of {s.seats}" for s in check.seats)
    lines = [f"{check.spec} played {check.games} games of {check.game} against the random bot"]
    lines.append(f"  as {seats}." if seats else "  in no seat.")
    if check.median_ms is not None and check.slowest_ms is not None:
        lines.append(
            f"  {check.decisions} decisions: median {check.median_ms:.1f} ms, "
            f"slowest {check.slowest_ms:.1f} ms (allowed {check.decision_ms} ms "
            f"each, plus a {check.time_bank_ms} ms bank)."
        )
    lines += [f"  - {text}" for text in check.findings] or ["  No problems found."]
    if check.log_tail:
        lines.append("  The end of its log:")
        lines += [f"    | {line}" for line in check.log_tail]
    return lines


async def check_bot(
    bot: BotSpec,
    game: GameDefinition[GameOptions],
    games: int,
    workdir: Path,
    settings: MatchSettings | None = None,
    all_seat_counts: bool = False,
    sandbox: Sandbox | None = None,
    join_timeout_s: float = 20.0,
) -> CheckRun:
    """Play the bot against random bots: for each seat count checked, at least `games` games,
    rounded up so the bot sits in every seat equally often."""
    run = CheckRun(bot, game.name, settings or MatchSettings())
    for seats in game.seat_counts if all_seat_counts else game.seat_counts[:1]:
        randoms = [replace(RANDOM, name=f"random-{i}") for i in range(1, seats)]
        plan = SeriesPlan(
            game,
            [bot, *randoms],
            games=math.ceil(games / seats) * seats,
            # A check is practice: the same deals on every run, so two checks compare.
            secret=practice_secret(seats),
            settings=run.settings,
            replays=workdir / f"{seats}-seats",
            connect_timeout_s=join_timeout_s,
            sandbox=sandbox,
        )
        await _play(run, plan)
    return run


async def _play(run: CheckRun, plan: SeriesPlan) -> None:
    checked: list[BotSession] = []  # the checked bot's sessions, one per process

    def keep(server: RefereeServer, started: list[list[BotSession]]) -> None:
        checked.extend(started[0])

    for outcome, lineup in await run_series(plan, on_sessions=keep):
        run.add(outcome, lineup)
    run.notices += [notice for session in checked for notice in session.notices]
    files = bot_output_files(plan, 0, run.bot.name)  # its processes' and its matches'
    run.log_tail = [line for path in files for line in log_tail(path)][-2 * LOG_TAIL_LINES :]


bot_app = typer.Typer(no_args_is_help=True, help="Check a bot before it plays for real.")


@bot_app.callback()
def _bot() -> None:
    """Check a bot before it plays for real."""


@bot_app.command(epilog=describe(CheckReport))
def check(
    spec: Annotated[str, typer.Argument(help="bot SPEC: FILE.py, example:NAME or cmd:COMMAND")],
    game: Annotated[str, typer.Option(help="game name, see `arena games`")],
    games: Annotated[int, typer.Option(min=1, help="games per seat count, at least")] = 4,
    all_seat_counts: Annotated[
        bool, typer.Option(help="every seat count, not the smallest")
    ] = False,
    decision_ms: Annotated[int, typer.Option(min=1)] = 1000,
    time_bank_ms: Annotated[int, typer.Option(min=0)] = 5000,
    join_timeout_s: Annotated[float, typer.Option(min=0.1, help="how long to wait to join")] = 20.0,
    sandbox: Annotated[Tier, typer.Option(help="sandbox tier for the bot")] = Tier.NONE,
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
