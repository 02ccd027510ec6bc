"""The standings of a tournament as grids of text, drawn from its StandingsReport
(tournaments/standings.py) cell for cell the same in the terminal
(tournaments/cli/standings_print.py) and on the tournament web page: results and
openskill ratings for every format, with an interval at three and four seats; for two-seat
games an Elo table with error bars and the likelihood of superiority, the LOS table, and a
crosstable; the SPRT's state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from arena_games.match_settings import Misbehaviour

from tournaments.records import MatchRecord
from tournaments.schedule import Ledger
from tournaments.standings import Meeting, SprtState, StandingsReport

NO_SHOW = Misbehaviour.NO_SHOW.value

GridName = Literal["results", "elo", "los", "crosstable"]


@dataclass(frozen=True)
class Grid:
    """One table of the standings as text, cell for cell as the terminal and the web page show
    it: both print these, so they cannot differ."""

    name: GridName
    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    caption: str = ""


def grids(report: StandingsReport) -> list[Grid]:
    """The results table, then the Elo and LOS tables and the crosstable where they apply."""
    out = [results_grid(report)]
    if report.elo is not None and report.los is not None:
        out += [elo_grid(report), los_grid(report.los)]
    if report.crosstable is not None:
        out.append(crosstable_grid(report.crosstable))
    return out


def results_grid(report: StandingsReport) -> Grid:
    title = f"{report.name} ({report.game}, {report.format}): {match_count(report)}"
    swiss = any(row.buchholz is not None for row in report.standings)
    timed = any(row.time.decisions for row in report.standings)  # none: a store before times
    header = ["#", "bot", "games", "W-D-L", "points", *(["Buchholz"] if swiss else [])]
    header += ["forfeits", "substituted", "mu", "sigma", "rating"]
    rows = []
    for row in report.standings:
        cells = [str(row.place), row.bot, str(row.games), f"{row.wins}-{row.draws}-{row.losses}"]
        cells += [f"{row.points:g}", *([f"{row.buchholz:g}"] if row.buchholz is not None else [])]
        cells += [str(row.forfeits), str(row.substituted)]
        cells += [f"{row.mu:.1f}", f"{row.sigma:.1f}"]
        cells.append(f"{row.rating:.1f}")
        if report.interval:
            cells.append(f"{row.mu_low:.1f} .. {row.mu_high:.1f}")
        if timed:
            cells.append(row.time.brief())
        rows.append(cells)
    caption = "rating = mu - 3 sigma (openskill, Plackett-Luce)" + (
        f"; mu 95% = {report.interval}" if report.interval else ""
    )
    if swiss:
        caption += "; Buchholz = the points of every opponent met, the tie-break of equal points"
    if timed:
        caption += "; time = mean/longest per decision"
    header += ["mu 95%"] if report.interval else []
    return Grid("results", title, header + (["time"] if timed else []), rows, caption)


def match_count(report: StandingsReport) -> str:
    """Finished of all the tournament plays; a Swiss schedules round by round, so the matches
    scheduled so far are named apart, not taken for the whole (14/24 beside a progress of 36)."""
    if report.planned is None or report.planned <= report.scheduled:
        return f"{report.finished}/{report.scheduled} matches"
    return f"{report.finished}/{report.planned} matches ({report.scheduled} scheduled so far)"


def elo_grid(report: StandingsReport) -> Grid:
    rows = [
        [
            row.bot,
            f"{row.elo:+.0f}",
            f"{row.error95:.0f}",
            str(row.games),
            f"{row.score:.1%}",
            f"{row.los_next:.1%}" if row.los_next is not None else "",
        ]
        for row in report.elo or []
    ]
    header = ["bot", "Elo", "± 95%", "games", "score", "LOS"]
    caption = "LOS: the likelihood of superiority over the bot below"
    return Grid("elo", "Elo (Bradley-Terry)", header, rows, caption)


def los_grid(los: dict[str, dict[str, float]]) -> Grid:
    bots = list(los)  # in the Elo table's order
    rows = [
        [bot, *("-" if other == bot else f"{los[bot][other]:.1%}" for other in bots)]
        for bot in bots
    ]
    title = "LOS: the likelihood the row is stronger than the column"
    return Grid("los", title, ["", *bots], rows)


def crosstable_grid(crosstable: dict[str, dict[str, Meeting]]) -> Grid:
    bots = list(crosstable)  # every bot, in the tournament's order
    rows = []
    for bot in bots:
        met = crosstable[bot]
        cells = ["-" if other == bot else _meeting(met.get(other)) for other in bots]
        total = f"{sum(m.points for m in met.values()):g}/{sum(m.games for m in met.values())}"
        rows.append([bot, *cells, total])
    title = "crosstable: the row's points against the column"
    return Grid("crosstable", title, ["", *bots, "total"], rows)


def _meeting(meeting: Meeting | None) -> str:
    """'6.5/10'; '' for a pair that never met."""
    return f"{meeting.points:g}/{meeting.games}" if meeting is not None else ""


def _sprt_verdict(state: SprtState) -> str:
    return {
        "H1": f"{state.candidate} is stronger (elo >= {state.elo1:g} accepted)",
        "H0": f"{state.candidate} is not stronger (elo <= {state.elo0:g} accepted)",
        "continue": "no decision yet",
    }[state.verdict]


def sprt_text(state: SprtState) -> str:
    low = f"{state.elo_low:+.1f}" if state.elo_low is not None else "-inf"
    high = f"{state.elo_high:+.1f}" if state.elo_high is not None else "+inf"
    return (
        f"SPRT {state.candidate} vs {state.baseline} (elo0 {state.elo0:g}, elo1 {state.elo1:g}, "
        f"alpha {state.alpha:g}, beta {state.beta:g}): {_sprt_verdict(state)}\n"
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
