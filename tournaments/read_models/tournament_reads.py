"""The tournament's read model: a tournament folder as its web server reads it, the one way in
for its pages, its JSON and its live updates. Every call reads the SQLite state afresh,
read-only, so it may run beside the runner that writes it; its refusals are its own exceptions
(and errors.py's), and nothing here knows about HTTP.

What it gives out: the standings (tournaments.standings, the numbers the command line prints),
the matches with their results, and the replay of a match, but only once every seating of its
deal has finished: the other seatings replay the same cards, so a replay (any viewpoint of it,
the public's too), the reason its match ended, its ranks, scores, forfeits or length would tell
them to whoever can read the page, a bot on the same machine included; the match list's
filters treat such a match as still playing. Who may see which results (the release) is
release_views.py's to say: the match list and a match take the bots whose matches may be shown.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from arena_games import get_game

from tournaments.audit_log import AuditEntry
from tournaments.config import TournamentConfig
from tournaments.contest import Entrants, Release
from tournaments.lock import Holder, describe_state, holder
from tournaments.read_models.changes import Changes
from tournaments.read_models.errors import FolderError
from tournaments.read_models.match_filters import check_query, passes
from tournaments.read_models.tournament_models import (
    Forfeit,
    MatchList,
    MatchQuery,
    MatchSummary,
    Outcome,
    Progress,
    SeatResult,
    TournamentInfo,
)
from tournaments.records import MatchRecord
from tournaments.schedule import Ledger, MatchJob
from tournaments.standings import StandingsReport, standings_report
from tournaments.store import DATABASE, Store, StoreError

HELD_PLAYING = "the match is still being played"
HELD_DEAL = "another seating of its deal is still to be played: its replay would show its cards"
HELD_UNWRITTEN = "its replay could not be written (see the tournament's log)"


class NotFound(Exception):
    """No such match, or a replay that is gone from the folder."""


class Held(Exception):
    """A match whose replay may not be shown yet, or at all."""


@dataclass(frozen=True)
class Snapshot:
    """Everything a page shows, read in one go."""

    config: TournamentConfig
    ledger: Ledger
    saved_state: str | None
    runner: Holder
    finish_times: dict[str, tuple[str, float | None]]

    def progress(self) -> Progress:
        return Progress(
            scheduled=len(self.ledger.scheduled),
            finished=len(self.ledger.finished),
            state=self.saved_state or "unknown",
            runner_alive=self.runner.alive,
        )


@dataclass(frozen=True)
class Terms:
    """Who may see the results now, and who entered the bots (a final's)."""

    release: Release
    entrants: Entrants | None


class TournamentFolder:
    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        self._cache: tuple[tuple[int, int], StandingsReport] | None = None
        self._cache_lock = threading.Lock()
        self.snapshot()  # a folder that holds no readable tournament fails here, at once

    @property
    def database(self) -> Path:
        return self.path / DATABASE

    def _store(self) -> Store:
        try:
            return Store.open(self.path, read_only=True)
        except StoreError as exc:
            raise FolderError(one_line(str(exc))) from None

    def snapshot(self) -> Snapshot:
        store = self._store()
        try:
            store.db.execute("BEGIN")  # one read transaction: every part from one state
            return Snapshot(
                store.config(),
                store.ledger(),
                store.get("state"),
                holder(self.path),
                store.finish_times(),
            )
        except StoreError as exc:
            raise FolderError(one_line(str(exc))) from None
        except sqlite3.DatabaseError as exc:
            raise FolderError(f"cannot read {store.path}: {exc}") from None
        finally:
            store.close()

    def progress(self) -> Progress:
        """Counts only: cheap enough to ask after every change of the database."""
        store = self._store()
        try:
            scheduled, finished = store.progress()
            saved = store.get("state")
        except sqlite3.DatabaseError as exc:
            raise FolderError(f"cannot read {store.path}: {exc}") from None
        finally:
            store.close()
        return Progress(
            scheduled=scheduled,
            finished=finished,
            state=saved or "unknown",
            runner_alive=holder(self.path).alive,
        )

    def terms(self) -> Terms:
        """Read afresh on every call: a release changes while the server runs."""
        store = self._store()
        try:
            return Terms(store.release(), store.entrants())
        except StoreError as exc:
            raise FolderError(one_line(str(exc))) from None
        except sqlite3.DatabaseError as exc:
            raise FolderError(f"cannot read {store.path}: {exc}") from None
        finally:
            store.close()

    def audit(self) -> list[AuditEntry]:
        """The audit log (every release, with who, when and why), oldest first: the operator's."""
        store = self._store()
        try:
            return store.audit()
        except sqlite3.DatabaseError as exc:
            raise FolderError(f"cannot read {store.path}: {exc}") from None
        finally:
            store.close()

    def changes(self) -> Changes[Progress]:
        """What the live feed asks after every interval: the progress, once it changed."""
        return Changes(self.path, self.database, self.progress)

    def info(
        self, viewpoints: list[str], release: Release, snap: Snapshot | None = None
    ) -> TournamentInfo:
        snap = snap or self.snapshot()
        config = snap.config
        return TournamentInfo(
            name=config.name,
            game=config.game,
            title=get_game(config.game).title,
            format=config.format.kind,
            seats=config.format.seats,
            bots=config.bot_names(),
            state=describe_state(snap.saved_state, snap.runner, self.path),
            runner=snap.runner.who,
            progress=snap.progress(),
            viewpoints=viewpoints,
            release=release,
        )

    def standings(self, snap: Snapshot | None = None) -> StandingsReport:
        """The report `arena tournament standings --json` prints, state line and all. Computed
        once per state of the results (the bootstrap intervals take seconds): finished matches
        never change, so the counts tell one state from another; the runner's state is read
        afresh every time."""
        snap = snap or self.snapshot()
        settled = _settled(snap.ledger)
        key = (len(settled.scheduled), len(settled.finished))
        state = describe_state(snap.saved_state, snap.runner, self.path)
        with self._cache_lock:
            if self._cache is not None and self._cache[0] == key:
                return self._cache[1].model_copy(update={"state": state})
        try:
            computed = standings_report(snap.config, settled, state)
        except ValueError as exc:  # a record that seats a bot the configuration lacks
            raise FolderError(f"{self.path} holds results it cannot rate: {exc}") from None
        with self._cache_lock:
            self._cache = (key, computed)
        return computed

    def matches(
        self, query: MatchQuery, snap: Snapshot | None = None, only: frozenset[str] | None = None
    ) -> MatchList:
        """The matches that pass the query, of the bots `only` names (None: of every bot)."""
        snap = snap or self.snapshot()
        check_query(query, snap.config.bot_names())
        chosen = [
            job
            for job in reversed(snap.ledger.scheduled.values())
            if _played_by(job, only) and passes(job, _shown(job, snap.ledger), query)
        ]
        page = chosen[query.offset : query.offset + query.limit]
        return MatchList(
            total=len(chosen),
            offset=query.offset,
            limit=query.limit,
            matches=[self._summary(job, snap) for job in page],
        )

    def match(
        self, match_id: str, snap: Snapshot | None = None, only: frozenset[str] | None = None
    ) -> MatchSummary:
        """The match, if a bot `only` names played it (None: any); NotFound, in the words of a
        match that does not exist, otherwise."""
        snap = snap or self.snapshot()
        job = snap.ledger.scheduled.get(match_id)
        if job is None or not _played_by(job, only):
            raise NotFound(f"no match {match_id!r} in {snap.config.name}")
        return self._summary(job, snap)

    def replay(self, match_id: str, snap: Snapshot | None = None) -> Path:
        """The replay file of a match whose replay may be shown; Held or NotFound says why
        not. The file is looked for in the folder's replays/, wherever the folder has moved."""
        snap = snap or self.snapshot()
        job = snap.ledger.scheduled.get(match_id)
        if job is None:
            raise NotFound(f"no match {match_id!r} in {snap.config.name}")
        record = snap.ledger.finished.get(match_id)
        why = _held(job, record, snap.ledger)
        if why is not None:
            raise Held(f"match {match_id}: {why}")
        assert record is not None and record.replay is not None
        path = self.path / "replays" / Path(record.replay).name
        if not path.is_file():
            # No path in the answer: the page is public.
            raise NotFound(f"match {match_id}: its replay is gone from the tournament's replays")
        return path

    def _summary(self, job: MatchJob, snap: Snapshot) -> MatchSummary:
        record = snap.ledger.finished.get(job.match_id)
        held = _held(job, record, snap.ledger)
        finished_at, seconds = snap.finish_times.get(job.match_id, (None, None))
        status: Literal["playing", "finished"] = "playing" if record is None else "finished"
        # What a match whose deal is in play shows: that it is over, no more.
        record = record if record is not None and _deal_done(job.deal, snap.ledger) else None
        return MatchSummary(
            match_id=job.match_id,
            round=job.round,
            deal=job.deal,
            status=status,
            seats=_seats(job, record),
            reason=record.reason if record is not None else None,
            forfeits=[
                Forfeit(seat=seat, bot=job.bots[seat], cause=cause, detail=detail)
                for seat, cause, detail in (record.forfeits if record else ())
            ],
            decisions=record.decisions if record else None,
            seconds=seconds if record else None,
            finished_at=finished_at,
            viewer=None if held else f"/matches/{job.match_id}",
            held=held,
        )


def one_line(message: str) -> str:
    """A configuration's errors come a line each, after a heading: the web answers in one."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    joined = lines[0] if lines else ""
    for line in lines[1:]:
        joined += (" " if joined.endswith(":") else "; ") + line
    return joined


def _played_by(job: MatchJob, only: frozenset[str] | None) -> bool:
    return only is None or any(bot in only for bot in job.bots)


def _seats(job: MatchJob, record: MatchRecord | None) -> list[SeatResult]:
    if record is None:
        return [
            SeatResult(seat=seat, bot=bot, rank=None, score=None, outcome=None)
            for seat, bot in enumerate(job.bots)
        ]
    return [
        SeatResult(
            seat=seat,
            bot=bot,
            rank=record.ranks[seat],
            score=record.scores[seat],
            outcome=cast(Outcome, record.outcome_of(bot)),
        )
        for seat, bot in enumerate(record.bots)
    ]


def _shown(job: MatchJob, ledger: Ledger) -> MatchRecord | None:
    """The match's record, once every seating of its deal has finished."""
    record = ledger.finished.get(job.match_id)
    return record if record is not None and _deal_done(job.deal, ledger) else None


def _settled(ledger: Ledger) -> Ledger:
    """The ledger as the public may see it: a match of a deal with a seating still to play
    counts as not finished, since standings that moved with it would tell how its deal went."""
    in_play = {job.deal for m, job in ledger.scheduled.items() if m not in ledger.finished}
    done = {
        match_id: record
        for match_id, record in ledger.finished.items()
        if ledger.scheduled[match_id].deal not in in_play
    }
    return Ledger(ledger.scheduled, done)


def _deal_done(deal: str, ledger: Ledger) -> bool:
    return all(
        match_id in ledger.finished
        for match_id, job in ledger.scheduled.items()
        if job.deal == deal
    )


def _held(job: MatchJob, record: MatchRecord | None, ledger: Ledger) -> str | None:
    if record is None:
        return HELD_PLAYING
    if not _deal_done(job.deal, ledger):
        return HELD_DEAL
    if record.replay is None:
        return HELD_UNWRITTEN
    return None
