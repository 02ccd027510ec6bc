"""A tournament's standings as data: the one computation behind `arena tournament standings`,
the tournament web page and its JSON. Results and openskill ratings for every format; for
two-seat games the Elo table and the crosstable; the SPRT's state for the sprt format.

These models are the schema of the standings wherever they are shown: report.py turns them into
the tables both the terminal and the page print, the web layer serves them as JSON.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from tournaments import ratings, sprt
from tournaments.config import Sprt, TournamentConfig
from tournaments.schedule import Ledger, SprtSchedule


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ResultRow(_Frozen):
    place: int = Field(description="1 is first: most points, then the best openskill rating")
    bot: str
    games: int
    wins: int
    draws: int
    losses: int
    points: float = Field(description="the share of the other seats finished ahead of")
    forfeits: int = Field(description="matches in which the bot's seat forfeited")
    mu: float = Field(description="openskill (Plackett-Luce) mean")
    sigma: float = Field(description="openskill uncertainty")
    rating: float = Field(description="the conservative rating, mu - 3 sigma")


class EloRow(_Frozen):
    bot: str
    elo: float = Field(description="Bradley-Terry Elo, the field's mean at 0")
    error95: float = Field(description="half-width of the 95% interval")
    games: int
    wins: int
    draws: int
    losses: int
    score: float = Field(description="(wins + draws / 2) / games")


class Meeting(_Frozen):
    opponent: str
    points: float = Field(description="the row's points against the opponent")
    games: int = Field(description="meetings: each pair of seats at a table is one")


class CrosstableRow(_Frozen):
    bot: str
    meetings: list[Meeting] = Field(description="the opponents the bot met, in the bots' order")
    points: float
    games: int


class SprtState(_Frozen):
    candidate: str
    baseline: str
    elo0: float
    elo1: float
    alpha: float
    beta: float
    verdict: Literal["H1", "H0", "continue"]
    llr: float = Field(description="log likelihood ratio along the scheduled order of the pairs")
    lower: float
    upper: float
    pairs: int = Field(description="pairs the verdict counts")
    finished_pairs: int = Field(description="every finished pair, those after a verdict too")
    pentanomial: list[int] = Field(description="pairs scoring 0, 1/2, 1, 3/2 and 2 points")
    elo: float = Field(description="from the pairs' mean score; null in JSON when infinite")
    elo_low: float = Field(description="95% interval; null in JSON when it is unbounded")
    elo_high: float

    @field_serializer("elo", "elo_low", "elo_high", when_used="json")
    def _finite(self, value: float) -> float | None:
        """JSON has no infinity (all pairs lost, or too few to bound the interval): null."""
        return value if math.isfinite(value) else None


class Standings(_Frozen):
    name: str
    game: str
    format: str
    seats: int
    finished: int = Field(description="matches finished")
    scheduled: int = Field(description="matches scheduled so far")
    results: list[ResultRow]
    elo: list[EloRow] | None = Field(description="two-seat games with a finished match")
    crosstable: list[CrosstableRow] | None = Field(description="as the Elo table")
    sprt: SprtState | None = Field(description="the sprt format only")


def standings(config: TournamentConfig, ledger: Ledger) -> Standings:
    records = ledger.records()
    bots = config.bot_names()
    two_seats = config.format.seats == 2 and bool(records)
    return Standings(
        name=config.name,
        game=config.game,
        format=config.format.kind,
        seats=config.format.seats,
        finished=len(ledger.finished),
        scheduled=len(ledger.scheduled),
        results=_results(ledger, bots),
        elo=_elo(ledger, bots) if two_seats else None,
        crosstable=_crosstable(ledger, bots) if two_seats else None,
        sprt=_sprt(config, config.format, ledger) if isinstance(config.format, Sprt) else None,
    )


def _results(ledger: Ledger, bots: list[str]) -> list[ResultRow]:
    records = ledger.records()
    skill = {row.name: row for row in ratings.skill_table(records, bots)}
    rows = ratings.standings(records, bots)
    rows.sort(key=lambda r: (-r.points, -skill[r.name].conservative, r.name))
    return [
        ResultRow(
            place=place,
            bot=row.name,
            games=row.played,
            wins=row.wins,
            draws=row.draws,
            losses=row.losses,
            points=row.points,
            forfeits=row.forfeits,
            mu=skill[row.name].mu,
            sigma=skill[row.name].sigma,
            rating=skill[row.name].conservative,
        )
        for place, row in enumerate(rows, start=1)
    ]


def _elo(ledger: Ledger, bots: list[str]) -> list[EloRow]:
    return [
        EloRow(
            bot=row.name,
            elo=row.elo,
            error95=row.error95,
            games=row.games,
            wins=row.wins,
            draws=row.draws,
            losses=row.losses,
            score=row.score,
        )
        for row in ratings.elo_table(ledger.records(), bots)
    ]


def _crosstable(ledger: Ledger, bots: list[str]) -> list[CrosstableRow]:
    table = ratings.crosstable(ledger.records(), bots)
    rows = []
    for bot in bots:
        points, games = table.total(bot)
        meetings = [
            Meeting(opponent=other, points=table.points[bot, other], games=table.games[bot, other])
            for other in bots
            if other != bot and table.games.get((bot, other))
        ]
        rows.append(CrosstableRow(bot=bot, meetings=meetings, points=points, games=games))
    return rows


def as_crosstable(rows: list[CrosstableRow]) -> ratings.Crosstable:
    """The rows back as ratings.Crosstable, whose cells are the text both views print."""
    bots = tuple(row.bot for row in rows)
    points = {(row.bot, m.opponent): m.points for row in rows for m in row.meetings}
    games = {(row.bot, m.opponent): m.games for row in rows for m in row.meetings}
    return ratings.Crosstable(bots, points, games)


def _sprt(config: TournamentConfig, fmt: Sprt, ledger: Ledger) -> SprtState:
    status = SprtSchedule(config, fmt).status(ledger)
    every = sprt.pentanomial(ledger.records(), fmt.candidate, fmt.baseline)
    return SprtState(
        candidate=fmt.candidate,
        baseline=fmt.baseline,
        elo0=fmt.elo0,
        elo1=fmt.elo1,
        alpha=fmt.alpha,
        beta=fmt.beta,
        verdict=status.verdict,
        llr=status.llr,
        lower=status.lower,
        upper=status.upper,
        pairs=status.pairs,
        finished_pairs=every.pairs,
        pentanomial=list(every.counts),
        elo=status.elo,
        elo_low=status.elo_low,
        elo_high=status.elo_high,
    )
