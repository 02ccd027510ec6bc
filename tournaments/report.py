"""The standings of a tournament, as terminal tables: results and openskill ratings for every
format; for two-seat games an Elo table with error bars and a crosstable; the SPRT's state."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from referee.settings import Misbehaviour
from tournaments import ratings, sprt
from tournaments.config import Sprt, TournamentConfig
from tournaments.records import MatchRecord
from tournaments.schedule import Ledger, SprtSchedule

NO_SHOW = Misbehaviour.NO_SHOW.value


def print_standings(
    config: TournamentConfig, ledger: Ledger, console: Console, brief: bool = False
) -> None:
    """Every table; brief: the results table only."""
    records = ledger.records()
    bots = config.bot_names()
    console.print(_results_table(config, ledger), highlight=False)
    if brief:
        return
    if config.format.seats == 2 and records:
        console.print(_elo_table(ledger, bots), highlight=False)
        console.print(_crosstable(ledger, bots), highlight=False)
    if isinstance(config.format, Sprt):
        console.print(_sprt_line(config, config.format, ledger), highlight=False)


def _results_table(config: TournamentConfig, ledger: Ledger) -> Table:
    records = ledger.records()
    bots = config.bot_names()
    skill = {row.name: row for row in ratings.skill_table(records, bots)}
    rows = ratings.standings(records, bots)
    rows.sort(key=lambda r: (-r.points, -skill[r.name].conservative, r.name))
    title = (
        f"{config.name} ({config.game}, {config.format.kind}): "
        f"{len(ledger.finished)}/{len(ledger.scheduled)} matches"
    )
    table = Table(
        "#", "bot", "games", "W-D-L", "points", "forfeits", "mu", "sigma", "rating", title=title
    )
    for place, row in enumerate(rows, start=1):
        s = skill[row.name]
        table.add_row(
            str(place),
            row.name,
            str(row.played),
            f"{row.wins}-{row.draws}-{row.losses}",
            f"{row.points:g}",
            str(row.forfeits),
            f"{s.mu:.1f}",
            f"{s.sigma:.1f}",
            f"{s.conservative:.1f}",
        )
    table.caption = "rating = mu - 3 sigma (openskill, Plackett-Luce)"
    return table


def _elo_table(ledger: Ledger, bots: list[str]) -> Table:
    table = Table("bot", "Elo", "± 95%", "games", "score", title="Elo (Bradley-Terry)")
    for row in ratings.elo_table(ledger.records(), bots):
        table.add_row(
            row.name, f"{row.elo:+.0f}", f"{row.error95:.0f}", str(row.games), f"{row.score:.1%}"
        )
    return table


def _crosstable(ledger: Ledger, bots: list[str]) -> Table:
    header, *body = ratings.crosstable(ledger.records(), bots).rows()
    table = Table(*header, title="crosstable: the row's points against the column")
    for row in body:
        table.add_row(*row)
    return table


def _sprt_line(config: TournamentConfig, fmt: Sprt, ledger: Ledger) -> str:
    status = SprtSchedule(config, fmt).status(ledger)
    every = sprt.pentanomial(ledger.records(), fmt.candidate, fmt.baseline)
    verdict = {
        "H1": f"{fmt.candidate} is stronger (elo >= {fmt.elo1:g} accepted)",
        "H0": f"{fmt.candidate} is not stronger (elo <= {fmt.elo0:g} accepted)",
        "continue": "no decision yet",
    }[status.verdict]
    return (
        f"SPRT {fmt.candidate} vs {fmt.baseline} (elo0 {fmt.elo0:g}, elo1 {fmt.elo1:g}, "
        f"alpha {fmt.alpha:g}, beta {fmt.beta:g}): {verdict}\n"
        f"  LLR {status.llr:.2f} in [{status.lower:.2f}, {status.upper:.2f}] after "
        f"{status.pairs} pairs; all {every.pairs} finished pairs, pentanomial "
        f"{list(every.counts)}; elo {status.elo:+.1f} "
        f"[{status.elo_low:+.1f}, {status.elo_high:+.1f}]"
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
