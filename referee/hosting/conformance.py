"""A conformance run, what `arena bot check SPEC --game GAME` does (its command is
referee/commands/bot_group.py). The bot plays a few games against the random bot over gRPC, in
every seat, and the check says in plain words what it does wrong: timeouts, illegal choices,
malformed answers, crashes, never joining, slow decisions, messages the referee had to ignore."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from arena_games.base import GameDefinition, GameOptions
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings, Misbehaviour
from arena_games.replay_file import DecisionRecord
from pydantic import BaseModel, ConfigDict, Field

from referee.bots.launcher import LOG_TAIL_LINES, BotSpec, log_tail, parse_spec
from referee.bots.sandbox import Sandbox
from referee.hosting.series import SeriesPlan, bot_output_files, run_series
from referee.matches.match import MatchOutcome
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


class _Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SeatPlayed(_Verdict):
    seats: int = Field(description="the table's seat count")
    seat: int


class CheckReport(_Verdict):
    spec: str
    game: str
    games: int
    seats: list[SeatPlayed] = Field(description="every seat it played")
    decisions: int = Field(description="decisions it answered itself")
    median_ms: float | None
    slowest_ms: float | None
    decision_ms: int = Field(description="allowed per decision")
    time_bank_ms: int
    findings: list[str] = Field(description="what it did wrong, one sentence each")
    clean: bool = Field(description="no findings (the exit code is 0)")
    log_tail: list[str] = Field(description="the end of its log, when it did something wrong")


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
    """Everything the bot did wrong, one plain sentence each; empty when it played clean.
    `arena bot check` reports them all, the slow decisions too: its author wants to know."""
    return faults(run) + warnings(run)


def faults(run: CheckRun) -> list[str]:
    """What would cost it a rated match under the same time control and policies: a forfeit
    (a timeout with its bank spent, a crash, an illegal or malformed answer, never joining) or
    a decision the referee had to play for it."""
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
    return found


def warnings(run: CheckRun) -> list[str]:
    """What is legal in a rated match but worth its author's attention: decisions that drew on
    the time bank, messages the referee ignored."""
    found = []
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
