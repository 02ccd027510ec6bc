"""Which matches a tournament plays, format by format.

A table (the bots that meet) becomes `games_per_pairing` matches: the seats rotate from match to
match, and with duplicate deals each deal is replayed once per rotation with the same key, so
every bot holds every seat's cards once. Every match names its deal, whose key derives from the
tournament's secret (arena_games.deals), so a re-run, a resume or a retry on another worker
plays the same match; neither the match id nor the deal's name says anything about the key. With a
book of deals (tournaments/deal_book.py) the keys come from the book instead (BookedDeals).
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tournaments import bracket_results, deal_book, knockout, pairing, ratings, sprt
from tournaments.config import (
    DoubleElimination,
    Gauntlet,
    Knockout,
    Ladder,
    RoundRobin,
    Sprt,
    Swiss,
    TournamentConfig,
)
from tournaments.records import MatchRecord


@dataclass(frozen=True)
class MatchJob:
    match_id: str
    round: int  # Swiss round; 0 in the formats without rounds
    deal: str
    bots: tuple[str, ...]  # the bot in each seat, seat 0 first
    # Each seat's SPEC, when the host does not know the bots in advance (a live ladder's come
    # and go); empty: the host's own list (HostSpec.bots) names them.
    specs: tuple[str, ...] = ()
    # Each seat's uploaded version's files' hash ('' for another bot), for the replay.
    content_hashes: tuple[str, ...] = ()


@dataclass
class Ledger:
    """What the runner knows: every match scheduled (in order) and every one finished."""

    scheduled: dict[str, MatchJob] = field(default_factory=dict)
    finished: dict[str, MatchRecord] = field(default_factory=dict)

    def records(self) -> list[MatchRecord]:
        """Finished matches in the order they were scheduled, so ratings do not depend on which
        of two concurrent matches happened to finish first."""
        return [self.finished[i] for i in self.scheduled if i in self.finished]


class Scheduler(Protocol):
    def next_jobs(self, ledger: Ledger) -> list[MatchJob] | None:
        """Matches to schedule now; [] to wait for results in flight; None when there are none
        left to schedule."""
        ...

    @property
    def total(self) -> int | None:
        """How many matches the whole tournament plays, when that is known in advance."""
        ...


def table_jobs(
    config: TournamentConfig, prefix: str, table: Sequence[str], round_: int = 0
) -> list[MatchJob]:
    fmt = config.format
    if isinstance(fmt, Knockout | DoubleElimination):
        raise ValueError("a bracket's tables play deals, not games_per_pairing: BracketSchedule")
    seats = len(table)
    jobs = []
    for game in range(fmt.games_per_pairing):
        rotation = game % seats if fmt.rotate_seats else 0
        deal = f"{prefix}-d{game // seats if fmt.duplicate_deals else game}"
        lineup = tuple(table[(rotation + seat) % seats] for seat in range(seats))
        jobs.append(MatchJob(f"{prefix}-g{game}", round_, deal, lineup))
    return jobs


class FixedSchedule:
    """Round-robin and gauntlet: every match is known from the start."""

    def __init__(self, jobs: list[MatchJob]) -> None:
        self.jobs = jobs

    @property
    def total(self) -> int | None:
        return len(self.jobs)

    def next_jobs(self, ledger: Ledger) -> list[MatchJob] | None:
        fresh = [j for j in self.jobs if j.match_id not in ledger.scheduled]
        return fresh or None


class SwissSchedule:
    """Round by round: a round is paired from the results of every round before it."""

    def __init__(self, config: TournamentConfig, fmt: Swiss, secret: bytes) -> None:
        self.config = config
        self.secret = secret
        self.fmt = fmt
        self.bots = config.bot_names()
        tables_per_round = len(self.bots) // fmt.seats
        self._total = fmt.rounds * tables_per_round * fmt.games_per_pairing

    @property
    def total(self) -> int | None:
        return self._total

    def next_jobs(self, ledger: Ledger) -> list[MatchJob] | None:
        current = max((j.round for j in ledger.scheduled.values()), default=0)
        if any(
            j.round == current and i not in ledger.finished for i, j in ledger.scheduled.items()
        ):
            return []
        if current >= self.fmt.rounds:
            return None
        round_ = current + 1
        points, met, byes = self.score_sheet(ledger)
        rng = random.Random(f"{self.secret.hex()}:swiss:{round_}")
        paired = pairing.swiss_round(points, met, self.fmt.seats, rng, byes)
        return [
            job
            for number, table in enumerate(paired.tables)
            for job in table_jobs(self.config, f"r{round_}-t{number}", table, round_)
        ]

    def score_sheet(
        self, ledger: Ledger
    ) -> tuple[dict[str, float], dict[frozenset[str], int], dict[str, int]]:
        """Points (a bye is worth half the table's games), pairs that have met, and byes."""
        points = dict.fromkeys(self.bots, 0.0)
        met: Counter[frozenset[str]] = Counter()
        byes = dict.fromkeys(self.bots, 0)
        for record in ledger.records():
            for bot in record.bots:
                points[bot] += record.points(bot)
        for seated in _seated_by_round(ledger.scheduled.values()).values():
            for bot in self.bots:
                if bot not in seated:
                    byes[bot] += 1
                    points[bot] += self.fmt.games_per_pairing / 2
        for job in ledger.scheduled.values():
            if job.match_id.endswith("-g0"):
                met.update(frozenset(p) for p in _pairs(job.bots))
        return points, dict(met), byes


def _seated_by_round(jobs: Iterable[MatchJob]) -> dict[int, set[str]]:
    seated: dict[int, set[str]] = {}
    for job in jobs:
        seated.setdefault(job.round, set()).update(job.bots)
    return seated


def _pairs(bots: Sequence[str]) -> list[tuple[str, str]]:
    return [(a, b) for i, a in enumerate(bots) for b in bots[i + 1 :]]


class LadderSchedule:
    """A continuous ladder: the least-played bot meets the bots nearest its rating, one table
    at a time, until the match limit (or for ever)."""

    def __init__(self, config: TournamentConfig, fmt: Ladder, secret: bytes) -> None:
        self.config = config
        self.secret = secret
        self.fmt = fmt
        self.bots = config.bot_names()
        # Rated as results arrive, for matchmaking only; the standings rate in schedule order.
        self.board = ratings.SkillBoard(self.bots)
        self.rated: set[str] = set()

    @property
    def total(self) -> int | None:
        return self.fmt.matches

    def next_jobs(self, ledger: Ledger) -> list[MatchJob] | None:
        if self.fmt.matches is not None and len(ledger.scheduled) >= self.fmt.matches:
            return None
        for match_id in [m for m in ledger.finished if m not in self.rated]:
            self.board.add(ledger.finished[match_id])
            self.rated.add(match_id)
        by_bot = {row.name: (row.mu, row.sigma) for row in self.board.table()}
        played = dict.fromkeys(self.bots, 0)
        for job in ledger.scheduled.values():
            for bot in job.bots:
                played[bot] += 1
        number = len({j.deal.rsplit("-d", 1)[0] for j in ledger.scheduled.values()})
        rng = random.Random(f"{self.secret.hex()}:ladder:{number}")
        table = pairing.ladder_table(by_bot, played, self.fmt.seats, rng)
        jobs = table_jobs(self.config, f"l{number}", table)
        if self.fmt.matches is not None:
            jobs = jobs[: self.fmt.matches - len(ledger.scheduled)]
        return jobs


class SprtSchedule:
    """Duplicate-deal pairs of candidate against baseline until the SPRT decides.

    The test is sequential in the order the pairs were scheduled: its verdict is the first
    bound the LLR crosses along that order. Pairs still in flight when it decides finish and
    are shown, but cannot change the verdict (fishtest's overshoot works the same way)."""

    def __init__(self, config: TournamentConfig, fmt: Sprt) -> None:
        self.config = config
        self.fmt = fmt
        self._counts = [0] * 5
        self._pairs_read = 0  # pairs 0.._pairs_read-1 are counted in _counts
        self._decided: sprt.SprtStatus | None = None

    @property
    def total(self) -> int | None:
        return None

    def status(self, ledger: Ledger) -> sprt.SprtStatus:
        """The decided verdict, or the state after the longest run of finished pairs."""
        while self._decided is None:
            first = ledger.finished.get(f"p{self._pairs_read}-g0")
            second = ledger.finished.get(f"p{self._pairs_read}-g1")
            if first is None or second is None:
                break
            counted = sprt.pentanomial([first, second], self.fmt.candidate, self.fmt.baseline)
            self._counts = [a + b for a, b in zip(self._counts, counted.counts, strict=True)]
            self._pairs_read += 1
            status = self._test(sprt.Pentanomial(*self._counts))
            if status.verdict != "continue":
                self._decided = status
        return self._decided or self._test(sprt.Pentanomial(*self._counts))

    def _test(self, counts: sprt.Pentanomial) -> sprt.SprtStatus:
        fmt = self.fmt
        return sprt.sprt(counts, fmt.elo0, fmt.elo1, fmt.alpha, fmt.beta)

    def next_jobs(self, ledger: Ledger) -> list[MatchJob] | None:
        pairs = len(ledger.scheduled) // 2
        if pairs >= self.fmt.max_pairs or self.status(ledger).verdict != "continue":
            return None
        table = (self.fmt.candidate, self.fmt.baseline)
        return table_jobs(self.config, f"p{pairs}", table)


class BracketSchedule:
    """Knockout and double elimination: each table is played once its bots are known (the
    tables it waits on decided), `deals` deals each in every seating, then a tie-break deal at
    a time while it is tied at its cut. Everything is read back from the ledger: a resumed
    runner schedules what the killed one had not, never a table twice."""

    def __init__(self, config: TournamentConfig, fmt: Knockout | DoubleElimination) -> None:
        self.bracket = knockout.plan_bracket(fmt.kind, config.bot_names(), fmt.seats, fmt.going_on)
        self.rules = bracket_results.Rules(fmt.deals, fmt.tiebreak_deals)

    @property
    def total(self) -> int | None:
        """The matches known in advance: tie-break deals and a reset come on top."""
        return knockout.unplayed_total(self.bracket, self.rules.deals)

    def states(self, ledger: Ledger) -> dict[str, bracket_results.TableState]:
        return bracket_results.resolve(self.bracket, self.rules, table_games(ledger))

    def next_jobs(self, ledger: Ledger) -> list[MatchJob] | None:
        states = self.states(ledger)
        fresh = [
            job
            for state in states.values()
            for job in _deal_jobs(state)
            if job.match_id not in ledger.scheduled
        ]
        if fresh or not all(s.decided for s in states.values()):
            return fresh
        return None


def _deal_jobs(state: bracket_results.TableState) -> list[MatchJob]:
    """The games of the deals a table wants: deal d in every seating, game d * seats + s."""
    bots = state.known
    seats = len(bots)
    table = state.plan.table_id
    return [
        MatchJob(
            f"{table}-g{deal * seats + rotation}",
            state.plan.round,
            f"{table}-d{deal}",
            tuple(bots[(rotation + seat) % seats] for seat in range(seats)),
        )
        for deal in range(state.wanted)
        for rotation in range(seats)
    ]


def table_games(ledger: Ledger) -> dict[str, bracket_results.TableGames]:
    """A bracket's games by table, from their match ids (TABLE-gN): the deal's name cannot
    say, since a book of deals renames it."""
    scheduled: dict[str, dict[int, str]] = {}
    finished: dict[str, dict[int, MatchRecord]] = {}
    for match_id in ledger.scheduled:
        table, _, game = match_id.rpartition("-g")
        scheduled.setdefault(table, {})[int(game)] = match_id
        if match_id in ledger.finished:
            finished.setdefault(table, {})[int(game)] = ledger.finished[match_id]
    return {
        table: bracket_results.TableGames(games, finished.get(table, {}))
        for table, games in scheduled.items()
    }


class BookedDeals:
    """Another scheduler's matches, their deals played from a book of deals
    (tournaments/deal_book.py): the k-th deal scheduled plays entry k mod the book's length.
    The entry goes into the deal's name, so the count survives a resume (it is read back from
    the deals already scheduled)."""

    def __init__(self, inner: Scheduler, entries: int) -> None:
        self.inner = inner
        self.entries = entries

    @property
    def total(self) -> int | None:
        return self.inner.total

    def next_jobs(self, ledger: Ledger) -> list[MatchJob] | None:
        fresh = self.inner.next_jobs(ledger)
        if not fresh:
            return fresh
        count = len({job.deal for job in ledger.scheduled.values()})
        names: dict[str, str] = {}
        for job in fresh:
            if job.deal not in names:
                names[job.deal] = deal_book.booked(job.deal, (count + len(names)) % self.entries)
        return [dataclasses.replace(job, deal=names[job.deal]) for job in fresh]


def scheduler_for(config: TournamentConfig, secret: bytes, book_entries: int = 0) -> Scheduler:
    """The format's scheduler; secret (the tournament's) seeds the pairing noise too. With a
    book of deals (its number of entries), the deals come from it."""
    inner = _format_scheduler(config, secret)
    return BookedDeals(inner, book_entries) if book_entries else inner


def _format_scheduler(config: TournamentConfig, secret: bytes) -> Scheduler:
    fmt = config.format
    bots = config.bot_names()
    if isinstance(fmt, RoundRobin):
        tables = pairing.round_robin(bots, fmt.seats)
        return FixedSchedule(_all_tables(config, tables))
    if isinstance(fmt, Gauntlet):
        field_ = [b for b in bots if b not in fmt.challengers]
        tables = pairing.gauntlet(fmt.challengers, field_, fmt.seats)
        return FixedSchedule(_all_tables(config, tables))
    if isinstance(fmt, Swiss):
        return SwissSchedule(config, fmt, secret)
    if isinstance(fmt, Ladder):
        return LadderSchedule(config, fmt, secret)
    if isinstance(fmt, Knockout | DoubleElimination):
        return BracketSchedule(config, fmt)
    return SprtSchedule(config, fmt)


def _all_tables(config: TournamentConfig, tables: Sequence[Sequence[str]]) -> list[MatchJob]:
    return [job for n, table in enumerate(tables) for job in table_jobs(config, f"t{n}", table)]
