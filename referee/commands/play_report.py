"""What `arena play` reports of a series: each match as it ends, and every bot's totals, as
the models of referee/commands/reports.py; and the text it prints of them."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from referee.commands.reports import BotTotals, MatchReport, PlayReport, SeatOutcome
from referee.hosting.series import SeriesPlan, bot_logs
from referee.matches.match import MatchOutcome
from referee.matches.seat_times import SeatTimes
from referee.printable import visible


def match_report(
    plan: SeriesPlan, index: int, outcome: MatchOutcome, lineup: list[int]
) -> MatchReport:
    """Match number index of the plan; lineup[seat] is the bot in that seat."""
    result = outcome.result
    forfeits = {f.seat: f.cause.value for f in outcome.forfeits}
    substituted = outcome.substituted()
    times = outcome.seat_times()
    seats = [
        SeatOutcome(
            seat=seat,
            bot=plan.bots[bot].name,
            rank=result.ranks[seat],
            score=result.scores[seat],
            forfeit=forfeits.get(seat),
            substituted=substituted[seat],
            time=times[seat],
        )
        for seat, bot in enumerate(lineup)
    ]
    replay = str(outcome.replay_path) if outcome.replay_path else None
    number, reason = index + 1, result.reason
    return MatchReport(
        number=number, match_id=outcome.match_id, reason=reason, seats=seats, replay=replay
    )


def play_report(plan: SeriesPlan, matches: list[MatchReport]) -> PlayReport:
    return PlayReport(
        game=plan.game.name,
        complete=len(matches) == plan.games,
        planned=plan.games,
        matches=matches,
        bots=[_totals(plan, number, matches) for number in range(len(plan.bots))],
        replays=str(plan.replays),
    )


def _totals(plan: SeriesPlan, number: int, matches: list[MatchReport]) -> BotTotals:
    spec = plan.bots[number]
    mine = [seat for match in matches for seat in match.seats if seat.bot == spec.name]
    outcomes = [_outcome(match, spec.name) for match in matches if _seat(match, spec.name)]
    wins, draws = outcomes.count("win"), outcomes.count("draw")
    return BotTotals(
        bot=spec.name,
        spec=spec.spec,
        played=len(mine),
        wins=wins,
        draws=draws,
        losses=len(mine) - wins - draws,
        score=sum(seat.score for seat in mine),
        forfeits=sum(seat.forfeit is not None for seat in mine),
        substituted=sum(seat.substituted for seat in mine),
        time=SeatTimes.combined([seat.time for seat in mine]),
        logs=[str(path) for path in bot_logs(plan, number, spec.name)],
    )


def _seat(match: MatchReport, bot: str) -> SeatOutcome | None:
    return next((seat for seat in match.seats if seat.bot == bot), None)


def _outcome(match: MatchReport, bot: str) -> str:
    """'draw' when every seat shares first place, else 'win' for a first place, else 'loss'."""
    seat = _seat(match, bot)
    assert seat is not None
    if len({s.rank for s in match.seats}) == 1:
        return "draw"
    return "win" if seat.rank == 0 else "loss"


def match_line(match: MatchReport) -> str:
    """One line per match, whatever its length: for grep and for tests. A star marks the one
    winner; the decisions the referee played for a seat are counted after the reason; the line
    ends with its replay file's name (in the replay folder printed below the table)."""
    sole = [s.rank for s in match.seats].count(0) == 1
    seats = ", ".join(f"{'*' if sole and s.rank == 0 else ''}{s.bot}" for s in match.seats)
    saved = "  (its replay was not saved: see the warning)"
    if match.replay is not None:
        saved = f"  replay {Path(match.replay).name}"
    played_for = [_decisions(s.substituted, s.bot) for s in match.seats if s.substituted]
    note = f"  (the referee played {', '.join(played_for)})" if played_for else ""
    return f"match {match.number:3d}  [{seats}]  {match.reason}{note}{saved}"


def _decisions(count: int, bot: str) -> str:
    return f"{count} decision{'' if count == 1 else 's'} for {bot}"


def time_line(time: SeatTimes) -> str:
    """A bot's decisions' times in words: mean and longest, wall clock, and CPU if counted."""
    line = f"{time.wall_mean_ms:.1f} ms a decision, at most {time.wall_max_ms:.1f} ms (wall)"
    if time.cpu_mean_ms is not None and time.cpu_max_ms is not None:
        line += f"; {time.cpu_mean_ms:.1f} ms, at most {time.cpu_max_ms:.1f} ms (CPU)"
    return line


def print_report(report: PlayReport, console: Console) -> None:
    """The standings table, what the referee played for whom, where the replays and logs are.
    Names and paths are printed with visible(): a bot's name comes from its file's or its
    command's name."""
    if report.matches:
        console.print("(seats in order; * marks the winner)")
    columns = ("bot", "played", "wins", "draws", "losses", "score", "forfeits", "substituted")
    table = Table(*columns)
    for bot in report.bots:
        numbers = (bot.played, bot.wins, bot.draws, bot.losses)
        table.add_row(
            visible(bot.bot),
            *map(str, numbers),
            f"{bot.score:g}",
            str(bot.forfeits),
            str(bot.substituted),
        )
    console.print(table)
    for bot in report.bots:
        if bot.time.decisions:
            console.print(visible(f"time of {bot.bot}: {time_line(bot.time)}"))
    for bot in report.bots:
        if bot.substituted:
            console.print(
                visible(
                    f"the referee played {_decisions(bot.substituted, bot.bot)} "
                    "(--on-misbehaviour random): see its log and `arena replay show --as referee`"
                )
            )
    console.print(visible(f"replays: {report.replays}"))
    for bot in report.bots:
        console.print(visible(f"log of {bot.bot}: {', '.join(bot.logs)}"))
    if any(bot.logs for bot in report.bots):
        console.print(
            visible(f"each match's output of each bot: {report.replays}/logs/MATCH/SEAT-BOT.log")
        )
