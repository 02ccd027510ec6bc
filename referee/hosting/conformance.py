"""A conformance run, what `arena bot check SPEC --game GAME` does (its command is
referee/commands/bot_group.py). The bot plays a few games against the random bot over gRPC, in
every seat, and the check says in plain words what it does wrong: timeouts, illegal choices,
malformed answers, crashes, never joining, slow decisions, messages the referee had to ignore."""

from __future__ import annotations

import asyncio
import math
import shutil
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from arena_games.base import GameDefinition, GameOptions
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings, Misbehaviour
from arena_games.replay_file import DecisionRecord
from pydantic import BaseModel, ConfigDict, Field

from referee.bots.launcher import LOG_TAIL_LINES, BotSpec, log_tail, parse_spec
from referee.bots.sandbox import Sandbox, private_socket
from referee.hosting.cut_relay import CutRelay
from referee.hosting.series import SeriesPlan, bot_output_files, listen_on, run_series
from referee.matches.match import MatchOutcome
from referee.wire.server import RefereeServer
from referee.wire.sessions import BotSession

RANDOM = parse_spec("example:random")

DROP_AT = 3
"""With --drop: the checked bot's connection is cut when it has been asked this many decisions
(in its first game: every game asks a seat more than this)."""
DROP_GRACE_S = 10.0  # how long it may take to come back, by default

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


class DropVerdict(_Verdict):
    cut_at_decision: int = Field(description="its decision at which the connection was cut")
    game: int = Field(description="the game (from 1) it was playing when cut")
    grace_s: float = Field(description="how long it had to join again with its token")
    came_back: bool = Field(description="it joined again within the grace")
    back_after_s: float | None = Field(description="seconds from the cut to its new stream")
    finished: bool = Field(description="it finished that game with no forfeit")


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
    drop: DropVerdict | None = Field(description="with --drop: how it took the cut connection")


@dataclass
class DropSeen:
    """What a cut connection showed: when it was cut, and whether the bot came back."""

    grace_s: float
    match_id: str | None = None  # the match being played at the cut; None: never cut
    game: int | None = None  # its number in the series (from 0)
    back_after_s: float | None = None
    finished: bool = False


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
    drop: DropSeen | None = None

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
    drop = run.drop
    if drop is not None and drop.match_id is None:
        found.append(f"Its connection was never cut: it was asked fewer than {DROP_AT} decisions.")
    elif drop is not None and drop.back_after_s is None:
        found.append(
            f"It did not come back within the {drop.grace_s:g} s grace after its connection was "
            f"cut at its decision {DROP_AT} (a rejoin with its token would have resumed the game)."
        )
    elif drop is not None and not drop.finished:
        found.append("It came back after its connection was cut but did not finish the game.")
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
        drop=_drop_verdict(run.drop),
    )


def _drop_verdict(drop: DropSeen | None) -> DropVerdict | None:
    if drop is None or drop.game is None:
        return None
    return DropVerdict(
        cut_at_decision=DROP_AT,
        game=drop.game + 1,
        grace_s=drop.grace_s,
        came_back=drop.back_after_s is not None,
        back_after_s=drop.back_after_s,
        finished=drop.finished,
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
    if check.drop is not None:
        drop = check.drop
        back = (
            f"it came back after {drop.back_after_s:.1f} s"
            if drop.back_after_s is not None
            else f"it did not come back within {drop.grace_s:g} s"
        )
        lines.append(
            f"  Its connection was cut at its decision {drop.cut_at_decision} of game "
            f"{drop.game}: {back}, and {'finished' if drop.finished else 'did not finish'} "
            "the game."
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
    drop_grace_s: float | None = None,
) -> CheckRun:
    """Play the bot against random bots: for each seat count checked, at least `games` games,
    rounded up so the bot sits in every seat equally often. With drop_grace_s, its connection
    is cut in its first game, and it may join again with its token within that long."""
    run = CheckRun(bot, game.name, settings or MatchSettings())
    if drop_grace_s is not None:
        run.drop = DropSeen(drop_grace_s)
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
        if run.drop is not None and run.drop.match_id is None:
            await _play_cut(run, plan, run.drop)
        else:
            await _play(run, plan)
    return run


async def _play(
    run: CheckRun,
    plan: SeriesPlan,
    server: RefereeServer | None = None,
    on_checked: Callable[[list[BotSession]], None] | None = None,
) -> list[tuple[MatchOutcome, list[int]]]:
    checked: list[BotSession] = []  # the checked bot's sessions, one per process

    def keep(_: RefereeServer, started: list[list[BotSession]]) -> None:
        checked.extend(started[0])
        if on_checked is not None:
            on_checked(started[0])

    played = await run_series(plan, server=server, on_sessions=keep)
    for outcome, lineup in played:
        run.add(outcome, lineup)
    run.notices += [notice for session in checked for notice in session.notices]
    files = bot_output_files(plan, 0, run.bot.name)  # its processes' and its matches'
    run.log_tail = [line for path in files for line in log_tail(path)][-2 * LOG_TAIL_LINES :]
    return played


async def _play_cut(run: CheckRun, plan: SeriesPlan, drop: DropSeen) -> None:
    """The series with the checked bot's first process behind a CutRelay, which cuts its
    connection at its decision DROP_AT; its session may be joined again within the grace."""
    unix_socket, relay_socket = private_socket(plan.sandbox), private_socket(plan.sandbox)
    server = await listen_on("127.0.0.1:0", f"unix:{unix_socket}" if unix_socket else None)
    relay = CutRelay(server.unix_address or server.address)
    watch: list[asyncio.Task[None]] = []

    def cut_first(sessions: list[BotSession]) -> None:
        # The first game is played on the first process's session (series.py's rotations).
        sessions[0].rejoin_grace_s = drop.grace_s
        watch.append(asyncio.ensure_future(_cut_and_watch(sessions[0], relay, drop)))

    try:
        # Only the process of the first game goes through the relay: a cut of another could
        # land before it has read its Welcome, when the SDK does not know it may rejoin.
        plan.relayed = {(0, 0): await relay.start(relay_socket)}
        played = await _play(run, plan, server, cut_first)
    finally:
        for task in watch:
            task.cancel()
        await relay.stop()
        await server.stop()
        for path in (unix_socket, relay_socket):
            if path is not None:
                shutil.rmtree(path.parent, ignore_errors=True)
    for number, (outcome, lineup) in enumerate(played):
        if drop.match_id is not None and outcome.match_id == drop.match_id:
            drop.game = number
            drop.finished = not [f for f in outcome.forfeits if f.seat == lineup.index(0)]


async def _cut_and_watch(session: BotSession, relay: CutRelay, drop: DropSeen) -> None:
    while session.asked < DROP_AT:
        await asyncio.sleep(0.01)
    drop.match_id = session.current_match
    relay.cut()
    cut_at = time.monotonic()
    while session.rejoins == 0:
        await asyncio.sleep(0.01)
    drop.back_after_s = time.monotonic() - cut_at
