"""The tournament runner: asks the format for matches, keeps `concurrency` of them in flight on
the executor, and commits each result to the store the moment it arrives.

Matches scheduled but not finished when a runner dies are played again, first, by the next
`resume`, with the same deal keys; finished ones are never played twice.

A full disk (a bot's log, a bot at tier none, another program) stops it losing nothing: under
`run.disk_reserve_mb` of free space it starts no match and waits; a write the disk refuses
anyway (`database or disk is full`) is kept in memory and done again until it succeeds.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from referee.bots.sandbox import unconfined_warning
from tournaments.config import TournamentConfig
from tournaments.disk_room import DiskRoom, disk_room
from tournaments.executors import Executor, executor_for
from tournaments.match_jobs import JobHostSpec, Played
from tournaments.run_progress import NoProgress, RunProgress
from tournaments.schedule import Ledger, MatchJob, Scheduler, scheduler_for
from tournaments.store import Store, StoreError
from tournaments.unsaved import STORE_FAULTS, Unsaved

log = structlog.get_logger("tournaments.runner")

ExecutorFactory = Callable[[JobHostSpec, TournamentConfig], Executor]
WAIT_S = 0.5  # how often a runner waiting for disk space looks again
# A write that did not reach the disk (full, or its folder gone): done again later.


@dataclass
class RunSummary:
    ledger: Ledger
    state: str  # finished, incomplete (some matches failed: resume retries them)
    failed: list[str]
    played_now: int
    # Bot name -> why it was last absent from a match (its log's path and end), this run.
    absent: dict[str, str] = field(default_factory=dict)


def host_spec(
    config: TournamentConfig,
    folder: Path,
    deal_secret: bytes,
    spectator_token: str | None = None,
    deal_book: tuple[str, ...] = (),
) -> JobHostSpec:
    return JobHostSpec(
        game=config.game,
        options=config.options,
        bots=dict(zip(config.bot_names(), config.bot_specs(), strict=True)),
        settings=config.settings(),
        replays=str(folder / "replays"),
        logs=str(folder / "logs"),
        restart_bots=config.run.restart_bots,
        connect_timeout_s=config.run.connect_timeout_s,
        rejoin_grace_s=config.run.rejoin_grace_s,
        output_caps=config.bot_output.caps(),
        # The replays and the database hold other seatings' cards of a duplicate deal.
        sandbox=config.sandbox.hiding(folder / "replays", folder),
        deal_secret=deal_secret,
        deal_book=deal_book,
        spectator_token=spectator_token,
    )


def default_executor(spec: JobHostSpec, config: TournamentConfig) -> Executor:
    return executor_for(spec, config.run)


class Runner:
    def __init__(
        self,
        folder: Path,
        store: Store,
        executor: Executor,
        progress: RunProgress | None = None,
    ) -> None:
        self.folder = folder
        self.store = store
        self.config = store.config()
        self.executor = executor
        self.progress: RunProgress = NoProgress() if progress is None else progress
        self.ledger = store.ledger()
        self.scheduler: Scheduler = scheduler_for(
            self.config, store.deal_secret(), len(store.deal_book())
        )
        # Scheduled before a previous runner stopped, not finished: these go first.
        self.queue = deque(
            job for mid, job in self.ledger.scheduled.items() if mid not in self.ledger.finished
        )
        self.in_flight: dict[concurrent.futures.Future[Played], MatchJob] = {}
        self.exhausted = False
        self.failed: list[str] = []
        self.played_now = 0
        self.absent: dict[str, str] = {}
        self.room = DiskRoom(float("inf"), self.config.run.disk_reserve_mb)  # as last seen
        self.unsaved = Unsaved(self._commit, self._recorded)  # results the disk refused
        self.unscheduled: list[MatchJob] | None = None  # drawn, their schedule not committed

    def run(self) -> RunSummary:
        self.store.set_state("running")
        log.info(
            "tournament_started",
            name=self.config.name,
            finished=len(self.ledger.finished),
            again=[job.match_id for job in self.queue],
        )
        self.progress.start(self.scheduler.total, len(self.ledger.finished))
        unconfined = unconfined_warning(self.config.sandbox)
        if unconfined is not None:
            log.warning("sandbox_unconfined", why=unconfined)
            self.progress.note(unconfined)
        while True:
            ready = self._may_start() and self._fill()
            if not self.in_flight:
                if ready or self._all_done():
                    break
                time.sleep(WAIT_S)  # for disk space, or for the disk to take a write
                continue
            done, _ = concurrent.futures.wait(
                self.in_flight, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in done:
                self._collect(future, self.in_flight.pop(future))
        state = "finished" if self.exhausted and not self.failed else "incomplete"
        self._until_saved("state", lambda: self.store.set_state(state))
        log.info("tournament_stopped", state=state, failed=self.failed)
        return RunSummary(self.ledger, state, self.failed, self.played_now, self.absent)

    def _all_done(self) -> bool:
        """Every match the format has played and saved: no need to wait for disk space."""
        return self.exhausted and not (self.queue or self.unsaved or self.unscheduled)

    def _may_start(self) -> bool:
        """Whether a match may start now: every result saved first, and room on the disk."""
        self.unsaved.retry()
        room = disk_room(self.folder, self.config.run.disk_reserve_mb)
        if room.low != self.room.low:
            figures = {"free_mb": round(room.free_mb, 1), "reserve_mb": room.reserve_mb}
            if room.low:
                log.warning("disk_low", in_flight=len(self.in_flight), **figures)
                self.progress.note(room.why_waiting() or "")
            else:
                log.info("disk_room_again", **figures)
                self.progress.note("disk space again: matches start again")
        self.room = room
        return not (room.low or self.unsaved)

    def _until_saved(self, what: str, write: Callable[[], None]) -> None:
        """A write the runner cannot go on without: tried again until the disk takes it."""
        while True:
            try:
                write()
                return
            except STORE_FAULTS as exc:
                log.warning("not_saved", what=what, error=str(exc))
                time.sleep(WAIT_S)

    def _fill(self) -> bool:
        """Start matches up to `concurrency`; False when the disk refused their schedule."""
        while len(self.in_flight) < self.config.run.concurrency:
            if not self.queue and not self.exhausted:
                try:
                    self._schedule_more()
                except STORE_FAULTS as exc:
                    log.warning("schedule_not_saved", error=str(exc))
                    return False
            if not self.queue:
                return True
            job = self.queue.popleft()
            self.in_flight[self.executor.submit(job)] = job
        return True

    def _schedule_more(self) -> None:
        # Drawn once: a schedule the disk refused is committed again, not drawn anew.
        if self.unscheduled is None:
            fresh = self.scheduler.next_jobs(self.ledger)
            if fresh is None:
                self.exhausted = True
                return
            self.unscheduled = fresh
        self.store.schedule(self.unscheduled)
        fresh, self.unscheduled = self.unscheduled, None
        self.ledger.scheduled.update((job.match_id, job) for job in fresh)
        self.queue.extend(fresh)

    def _collect(self, future: concurrent.futures.Future[Played], job: MatchJob) -> None:
        try:
            played = future.result()
        except Exception as exc:  # a fault of the host, not of a bot: the match is retried later
            self.failed.append(job.match_id)
            log.error("match_failed", match_id=job.match_id, error=repr(exc))
            self.progress.note(f"match {job.match_id} failed: {exc!r}")
            return
        self.unsaved.take(played)

    def _commit(self, played: Played) -> None:
        """Commit a result; one of STORE_FAULTS when the disk refuses it."""
        record = played.record
        try:
            self.store.finish(record, played.worker, played.seconds)
        except StoreError:
            # A commit that reported failing but reached the disk: it counts once, not twice.
            if record.match_id not in self.store.finish_times():
                raise

    def _recorded(self, played: Played) -> None:
        record = played.record
        self.absent.update(played.absent)
        self.ledger.finished[record.match_id] = record
        self.played_now += 1
        log.info("match_finished", **played.log_fields())
        self.progress.advance()


def run_tournament(
    folder: Path,
    store: Store,
    progress: RunProgress | None = None,
    make_executor: ExecutorFactory = default_executor,
) -> RunSummary:
    """Run (or resume) the tournament held in store until its format has no match left,
    reporting to progress (to nobody when None)."""
    progress = NoProgress() if progress is None else progress
    config = store.config()
    spec = host_spec(
        config, folder, store.deal_secret(), store.get("spectator_token"), store.deal_book()
    )
    executor = make_executor(spec, config)
    try:
        return Runner(folder, store, executor, progress).run()
    finally:
        executor.close()
        progress.stop()
