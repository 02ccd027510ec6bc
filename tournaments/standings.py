"""The standings of a tournament as one document, computed in one place: the schema of `arena
tournament standings --json` and of the tournament web page's /api/standings, and what the
tables of both the terminal and the page are drawn from (tournaments/standings_grids.py)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from referee.matches.seat_times import TIMES_DESCRIPTION, SeatTimes
from tournaments import bracket_results, ratings, sprt
from tournaments.bracket_models import BracketView
from tournaments.bracket_report import bracket_view
from tournaments.config import DoubleElimination, Knockout, Sprt, Swiss, TournamentConfig
from tournaments.records import MatchRecord
from tournaments.schedule import BracketSchedule, Ledger, SprtSchedule, scheduler_for
from tournaments.skill_interval import SkillInterval, resamples_for, skill_intervals


class _Report(BaseModel):
    # Frozen: the web page keeps one report per state of the database and hands it to every page.
    model_config = ConfigDict(extra="forbid", frozen=True)


class Standing(_Report):
    place: int
    bot: str
    games: int
    wins: int
    draws: int
    losses: int
    points: float = Field(description="the share of the other seats it finished ahead of")
    forfeits: int
    substituted: int = Field(
        description="decisions the referee played for it after it misbehaved (random policy)"
    )
    mu: float = Field(description="openskill (Plackett-Luce) skill")
    sigma: float
    rating: float = Field(description="mu - 3 sigma")
    mu_low: float | None = Field(description="95% interval of mu, at 3-4 seats (see interval)")
    mu_high: float | None
    buchholz: float | None = Field(
        default=None,
        description="Swiss only: the sum of the points of every opponent it met, once per "
        "round they shared a table (at 3-4 seats every other bot at the table); the tie-break",
    )
    time: SeatTimes = Field(default_factory=SeatTimes, description=TIMES_DESCRIPTION)


class EloStanding(_Report):
    bot: str
    elo: float = Field(description="Bradley-Terry, the field's mean at 0")
    error95: float = Field(description="half-width of its 95% interval")
    games: int
    score: float = Field(description="(wins + draws / 2) / games")
    los_next: float | None = Field(
        description="likelihood it is stronger than the bot below it; null for the last"
    )


class Meeting(_Report):
    points: float = Field(description="the row bot's points against the column bot")
    games: int


class SprtState(_Report):
    candidate: str
    baseline: str
    elo0: float
    elo1: float
    alpha: float
    beta: float
    verdict: Literal["H1", "H0", "continue"] = Field(description="H1: the candidate is stronger")
    llr: float
    lower: float
    upper: float
    pairs: int = Field(description="pairs the verdict was reached on")
    finished_pairs: int
    pentanomial: list[int] = Field(description="finished pairs scoring 0, 1/2, 1, 3/2, 2")
    elo: float
    elo_low: float | None = Field(description="null when the pairs cannot bound it")
    elo_high: float | None


class StandingsReport(_Report):
    name: str
    game: str
    format: str
    seats: int
    finished: int = Field(description="matches finished")
    scheduled: int = Field(description="matches scheduled so far")
    planned: int | None = Field(
        default=None,
        description="matches the whole tournament plays, when the format knows it exactly "
        "(null for a bracket, whose tie-breaks add matches, and an SPRT): a Swiss "
        "schedules a round only once the one before it is over, so scheduled counts only the "
        "rounds so far",
    )
    state: str | None = Field(description="the runner's state: running, finished, stopped...")
    standings: list[Standing] = Field(
        description="by points, then openskill rating; in a bracket, by its placings"
    )
    interval: str | None = Field(description="how mu_low and mu_high were found")
    elo: list[EloStanding] | None = Field(description="two-seat games only")
    los: dict[str, dict[str, float]] | None = Field(
        description="two-seat games: los[a][b], the likelihood a is stronger than b"
    )
    crosstable: dict[str, dict[str, Meeting]] | None = Field(
        description="two-seat games: crosstable[a][b], a's points against b where they met"
    )
    sprt: SprtState | None
    bracket: BracketView | None = Field(
        default=None, description="knockout and double elimination: the bracket as it stands"
    )


def standings_report(
    config: TournamentConfig, ledger: Ledger, state: str | None = None, brief: bool = False
) -> StandingsReport:
    """Every table; brief: the results alone (no intervals, Elo, crosstable or SPRT)."""
    records = ledger.records()
    bots = config.bot_names()
    two_seats = config.format.seats == 2 and bool(records) and not brief
    intervals = None if brief or config.format.seats == 2 else skill_intervals(records, bots)
    bracket, placed = _bracket(config, ledger)
    swiss = isinstance(config.format, Swiss)
    return StandingsReport(
        name=config.name,
        game=config.game,
        format=config.format.kind,
        seats=config.format.seats,
        finished=len(ledger.finished),
        scheduled=len(ledger.scheduled),
        planned=_planned(config),
        state=state,
        standings=_standings(ledger, bots, intervals, placed, swiss),
        interval=(
            f"mu ± 1.96 times its spread over {resamples_for(len(records))} bootstrap "
            "resamples of the deals"
            if intervals
            else None
        ),
        elo=_elo(ledger, bots) if two_seats else None,
        los=_los(ledger, bots) if two_seats else None,
        crosstable=_crosstable(ledger, bots) if two_seats else None,
        sprt=(
            _sprt(config, config.format, ledger)
            if isinstance(config.format, Sprt) and not brief
            else None
        ),
        bracket=bracket,
    )


def _planned(config: TournamentConfig) -> int | None:
    """The format's own total when it is exact: a bracket's grows with its tie-break deals."""
    if isinstance(config.format, Knockout | DoubleElimination):
        return None
    return scheduler_for(config, b"").total  # no secret needed: only the pairing noise uses it


def _times(records: list[MatchRecord], bot: str) -> SeatTimes:
    """The bot's decisions' times over its matches that kept them."""
    kept = [r for r in records if bot in r.bots and r.times]
    return SeatTimes.combined([r.times[r.bots.index(bot)] for r in kept])


def _bracket(
    config: TournamentConfig, ledger: Ledger
) -> tuple[BracketView | None, list[list[str]] | None]:
    """The bracket and its placings, for the formats that have one."""
    if not isinstance(config.format, Knockout | DoubleElimination):
        return None, None
    schedule = BracketSchedule(config, config.format)
    states = schedule.states(ledger)
    found = bracket_results.placings(schedule.bracket, states)
    return bracket_view(schedule.bracket, states, found), found.groups


def _standings(
    ledger: Ledger,
    bots: list[str],
    intervals: list[SkillInterval] | None,
    placed: list[list[str]] | None = None,
    swiss: bool = False,
) -> list[Standing]:
    """The rows by points and rating (in a Swiss, by points, Buchholz, then rating); in a
    bracket, by its placings (a shared place shared)."""
    records = ledger.records()
    skill = {row.name: row for row in ratings.skill_table(records, bots)}
    around = {i.name: i for i in intervals or []}
    rows = ratings.standings(records, bots)
    tie_break = buchholz(ledger, {r.name: r.points for r in rows}) if swiss else {}
    rows.sort(
        key=lambda r: (-r.points, -tie_break.get(r.name, 0.0), -skill[r.name].conservative, r.name)
    )
    places = list(range(1, len(rows) + 1))
    if placed is not None:
        group_of = {bot: n for n, group in enumerate(placed) for bot in group}
        rows.sort(key=lambda r: group_of.get(r.name, len(placed)))
        first = {n: sum(len(g) for g in placed[:n]) + 1 for n in range(len(placed) + 1)}
        places = [first[group_of.get(r.name, len(placed))] for r in rows]
    return [
        Standing(
            place=place,
            bot=row.name,
            games=row.played,
            wins=row.wins,
            draws=row.draws,
            losses=row.losses,
            points=row.points,
            forfeits=row.forfeits,
            substituted=row.substituted,
            mu=skill[row.name].mu,
            sigma=skill[row.name].sigma,
            rating=skill[row.name].conservative,
            mu_low=around[row.name].low if row.name in around else None,
            mu_high=around[row.name].high if row.name in around else None,
            buchholz=tie_break.get(row.name) if swiss else None,
            time=_times(records, row.name),
        )
        for place, row in zip(places, rows, strict=True)
    ]


def buchholz(ledger: Ledger, points: dict[str, float]) -> dict[str, float]:
    """Each bot's opponents' points, summed: every other bot at each table it played a finished
    match at (a table is a round's pairing, however many games it plays), so an opponent met
    in two rounds counts twice. A bye meets nobody and adds nothing."""
    tables: dict[str, tuple[str, ...]] = {}
    for match_id in ledger.finished:
        table = match_id.rsplit("-g", 1)[0]  # r2-t0-g1: game 1 of round 2's table 0
        tables.setdefault(table, ledger.finished[match_id].bots)
    summed = dict.fromkeys(points, 0.0)
    for seated in tables.values():
        for bot in set(seated) & summed.keys():
            summed[bot] += sum(points.get(other, 0.0) for other in set(seated) - {bot})
    return summed


def _elo(ledger: Ledger, bots: list[str]) -> list[EloStanding]:
    fit = ratings.elo_fit(ledger.records(), bots)
    rows = ratings.elo_table(ledger.records(), bots)
    below = [*(row.name for row in rows[1:]), None]
    return [
        EloStanding(
            bot=row.name,
            elo=row.elo,
            error95=row.error95,
            games=row.games,
            score=row.score,
            los_next=fit.los(row.name, next_one) if next_one is not None else None,
        )
        for row, next_one in zip(rows, below, strict=True)
    ]


def _los(ledger: Ledger, bots: list[str]) -> dict[str, dict[str, float]]:
    fit = ratings.elo_fit(ledger.records(), bots)
    order = [row.name for row in ratings.elo_table(ledger.records(), bots)]
    return {a: {b: fit.los(a, b) for b in order if b != a} for a in order}


def _crosstable(ledger: Ledger, bots: list[str]) -> dict[str, dict[str, Meeting]]:
    table = ratings.crosstable(ledger.records(), bots)
    return {
        a: {
            b: Meeting(points=table.points.get((a, b), 0.0), games=table.games[a, b])
            for b in bots
            if table.games.get((a, b))
        }
        for a in bots
    }


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
        elo_low=status.elo_low if math.isfinite(status.elo_low) else None,
        elo_high=status.elo_high if math.isfinite(status.elo_high) else None,
    )
