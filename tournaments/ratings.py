"""Standings, crosstables and ratings of finished matches: pure functions of MatchRecord lists.

Every function takes the records (in the order the matches finished) and the tournament's bot
names, and rejects a record that seats an unknown bot, seats a bot twice, or whose ranks do not
match its seats, with a message naming the match.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce, PlackettLuceRating

from tournaments.records import MatchRecord

ELO_PER_NAT = 400 / math.log(10)  # the logistic Elo scale: 400 points per factor of ten in odds
Z95 = 1.96
# One virtual draw per bot against a virtual opponent rated 0 (BayesElo's device): it keeps a bot
# with all wins or all losses, or a group that never met the rest, at a finite rating.
PRIOR_DRAWS = 1.0
MM_HANDOVER = 1e-3  # nats per sweep: MM's steps this small hand over to Newton
MM_MAX_SWEEPS = 10_000
NEWTON_TOLERANCE = 1e-12  # nats: far below any Elo digit shown
NEWTON_MAX_STEPS = 50


def check_bots(bots: Sequence[str]) -> set[str]:
    repeated = sorted({b for b in bots if bots.count(b) > 1})
    if repeated:
        raise ValueError(f"bot names must be unique; repeated: {', '.join(repeated)}")
    return set(bots)


def check_record(record: MatchRecord, known: set[str]) -> None:
    where = f"match {record.match_id!r}"
    if len(record.bots) < 2:
        raise ValueError(f"{where} has {len(record.bots)} seat(s); a match needs at least 2")
    if len(record.ranks) != len(record.bots):
        raise ValueError(f"{where} has {len(record.bots)} bots but {len(record.ranks)} ranks")
    for bot in record.bots:
        if bot not in known:
            raise ValueError(f"{where} seats {bot!r}, which is not one of the tournament's bots")
        if record.bots.count(bot) > 1:
            raise ValueError(f"{where} seats {bot!r} more than once")


def checked(records: Iterable[MatchRecord], bots: Sequence[str]) -> list[MatchRecord]:
    known = check_bots(bots)
    matches = list(records)
    for record in matches:
        check_record(record, known)
    return matches


# --- standings -------------------------------------------------------------------------------


@dataclass(frozen=True)
class StandingRow:
    name: str
    played: int
    wins: int
    draws: int
    losses: int
    points: float  # sum of MatchRecord.points: 1 a win, 1/2 a draw at two seats
    forfeits: int  # matches in which the bot's seat forfeited
    substituted: int  # decisions the referee played for it (the random misbehaviour policy)


def standings(records: Iterable[MatchRecord], bots: Sequence[str]) -> list[StandingRow]:
    """One row per bot, most points first (then most wins, then name)."""
    games = checked(records, bots)
    rows = []
    for bot in bots:
        mine = [r for r in games if bot in r.bots]
        outcomes = [r.outcome_of(bot) for r in mine]
        forfeits = [r for r in mine if any(f[0] == r.bots.index(bot) for f in r.forfeits)]
        rows.append(
            StandingRow(
                name=bot,
                played=len(mine),
                wins=outcomes.count("win"),
                draws=outcomes.count("draw"),
                losses=outcomes.count("loss"),
                points=sum(r.points(bot) for r in mine),
                forfeits=len(forfeits),
                substituted=sum(r.substituted[r.bots.index(bot)] for r in mine if r.substituted),
            )
        )
    return sorted(rows, key=lambda r: (-r.points, -r.wins, r.name))


# --- crosstable ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Crosstable:
    """Head to head: points[(a, b)] is what a scored against b over games[(a, b)] meetings.

    At a table of three or four, each pair of seats is a meeting: the one who finished ahead
    scores 1, a tie scores 1/2 each. So points[(a, b)] + points[(b, a)] == games[(a, b)].
    """

    bots: tuple[str, ...]
    points: Mapping[tuple[str, str], float]
    games: Mapping[tuple[str, str], int]

    def total(self, bot: str) -> tuple[float, int]:
        """The bot's points and meetings against everyone."""
        others = [o for o in self.bots if o != bot]
        return (
            sum(self.points.get((bot, o), 0.0) for o in others),
            sum(self.games.get((bot, o), 0) for o in others),
        )

    def cell(self, bot: str, opponent: str) -> str:
        """'6.5/10'; '-' on the diagonal; '' for a pair that never met."""
        if bot == opponent:
            return "-"
        games = self.games.get((bot, opponent), 0)
        return f"{self.points.get((bot, opponent), 0.0):g}/{games}" if games else ""

    def rows(self) -> list[list[str]]:
        """A header row, then one row per bot: its name, a cell per opponent, its total."""
        header = ["", *self.bots, "total"]
        body = []
        for bot in self.bots:
            points, games = self.total(bot)
            cells = [self.cell(bot, opponent) for opponent in self.bots]
            body.append([bot, *cells, f"{points:g}/{games}"])
        return [header, *body]


