"""`arena ladder serve`: the loop that runs a live ladder until it is stopped.

Every tick (TICK_S) it reads the roster from the database (bots added, updated, paused or
retired by other processes meanwhile), keeps a session for each remote bot, drops the
processes of versions that no longer play, and keeps `concurrency` matches in flight: the
queued ones first, then a new table from the matchmaker. Each result is committed with its
rating update the moment it arrives, and a bot that keeps forfeiting is paused.

Whatever fills the disk (a bot's log, a bot at tier none, another program), serve goes on: under
`run.disk_reserve_mb` of free space it starts no match and lets those in flight finish; a
result whose commit fails anyway (`database or disk is full`) is kept in memory and committed
again at each tick, in the order the results came, and nothing starts until it is. It goes on
by itself when space returns.

Matchmaking seats no two bots of one author or team at a table (matchmaker.py); when the bots
that may play belong to fewer parties than a table has seats, serve forms no table and says so
in the ladder's state (`waiting`) until that changes.

Authors' uploaded versions are built and validated beside it, in a thread of its own
(vetting.py): matches go on meanwhile, and a version that goes live is in the roster at the
next tick like one `update` made.

At start, the matches a previous serve left unfinished (stopped, crashed, killed) are
discarded and played again under a new id with the same deal and seats, unless a remote bot
sits at them (it may have seen part of that deal) or one of their versions no longer plays.
"""

from __future__ import annotations

import concurrent.futures
import functools
import random
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import structlog

from referee.bots.sandbox import unconfined_warning
from referee.hosting.venue import MatchHost
from tournaments.disk_room import DiskRoom, disk_room
from tournaments.executors import Executor
from tournaments.ladder import challenges, freeze, roster
from tournaments.ladder.bot_health import failing
from tournaments.ladder.challenge_turns import ChallengeTurns
from tournaments.ladder.config_file import LadderConfig
from tournaments.ladder.database import HOUSE, WAITING_META, LadderStore, LadderStoreError
from tournaments.ladder.matchmaker import Entrant, next_table, parties, rate, table_jobs
from tournaments.ladder.remote import Remotes, sync_remotes
from tournaments.ladder.uploads import VERSIONS_FOLDER, content_hashes
from tournaments.ladder.vetting import Vetting, bots_sandbox, takes_uploads
from tournaments.ladder.webhooks import Courier
from tournaments.match_jobs import JobHost, JobHostSpec, Played
from tournaments.schedule import MatchJob
from tournaments.submissions.intake import sweep_incoming
from tournaments.unsaved import STORE_FAULTS, Unsaved

log = structlog.get_logger("tournaments.ladder")
TICK_S = 0.5
REFRESH_TIMEOUT_S = 5.0  # an HTTP roster change waits this long at most for serve to take it
# A write that did not reach the disk (full, or its folder gone): serve tries it again later.


def host_spec(config: LadderConfig, folder: Path, deal_secret: bytes) -> JobHostSpec:
    return JobHostSpec(
        game=config.game,
        options=config.options,
        bots={},  # each job brings its seats' SPECs: the roster changes while serve runs
        settings=config.settings(),
        replays=str(folder / "replays"),
        logs=str(folder / "logs"),
        connect_timeout_s=config.run.connect_timeout_s,
        sandbox=bots_sandbox(config.sandbox, folder),
        rejoin_grace_s=config.run.rejoin_grace_s,
        output_caps=config.bot_output.caps(),
        deal_secret=deal_secret,
    )


@dataclass
class Lineup:
    """What the roster allows now: active versions, and the remote ones connected and free."""

    active: dict[str, roster.BotRow] = field(default_factory=dict)  # version key -> bot
    present: set[str] = field(default_factory=set)


