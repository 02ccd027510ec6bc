"""The standings of a tournament as terminal tables, printed from its StandingsReport
(tournaments/standings.py): results and openskill ratings for every format, with an interval
at three and four seats; for two-seat games an Elo table with error bars and the likelihood of
superiority, and a crosstable; the SPRT's state."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from referee.settings import Misbehaviour
from tournaments.records import MatchRecord
from tournaments.schedule import Ledger
from tournaments.standings import Meeting, SprtState, StandingsReport

NO_SHOW = Misbehaviour.NO_SHOW.value


def print_standings(report: StandingsReport, console: Console) -> None:
    """Every table the report holds."""
    console.print(_results_table(report))
    if report.elo is not None and report.los is not None:
        console.print(_elo_table(report))
        console.print(_los_table(report.los))
    if report.crosstable is not None:
        console.print(_crosstable(report))
    if report.sprt is not None:
        console.print(_sprt_line(report.sprt))


def _results_table(report: StandingsReport) -> Table:
    title = (
        f"{report.name} ({report.game}, {report.format}): "
        f"{report.finished}/{report.scheduled} matches"
    )
    columns = ["#", "bot", "games", "W-D-L", "points", "forfeits", "mu", "sigma", "rating"]
    table = Table(*columns, *(["mu 95%"] if report.interval else []), title=title)
    for row in report.standings:
        cells = [str(row.place), row.bot, str(row.games), f"{row.wins}-{row.draws}-{row.losses}"]
        cells += [f"{row.points:g}", str(row.forfeits), f"{row.mu:.1f}", f"{row.sigma:.1f}"]
        cells.append(f"{row.rating:.1f}")
        if report.interval:
            cells.append(f"{row.mu_low:.1f} .. {row.mu_high:.1f}")
        table.add_row(*cells)
    table.caption = "rating = mu - 3 sigma (openskill, Plackett-Luce)" + (
        f"; mu 95% = {report.interval}" if report.interval else ""
    )
    return table


def _elo_table(report: StandingsReport) -> Table:
    table = Table("bot", "Elo", "± 95%", "games", "score", "LOS", title="Elo (Bradley-Terry)")
    for row in report.elo or []:
        los = f"{row.los_next:.1%}" if row.los_next is not None else ""
        table.add_row(
            row.bot,
            f"{row.elo:+.0f}",
            f"{row.error95:.0f}",
            str(row.games),
            f"{row.score:.1%}",
            los,
        )
    table.caption = "LOS: the likelihood of superiority over the bot below"
    return table


def _los_table(los: dict[str, dict[str, float]]) -> Table:
    bots = list(los)
    table = Table("", *bots, title="LOS: the likelihood the row is stronger than the column")
    for bot in bots:
        table.add_row(bot, *("-" if other == bot else f"{los[bot][other]:.1%}" for other in bots))
    return table


def _crosstable(report: StandingsReport) -> Table:
    crosstable = report.crosstable or {}
    bots = list(crosstable)  # every bot, in the tournament's order
    table = Table("", *bots, "total", title="crosstable: the row's points against the column")
    for bot in bots:
        met = crosstable[bot]
        cells = ["-" if other == bot else _meeting(met.get(other)) for other in bots]
        total = f"{sum(m.points for m in met.values()):g}/{sum(m.games for m in met.values())}"
        table.add_row(bot, *cells, total)
    return table


def _meeting(meeting: Meeting | None) -> str:
    """'6.5/10'; '' for a pair that never met."""
    return f"{meeting.points:g}/{meeting.games}" if meeting is not None else ""


def _sprt_line(state: SprtState) -> str:
    verdict = {
        "H1": f"{state.candidate} is stronger (elo >= {state.elo1:g} accepted)",
        "H0": f"{state.candidate} is not stronger (elo <= {state.elo0:g} accepted)",
        "continue": "no decision yet",
    }[state.verdict]
    low = f"{state.elo_low:+.1f}" if state.elo_low is not None else "-inf"
    high = f"{state.elo_high:+.1f}" if state.elo_high is not None else "+inf"
    return (
        f"SPRT {state.candidate} vs {state.baseline} (elo0 {state.elo0:g}, elo1 {state.elo1:g}, "
        f"alpha {state.alpha:g}, beta {state.beta:g}): {verdict}\n"
        f"  LLR {state.llr:.2f} in [{state.lower:.2f}, {state.upper:.2f}] after "
        f"{state.pairs} pairs; all {state.finished_pairs} finished pairs, pentanomial "
        f"{state.pentanomial}; elo {state.elo:+.1f} [{low}, {high}]"
    )


def never_played(ledger: Ledger, bots: list[str]) -> dict[str, str]:
    """Bot name -> the cause it was last absent for, for each bot seated in some finished match
    that was absent (never joined, or never started) from every one of them."""
    absent: dict[str, str] = {}
    for bot in bots:
        causes = [_no_show(record, bot) for record in ledger.records() if bot in record.bots]
        if causes and all(causes):
            absent[bot] = causes[-1] or ""
    return absent


def _no_show(record: MatchRecord, bot: str) -> str | None:
    seat = record.bots.index(bot)
    return next((d for s, c, d in record.forfeits if s == seat and c == NO_SHOW), None)