def crosstable(records: Iterable[MatchRecord], bots: Sequence[str]) -> Crosstable:
    points: dict[tuple[str, str], float] = {}
    games: dict[tuple[str, str], int] = {}
    for record in checked(records, bots):
        for i, a in enumerate(record.bots):
            for j, b in enumerate(record.bots):
                if i == j:
                    continue
                ahead = record.ranks[i] < record.ranks[j]
                tie = record.ranks[i] == record.ranks[j]
                points[a, b] = points.get((a, b), 0.0) + (1.0 if ahead else 0.5 if tie else 0.0)
                games[a, b] = games.get((a, b), 0) + 1
    return Crosstable(tuple(bots), points, games)


# --- openskill -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillRow:
    name: str
    mu: float
    sigma: float
    conservative: float  # openskill's ordinal, mu - 3 sigma: the skill it is almost surely above
    matches: int


class SkillBoard:
    """Plackett-Luce ratings (openskill's defaults: mu 25, sigma 25/3) updated one match at a
    time, each seat a team of one, ties kept as ties. A ladder that rates after every match can
    keep one board and `add` each new record instead of replaying the history."""

    def __init__(self, bots: Sequence[str]) -> None:
        self._known = check_bots(bots)
        self._model = PlackettLuce()
        self.ratings: dict[str, PlackettLuceRating] = {b: self._model.rating(name=b) for b in bots}
        self.matches = dict.fromkeys(bots, 0)

    def add(self, record: MatchRecord) -> None:
        check_record(record, self._known)
        teams = [[self.ratings[bot]] for bot in record.bots]
        rated = self._model.rate(teams, ranks=[float(r) for r in record.ranks])
        for bot, team in zip(record.bots, rated, strict=True):
            self.ratings[bot] = team[0]
            self.matches[bot] += 1

    def table(self) -> list[SkillRow]:
        rows = [
            SkillRow(bot, r.mu, r.sigma, r.ordinal(), self.matches[bot])
            for bot, r in self.ratings.items()
        ]
        return sorted(rows, key=lambda r: (-r.conservative, r.name))


def skill_table(records: Iterable[MatchRecord], bots: Sequence[str]) -> list[SkillRow]:
    """openskill ratings for 2 to 4 seats, best conservative rating first."""
    board = SkillBoard(bots)
    for record in records:
        board.add(record)
    return board.table()


# --- Elo -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EloRow:
    name: str
    elo: float  # relative to the mean of the field, which is 0
    error95: float  # half-width of the 95% interval of `elo`
    games: int
    wins: int
    draws: int
    losses: int
    score: float  # (wins + draws / 2) / games; 0 when no games


def elo_table(records: Iterable[MatchRecord], bots: Sequence[str]) -> list[EloRow]:
    """Bradley-Terry Elo of two-seat matches, best first.

    The ratings maximize the likelihood of all games (a draw is half a win each way), found by
    Zermelo's MM iteration, on the logistic scale (400 points: ten to one odds), shifted so that
    their mean is 0. Every bot also gets one virtual draw against a virtual opponent rated 0, a
    light prior as in BayesElo: without it a bot with all wins or all losses has no finite rating.
    error95 is 1.96 standard errors from the observed Fisher information (the Hessian of the log
    likelihood with that prior), taken for the ratings relative to the field's mean. The error of
    a difference between two bots is larger than either bot's error95 (see los()).
    """
    fit = elo_fit(records, bots)
    rows = [
        _elo_row(bot, fit.games, fit.elo[bot], fit.covariance[i][i]) for i, bot in enumerate(bots)
    ]
    return sorted(rows, key=lambda r: (-r.elo, r.name))