class LadderService:
    def __init__(
        self, config: LadderConfig, store: LadderStore, host: JobHost, executor: Executor
    ) -> None:
        self.config = config
        self.store = store
        self.host = host  # hosts the remote bots' matches, and every match when local
        self.executor = executor  # where the other matches go
        self.secret = store.deal_secret()
        self.queue: deque[tuple[int, MatchJob]] = deque()
        self.in_flight: dict[concurrent.futures.Future[Played], MatchJob] = {}
        self.lineup = Lineup()
        self.connected: set[str] = set()
        self.local_keys: set[str] = set()  # versions whose processes the local host may hold
        self.played_now = 0
        self.folder = store.path.parent
        self.room = DiskRoom(float("inf"), config.run.disk_reserve_mb)  # as last seen
        self.unsaved = Unsaved(self._commit, self._recorded)  # results the disk refused
        self.undiscarded: set[str] = set()  # matches failed by the host, their discard unsaved
        self.fault: str | None = None  # the last write of the roster or schedule that failed
        self.waiting: str | None = None  # why no table can be formed now (as last written)
        self.wake = threading.Event()  # a tick now rather than at the next TICK_S
        self.ticked = threading.Condition()
        self.ticks_begun = self.ticks_done = 0
        self.turns = ChallengeTurns(config.challenges.share, config.run.concurrency)
        # Before the web server takes an upload: what a killed serve left half unpacked.
        swept = sweep_incoming(self.folder / VERSIONS_FOLDER)
        if swept:
            log.info("uploads_swept", left=swept)

    def refresh(self, timeout_s: float = REFRESH_TIMEOUT_S) -> None:
        """Tick now and wait until a tick that began after this call has ended: once a roster
        change made over HTTP is answered, serve acts on it (a remote bot registered can
        connect with its secret at once)."""
        with self.ticked:
            wanted = self.ticks_begun + 1
            self.wake.set()
            self.ticked.wait_for(lambda: self.ticks_done >= wanted, timeout_s)

    def run(self, stop: threading.Event) -> None:
        vetting = Vetting(self.config, self.folder)
        vetting.start()
        courier = Courier(self.config.webhooks, self.folder)  # webhooks.py: its own thread
        courier.start()
        try:
            self._run(stop)
        finally:
            courier.stop()
            vetting.stop()

    def _run(self, stop: threading.Event) -> None:
        self._guarded("roster", self._disconnect_all)
        self._guarded("roster", functools.partial(self._note_waiting, None, force=True))
        while not stop.is_set():  # on a full disk: until it takes the new schedule
            self._guarded("schedule", self._again)
            if self.fault is None:
                break
            stop.wait(TICK_S)
        log.info("ladder_started", again=[job.match_id for _, job in self.queue])
        if not takes_uploads(self.config.sandbox):
            log.warning("uploads_not_seated", tier=self.config.sandbox.tier.value)
        unconfined = unconfined_warning(self.config.sandbox)
        if unconfined is not None:
            log.warning("sandbox_unconfined", why=unconfined)
            print(f"warning: {unconfined}", file=sys.stderr, flush=True)
        while not stop.is_set():
            self._tick()
            if self._may_start():
                self._guarded("schedule", self._fill)
            if not self.in_flight:
                self.wake.wait(TICK_S)
                self.wake.clear()
                continue
            done, _ = concurrent.futures.wait(
                self.in_flight, timeout=TICK_S, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in done:
                self._collect(future, self.in_flight.pop(future))
        self._save_unsaved()
        if self.unsaved:  # the disk stayed full: the results go to the log (or stderr) at least
            lost = [played.log_fields() for played in self.unsaved.waiting]
            log.error("results_lost", results=lost)
        log.info("ladder_stopped", abandoned=[job.match_id for job in self.in_flight.values()])
        self._guarded("roster", self._disconnect_all)

    def _guarded(self, what: str, write: Callable[[], None]) -> None:
        """A write of the roster or the schedule that may fail on a full disk: it is done
        again at a later tick (what it would have written is read again from the database)."""
        try:
            write()
        except STORE_FAULTS as exc:
            if self.fault is None:
                log.warning("ladder_not_saved", what=what, error=str(exc))
            self.fault = str(exc)
            return
        if self.fault is not None and what == "schedule":
            log.info("ladder_saved_again")
            self.fault = None

    # --- the roster ------------------------------------------------------------------------

    def _disconnect_all(self) -> None:
        """No remote bot is connected to a serve that has just started, whatever the last one
        left in the database (it may have been killed), nor to one that has stopped."""
        self.connected = set()
        roster.set_connected(self.store, set())

    def _tick(self) -> None:
        with self.ticked:
            self.ticks_begun += 1
        try:
            self._guarded("roster", self._sync_roster)
            # A freeze set for later takes effect here, with no restart.
            self._guarded("freeze", self._pin_if_due)
            self._guarded("schedule", self._take_scheduled)
            self._guarded("challenges", self._stop_challenges)
        finally:
            with self.ticked:
                self.ticks_done += 1
                self.ticked.notify_all()

    def _take_scheduled(self) -> None:
        """Queue the matches another process scheduled (`arena ladder discard --replay`):
        those serve neither queued, nor plays, nor holds a result of waiting for the disk."""
        known = {job.match_id for _, job in self.queue}
        known |= {job.match_id for job in self.in_flight.values()}
        known |= {played.record.match_id for played in self.unsaved.waiting} | self.undiscarded
        for table_no, job in self.store.unfinished():
            if job.match_id not in known:
                self.queue.append((table_no, job))
                log.info("match_taken_in", match_id=job.match_id)

    def _stop_challenges(self) -> None:
        for number in challenges.stop_due(self.store, self.config):
            log.info("challenge_stopped", challenge=number)

    def _pin_if_due(self) -> None:
        if freeze.pin_if_due(self.store, self.config):
            log.info("ladder_frozen", pinned=[p.version for p in freeze.pins(self.store)])

    def _sync_roster(self) -> None:
        bots = roster.bots(self.store)
        active = {b.current.key: b for b in bots if b.status == "active" and self._may_run(b)}
        wanted = roster.remote_tokens(self.store)
        grace = self.config.run.rejoin_grace_s

        async def remotes(host: MatchHost) -> Remotes:
            found = await sync_remotes(host, wanted, grace)
            host.server.lobby.opening = False  # every remote bot's session is registered now
            return found

        found = self.host.call(remotes)
        self.lineup = Lineup(active, found.free)
        # Connected only while its stream is open, at a table or not.
        names = {active[key].name for key in found.streaming if key in active}
        if names != self.connected:
            roster.set_connected(self.store, names)
            self.connected = names
        self._drop_gone(set(active))
        self._discard_unplayable()

    def _drop_gone(self, active: set[str]) -> None:
        """Stop the processes of versions that no longer play (paused, retired, updated), in
        this process and where the executor plays."""
        for key in self.local_keys - active:
            self.host.drop_bot(key)
            if self.executor is not self.host:  # on the Dask workers or referee processes too
                self.executor.drop_bot(key)
            log.info("bot_processes_stopped", version=key)
        self.local_keys &= active

    def _discard_unplayable(self) -> None:
        """Queued matches of a version that no longer plays, or of a remote bot that is gone
        (neither connected nor at a table): a new table will seat it when it is back."""
        reachable = self.lineup.present | self._remotes(self.in_flight.values())

        def playable(job: MatchJob) -> bool:
            remote = self._remotes([job])
            return all(k in self.lineup.active for k in job.bots) and remote <= reachable

        gone = [job for _, job in self.queue if not playable(job)]
        if gone:
            self.store.discard((job.match_id for job in gone), rate)
            ids = {job.match_id for job in gone}
            self.queue = deque((t, j) for t, j in self.queue if j.match_id not in ids)
            log.info("matches_discarded", matches=sorted(ids), why="a bot no longer plays")

    # --- scheduling ------------------------------------------------------------------------

    def _may_start(self) -> bool:
        """Whether a match may start now: every result saved first, and room on the disk."""
        self._save_unsaved()
        room = disk_room(self.folder, self.config.run.disk_reserve_mb)
        if room.low != self.room.low:
            figures = {"free_mb": round(room.free_mb, 1), "reserve_mb": room.reserve_mb}
            if room.low:
                log.warning("disk_low", in_flight=len(self.in_flight), **figures)
            else:
                log.info("disk_room_again", **figures)
        self.room = room
        return not (room.low or self.unsaved or self.undiscarded)

    def _again(self) -> None:
        """Discard what a previous serve left unfinished; queue again what may be replayed."""
        self.queue.clear()  # what an attempt the disk refused queued is scheduled again
        left = self.store.unfinished()
        playing = {
            b.current.key
            for b in roster.bots(self.store)
            if b.status == "active" and self._may_run(b)
        }
        # Scheduled before the old ones are discarded: a deal replayed never looks finished
        # (the web page would open its other seatings' replays).
        for table_no, job in left:
            if roster.REMOTE_SPEC in job.specs or not set(job.bots) <= playing:
                continue
            base = job.match_id.split("~")[0]
            again = MatchJob(
                f"{base}~{self.store.attempts(base)}", 0, job.deal, job.bots, job.specs
            )
            self.store.schedule(table_no, [again])
            self.queue.append((table_no, again))
        self.store.discard((job.match_id for _, job in left), rate)
        challenges.replay_left(self.store)

    def _may_run(self, bot: roster.BotRow) -> bool:
        """An uploaded version runs at bubblewrap or docker only: at a lower tier (the TOML
        lowered after it went live) it is not seated."""
        return not bot.current.uploaded or takes_uploads(self.config.sandbox)

    @staticmethod
    def _remotes(jobs: Iterable[MatchJob]) -> set[str]:
        """The remote versions seated in the jobs."""
        return {
            key
            for job in jobs
            for key, spec in zip(job.bots, job.specs, strict=True)
            if spec == roster.REMOTE_SPEC
        }

    def _fill(self) -> None:
        while len(self.in_flight) < self.config.run.concurrency:
            job = self._challenge_job() or self._next_job()
            if job is None:
                if not self._new_table():
                    return
                job = self._next_job()
                if job is None:
                    return
            self._submit(job)

    def _challenge_job(self) -> MatchJob | None:
        """A challenge match, when one is queued and challenges may take one more slot now
        (challenge_turns.py); its versions all play still."""
        running = [job.match_id for job in self.in_flight.values()]
        if not self.turns.may_start(sum(map(challenges.is_challenge, running))):
            return None
        job = challenges.next_job(self.store, set(running))
        return job if job is not None and set(job.bots) <= set(self.lineup.active) else None

    def _next_job(self) -> MatchJob | None:
        """The first queued match whose remote bots are connected and at no other table."""
        busy = self._remotes(self.in_flight.values())
        for index, (_, job) in enumerate(self.queue):
            remote = self._remotes([job])
            if remote <= self.lineup.present and not remote & busy:
                del self.queue[index]
                return job
        return None

    def _new_table(self) -> bool:
        finished = {v.key: v for v in roster.versions(self.store)}
        seated = self.store.scheduled_counts()
        last = self.store.last_tables()
        busy = self._remotes([*self.in_flight.values(), *(job for _, job in self.queue)])
        entrants = [
            Entrant(key, v.spec, v.mu, v.sigma, seated.get(key, 0), last.get(key, -1), bot.party)
            for key, bot in self._allowed().items()
            if (v := finished[key]) and (not bot.remote or key in self.lineup.present - busy)
        ]
        table_no = self.store.next_table_no()
        rng = random.Random(f"{self.secret.hex()}:ladder:{table_no}")
        provisional = self.config.matchmaking.provisional_matches
        seats = self.config.table.seats
        table = next_table(entrants, seats, provisional, rng)
        if table is None:
            if len(entrants) >= seats:  # enough bots, too few parties among them
                self._note_waiting(
                    f"no table: {len(entrants)} bots can play, but only {parties(entrants)} "
                    f"authors or teams among them, and a table of {seats} seats none twice"
                )
            return False
        self._note_waiting(None)
        jobs = table_jobs(
            table_no, table, self.config.table.deals, self.config.table.duplicate_deals
        )
        self.store.schedule(table_no, jobs)
        self.queue.extend((table_no, job) for job in jobs)
        log.info("table_scheduled", table=table_no, versions=[e.key for e in table])
        return True

    def _allowed(self) -> dict[str, roster.BotRow]:
        """The active versions, but no party's beyond bots_per_author (when the TOML lowered
        it while more were active): the first added of each party play (of two added in one
        second, the first by name)."""
        most = self.config.authors.bots_per_author
        allowed: dict[str, roster.BotRow] = {}
        count: dict[str, int] = {}
        for key, bot in sorted(
            self.lineup.active.items(), key=lambda kb: (kb[1].added_at, kb[1].name)
        ):
            if bot.author != HOUSE:
                count[bot.party] = count.get(bot.party, 0) + 1
                if count[bot.party] > most:
                    continue
            allowed[key] = bot
        return allowed

    def _note_waiting(self, why: str | None, force: bool = False) -> None:
        """Say in the database (the ladder's state reads it) why no table is formed, once."""
        if why == self.waiting and not force:
            return
        with self.store.write():
            self.store.set_meta(WAITING_META, why or "")
        if why is not None:
            log.warning("matchmaking_waiting", why=why)
        self.waiting = why

    def _submit(self, job: MatchJob) -> None:
        # Its replay records each uploaded version's files (versions are immutable: read now).
        job = replace(job, content_hashes=content_hashes(self.store, job.bots))
        # A remote bot is connected to this process's referee: its matches are played here.
        remote = roster.REMOTE_SPEC in job.specs
        future = self.host.submit(job) if remote else self.executor.submit(job)
        self.local_keys.update(
            k for k, s in zip(job.bots, job.specs, strict=True) if s != roster.REMOTE_SPEC
        )
        self.in_flight[future] = job
        self.turns.started(challenges.is_challenge(job.match_id))

    # --- results ---------------------------------------------------------------------------

    def _collect(self, future: concurrent.futures.Future[Played], job: MatchJob) -> None:
        try:
            played = future.result()
        except Exception as exc:  # a fault of the host, not of a bot: the match does not count
            log.error("match_failed", match_id=job.match_id, error=repr(exc))
            if challenges.is_challenge(job.match_id):
                self._guarded(
                    "challenges", functools.partial(challenges.drop, self.store, job.match_id)
                )
                return
            self.undiscarded.add(job.match_id)
            self._save_unsaved()
            return
        # Behind any result still unsaved: the ratings change in the order the results came.
        self.unsaved.take(played)

    def _commit(self, played: Played) -> None:
        """Commit a result with its rating update; one of STORE_FAULTS when the disk refuses it."""
        record = played.record
        if challenges.is_challenge(record.match_id):  # unrated: into challenge_matches alone
            challenges.finish(self.store, record, played.worker, played.seconds)
            return
        try:
            self.store.finish(record, played.worker, played.seconds, rate)
        except LadderStoreError:
            # A commit that reported failing but reached the disk: it counts once, not twice.
            found = self.store.match_state(record.match_id)
            if found is None or found[0] != "finished":
                raise

    def _save_unsaved(self) -> None:
        """Commit again what could not be committed, oldest first, until one fails."""
        if self.undiscarded:
            try:
                self.store.discard(sorted(self.undiscarded), rate)
                self.undiscarded.clear()
            except STORE_FAULTS:
                pass
        saved = self.unsaved.retry()
        if saved:
            log.info("results_saved", saved=saved, unsaved=len(self.unsaved.waiting))

    def _recorded(self, played: Played) -> None:
        self.played_now += 1
        log.info("match_finished", **played.log_fields())
        if challenges.is_challenge(played.record.match_id):
            return  # a challenge's forfeits never pause a bot: its health is the rated matches'
        for key in played.record.bots:
            self._guarded("health", functools.partial(self._check_health, key))

    def _check_health(self, key: str) -> None:
        bot = self.lineup.active.get(key)
        if bot is None:
            return
        health = self.config.health
        # Only since the bot was last resumed (or updated): a resumed bot starts with a clean slate.
        with self.store.snapshot():
            in_play = self.store.deals_in_play()
            # A deal in play has at most `seats` seatings finished: reach past them.
            held = self.config.table.seats * len(in_play)
            finished = self.store.finished(version=key, limit=health.window + held)
        recent = [f.record for f in finished if f.finished_at >= bot.changed_at]
        reason = failing(recent, key, health.window, health.max_failures, in_play)
        if reason is not None:
            roster.set_status(self.store, bot.name, "paused", reason, who="serve")
            del self.lineup.active[key]
            log.warning("bot_paused", bot=bot.name, version=key, reason=reason)