@dataclass(frozen=True)
class EloFit:
    """The Bradley-Terry fit: each bot's Elo (mean 0) and the covariance of those Elo, in nats
    squared (times ELO_PER_NAT squared it is in Elo squared), in the order of the bots given."""

    bots: tuple[str, ...]
    elo: Mapping[str, float]
    covariance: list[list[float]]
    games: list[MatchRecord]

    def los(self, bot: str, other: str) -> float:
        """Likelihood of superiority: the probability that bot is stronger than other, from the
        normal approximation of the fit (the difference over its standard error, through the
        normal CDF), as BayesElo computes it from the same covariance."""
        i, j = self.bots.index(bot), self.bots.index(other)
        variance = self.covariance[i][i] + self.covariance[j][j] - 2 * self.covariance[i][j]
        spread = math.sqrt(max(variance, 0.0)) * ELO_PER_NAT
        difference = self.elo[bot] - self.elo[other]
        if spread == 0:
            return 0.5 if difference == 0 else float(difference > 0)
        return 0.5 * (1 + math.erf(difference / spread / math.sqrt(2)))


def elo_fit(records: Iterable[MatchRecord], bots: Sequence[str]) -> EloFit:
    """The maximum-likelihood fit elo_table() reports, with its covariance (for LOS)."""
    games = checked(records, bots)
    for record in games:
        if len(record.bots) != 2:
            raise ValueError(
                f"Elo needs two-seat matches; match {record.match_id!r} has {len(record.bots)}"
            )
    index = {bot: i for i, bot in enumerate(bots)}
    scored = [[0.0] * len(bots) for _ in bots]  # scored[i][j]: i's points against j
    for record in games:
        a, b = record.bots
        scored[index[a]][index[b]] += record.points(a)
        scored[index[b]][index[a]] += record.points(b)
    elo, covariance = fit_scored(bots, scored)
    return EloFit(tuple(bots), elo, covariance, games)


def fit_scored(
    bots: Sequence[str], scored: list[list[float]]
) -> tuple[dict[str, float], list[list[float]]]:
    """The Bradley-Terry fit of a score matrix (scored[i][j]: i's points against j): each bot's
    Elo (mean 0) and their covariance in nats squared. A ladder keeps the matrix up to date
    match by match and fits it alone, without reading its history again."""
    strength = bradley_terry(scored)
    covariance = centred(inverse(information(scored, strength)))
    mean = sum(strength) / len(strength) if strength else 0.0
    elo = {bot: (strength[i] - mean) * ELO_PER_NAT for i, bot in enumerate(bots)}
    return elo, covariance


def error95(covariance: list[list[float]], i: int) -> float:
    """The 95% error, in Elo, of the i-th bot's rating relative to the field's mean."""
    return Z95 * math.sqrt(max(covariance[i][i], 0.0)) * ELO_PER_NAT


def _elo_row(bot: str, games: list[MatchRecord], elo: float, variance: float) -> EloRow:
    outcomes = [r.outcome_of(bot) for r in games if bot in r.bots]
    wins, draws = outcomes.count("win"), outcomes.count("draw")
    played = len(outcomes)
    return EloRow(
        name=bot,
        elo=elo,
        error95=error95([[variance]], 0),
        games=played,
        wins=wins,
        draws=draws,
        losses=played - wins - draws,
        score=(wins + draws / 2) / played if played else 0.0,
    )


def _logistic(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def bradley_terry(scored: list[list[float]]) -> list[float]:
    """Log-strengths (nats) maximizing the likelihood of `scored` plus the prior draws.

    Cyclic MM updates (Hunter 2004) climb towards the maximum; after each sweep the whole field
    is shifted to the level that best fits the prior draws, because MM alone creeps along that
    direction (only the few virtual games pin it down). MM also crawls when the prior is all that
    holds a rating (a strict hierarchy, all wins): once its steps are small, Newton steps with
    the exact Hessian finish the climb in a few iterations.
    """
    n = len(scored)
    met = [[scored[i][j] + scored[j][i] for j in range(n)] for i in range(n)]
    earned = [sum(row) + PRIOR_DRAWS / 2 for row in scored]
    gamma = [1.0] * n
    for _ in range(MM_MAX_SWEEPS):
        moved = 0.0
        for i in range(n):
            pace = sum(met[i][j] / (gamma[i] + gamma[j]) for j in range(n) if met[i][j])
            pace += PRIOR_DRAWS / (gamma[i] + 1)
            updated = earned[i] / pace
            moved = max(moved, abs(math.log(updated / gamma[i])))
            gamma[i] = updated
        shift = _prior_level([math.log(g) for g in gamma])
        gamma = [g * math.exp(shift) for g in gamma]
        if moved < MM_HANDOVER:
            break
    return _newton_finish(scored, [math.log(g) for g in gamma])


def log_likelihood(scored: list[list[float]], strength: list[float]) -> float:
    n = len(scored)
    fit = sum(
        scored[i][j] * math.log(_logistic(strength[i] - strength[j]))
        for i in range(n)
        for j in range(n)
        if scored[i][j]
    )
    prior = sum(math.log(_logistic(s)) + math.log(_logistic(-s)) for s in strength)
    return fit + PRIOR_DRAWS / 2 * prior


def _gradient(scored: list[list[float]], strength: list[float]) -> list[float]:
    n = len(scored)
    return [
        sum(scored[i])
        + PRIOR_DRAWS * (0.5 - _logistic(strength[i]))
        - sum(
            (scored[i][j] + scored[j][i]) * _logistic(strength[i] - strength[j])
            for j in range(n)
            if j != i
        )
        for i in range(n)
    ]


def _newton_finish(scored: list[list[float]], strength: list[float]) -> list[float]:
    """Newton's method from near the maximum, halving any step that would lower the likelihood
    (the log likelihood is strictly concave, so a short enough step always climbs)."""
    height = log_likelihood(scored, strength)
    for _ in range(NEWTON_MAX_STEPS):
        curvature = inverse(information(scored, strength))
        gradient = _gradient(scored, strength)
        step = [sum(c * g for c, g in zip(row, gradient, strict=True)) for row in curvature]
        for _halving in range(30):
            trial = [s + d for s, d in zip(strength, step, strict=True)]
            trial_height = log_likelihood(scored, trial)
            if trial_height >= height:
                break
            step = [d / 2 for d in step]
        else:
            return strength
        strength, height = trial, trial_height
        if max((abs(d) for d in step), default=0.0) < NEWTON_TOLERANCE:
            break
    return strength


def _prior_level(strength: list[float]) -> float:
    """The common shift c with sum_i (1/2 - logistic(strength_i + c)) = 0 (Newton's method:
    the left side falls steadily in c)."""
    c = 0.0
    for _ in range(50):
        slope = sum(_logistic(s + c) * _logistic(-s - c) for s in strength)
        excess = sum(0.5 - _logistic(s + c) for s in strength)
        if not slope or abs(excess) < 1e-13:
            break
        c += max(-5.0, min(5.0, excess / slope))
    return c


def information(scored: list[list[float]], strength: list[float]) -> list[list[float]]:
    """Minus the Hessian of the log likelihood (with the prior draws) at `strength`, in nats."""
    n = len(scored)
    matrix = [[0.0] * n for _ in range(n)]
    for i in range(n):
        matrix[i][i] = PRIOR_DRAWS * _logistic(strength[i]) * _logistic(-strength[i])
        for j in range(n):
            meetings = scored[i][j] + scored[j][i]
            if i != j and meetings:
                p = _logistic(strength[i] - strength[j])
                matrix[i][j] = -meetings * p * (1 - p)
                matrix[i][i] += meetings * p * (1 - p)
    return matrix


def inverse(matrix: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan elimination with partial pivoting; the matrix must be invertible (the
    prior draws make the information matrix positive definite)."""
    n = len(matrix)
    work = [[*row, *(1.0 if i == j else 0.0 for j in range(n))] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(work[r][col]))
        if work[pivot][col] == 0:
            raise ValueError("the information matrix is singular")
        work[col], work[pivot] = work[pivot], work[col]
        lead = work[col][col]
        work[col] = [x / lead for x in work[col]]
        for r in range(n):
            factor = work[r][col]
            if r != col and factor:
                work[r] = [x - factor * y for x, y in zip(work[r], work[col], strict=True)]
    return [row[n:] for row in work]


def centred(covariance: list[list[float]]) -> list[list[float]]:
    """The covariance of x - mean(x) given that of x: P C P with P = I - 11'/n."""
    n = len(covariance)
    if not n:
        return []
    row_mean = [sum(row) / n for row in covariance]
    grand = sum(row_mean) / n
    return [
        [covariance[i][j] - row_mean[i] - row_mean[j] + grand for j in range(n)] for i in range(n)
    ]
