"""Hosting a tournament's matches: one referee server, and a pool of bot processes per bot.

A bot process is started once and plays match after match over its one session, so short games
are not dominated by process start-up; a bot plays one match at a time, so the pool grows to as
many processes of a bot as there are matches at once that seat it. No process ever plays two
seatings of one deal: a process that has played a deal is not given that deal again, so with
duplicate deals a pool holds at least one process per seating (a bot at a 2-seat table runs 2),
and at most concurrency + seats - 1.
A process that crashed, hung up or never joined is retired and the bot's next match starts a
fresh one. With `restart_bots` every match gets fresh processes.
A process's output goes to the file of the match it plays (logs/MATCH_ID/SEAT-BOT.log), and
between matches to its own (logs/BOT-K.log), within the caps of HostSpec.output_caps: per file,
and per bot for the host's life, shared by the bot's processes (referee/bots/bot_output.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import hashlib
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

import structlog
from arena_games import get_game
from arena_games.match_settings import MatchSettings, Misbehaviour

from referee.bots.bot_output import BotOutput, OutputBudget, OutputCaps, match_file
from referee.bots.launcher import BotSpec, SpecError, output_of, parse_spec, start_bot, stop_bot
from referee.bots.sandbox import (
    SOCKET_FOLDER_PREFIX,
    Sandbox,
    bot_address,
    describe_exit,
    private_socket,
)
from referee.matches.match import Match, MatchOutcome
from referee.series.series_host import save_replay, wait_joined
from referee.wire.server import RefereeServer, start_server
from referee.wire.sessions import BotSession, SessionSeat
from tournaments.deal_book import deal_key
from tournaments.records import MatchRecord
from tournaments.schedule import MatchJob

log = structlog.get_logger("tournaments.host")
T = TypeVar("T")
ProcessWatch = Callable[[int, bool], None]  # a bot process's pid, and whether it is alive
Tls = tuple[Path, Path]  # the server's certificate and its private key (PEM files)


@dataclass(frozen=True)
class HostSpec:
    """Everything a host needs, in a form that travels to a Dask worker."""

    game: str
    options: dict[str, object]
    bots: dict[str, str]  # bot name -> SPEC
    settings: MatchSettings
    replays: str | None
    logs: str | None
    restart_bots: bool = False
    connect_timeout_s: float = 20.0
    sandbox: Sandbox | None = None
    rejoin_grace_s: float = 0.0
    output_caps: OutputCaps = field(default_factory=OutputCaps)  # of each bot's output, kept
    # The tournament's secret: every deal's key derives from it (arena_games.deals). Kept out of
    # repr, so that logging a spec never shows it.
    deal_secret: bytes = field(default=b"", repr=False)
    # The book of deals, when the tournament has one (tournaments/deal_book.py): hex keys.
    deal_book: tuple[str, ...] = field(default=(), repr=False)
    # Spectators of this tournament's matches need it (a bot never gets it); None: nobody.
    spectator_token: str | None = field(default=None, repr=False)

    def key(self) -> str:
        """Equal only for equal specs: a worker shares a host between tournaments only when
        everything (options, clocks, sandbox, secret too) is the same."""
        book = "\n".join(self.deal_book).encode()
        return repr(self) + hashlib.sha256(self.deal_secret + book).hexdigest()


@dataclass(frozen=True)
class Played:
    record: MatchRecord
    worker: str
    seconds: float
    # Bot name -> why it was absent from this match, for the referee's console (paths and all).
    absent: dict[str, str] = field(default_factory=dict)

    def log_fields(self) -> dict[str, object]:
        """What a runner logs of a finished match."""
        record = self.record
        return {
            "match_id": record.match_id,
            "bots": record.bots,
            "ranks": record.ranks,
            "reason": record.reason,
            "forfeits": record.forfeits,
            "replay": record.replay,
            "worker": self.worker,
            "seconds": round(self.seconds, 3),
        }


@dataclass(eq=False)
class LiveBot:
    """One bot process and its session with the referee."""

    session: BotSession
    process: asyncio.subprocess.Process | None
    no_show: str | None = None  # why it is absent, as the seats are told: no paths
    why: str | None = None  # the same for the referee's console: where its log is, how it ends
    deals: set[str] = field(default_factory=set)  # every deal it has been seated for

    @property
    def output(self) -> BotOutput | None:
        return output_of(self.process) if self.process is not None else None

    @property
    def alive(self) -> bool:
        return (
            self.no_show is None
            and self.process is not None
            and self.process.returncode is None
            and self.session.failure is None
        )


class Pool(Protocol):
    """Where a bot's seats come from: processes this host starts (BotPool), or a remote bot's
    one session (tournaments.ladder.remote)."""

    async def checkout(self, deal: str) -> LiveBot: ...

    async def checkin(self, live: LiveBot, retire: bool) -> None: ...

    async def drain(self) -> None:
        """Stop the idle processes now and each busy one when its match ends."""
        ...

    async def close(self) -> None: ...


@dataclass(eq=False)
class BotPool:
    bot: BotSpec
    server: RefereeServer
    logs: Path | None
    connect_timeout_s: float
    sandbox: Sandbox | None = None
    address: str = ""  # where the bot reaches the referee: a unix: one from inside a sandbox
    rejoin_grace_s: float = 0.0
    idle: list[LiveBot] = field(default_factory=list)
    everyone: set[LiveBot] = field(default_factory=set)  # idle or at a table
    started: int = 0
    watching: set[asyncio.Task[None]] = field(default_factory=set)  # one per live process
    draining: bool = False  # no more matches: each process stops when its match ends
    # Told each process's pid when it starts (True) and when it has ended (False): a referee
    # process of the cores executor tells its parent, which ends them if it dies first.
    on_process: ProcessWatch | None = None
    budget: OutputBudget = field(default_factory=OutputBudget)  # the bot's output, kept so far

    async def checkout(self, deal: str) -> LiveBot:
        """An idle process that has never seen this deal, or a fresh one. The choice is made
        before any await, so two matches of one deal checking out at once never share one."""
        dead = [live for live in self.idle if not live.alive]
        self.idle = [live for live in self.idle if live.alive]
        chosen = next((live for live in reversed(self.idle) if deal not in live.deals), None)
        if chosen is not None:
            self.idle.remove(chosen)
            chosen.deals.add(deal)
        await asyncio.gather(*(self.retire(live) for live in dead))
        if chosen is None:
            chosen = await self._start()
            chosen.deals.add(deal)
        return chosen

    async def checkin(self, live: LiveBot, retire: bool) -> None:
        """The match is over: the process is retired (its last words go to the match's log)
        or waits for the next one (its output going to its own log meanwhile)."""
        if retire or self.draining or not live.alive:
            await self.retire(live)
        else:
            if live.output is not None:
                live.output.between()
            self.idle.append(live)

    async def retire(self, live: LiveBot) -> None:
        self.everyone.discard(live)
        live.session.end("the referee has no more matches for this process")
        self.server.lobby.forget(live.session)
        if live.process is not None:
            await stop_bot(live.process)

    async def drain(self) -> None:
        self.draining = True
        idle, self.idle = self.idle, []
        await asyncio.gather(*(self.retire(live) for live in idle))

    async def close(self) -> None:
        self.idle = []
        await asyncio.gather(*(self.retire(live) for live in list(self.everyone)))

    async def _start(self) -> LiveBot:
        self.started += 1
        session = self.server.lobby.register(self.bot.name, self.bot.spec)
        log_path = self.logs / f"{self.bot.name}-{self.started}.log" if self.logs else None
        try:
            process = await start_bot(
                self.bot, self.address, session.token, log_path, self.sandbox, self.budget
            )
        except SpecError as exc:
            # The cause goes to every seat in the result: the paths in it stay in the log.
            log.error("bot_not_started", bot=self.bot.name, error=str(exc))
            return LiveBot(
                session,
                None,
                no_show="could not be started (see the tournament log)",
                why=f"could not be started: {exc}",
            )
        live = LiveBot(session, process)
        self.everyone.add(live)
        if self.on_process is not None:
            self.on_process(process.pid, True)
        # A stream that drops may be taken over by the same process within the grace; a
        # process that ends cannot come back: its session fails at once.
        session.rejoin_grace_s = self.rejoin_grace_s
        watch = asyncio.create_task(self._fail_at_exit(live, process))
        self.watching.add(watch)
        watch.add_done_callback(self.watching.discard)
        absent = await wait_joined(
            session, process, self.connect_timeout_s, self.sandbox, self.server.lobby
        )
        if absent is not None:
            live.no_show, live.why = absent.detail, absent.explained(log_path)
            log.warning("bot_absent", bot=self.bot.name, why=live.why)
        return live

    async def _fail_at_exit(self, live: LiveBot, process: asyncio.subprocess.Process) -> None:
        code = await process.wait()
        if self.on_process is not None:
            self.on_process(process.pid, False)
        live.session.fail(Misbehaviour.CRASH, f"its process {describe_exit(code, self.sandbox)}")


class MatchHost:
    """Plays MatchJobs on one referee server; create with `await MatchHost.start(spec)`."""

    def __init__(
        self,
        spec: HostSpec,
        server: RefereeServer,
        unix_socket: Path | None,
        on_process: ProcessWatch | None = None,
        bots_over_unix: bool = False,
    ) -> None:
        self.spec = spec
        self.server = server
        self.unix_socket = unix_socket
        self.on_process = on_process
        self.game = get_game(spec.game)
        self.logs = Path(spec.logs) if spec.logs else None
        if bots_over_unix and server.unix_address is not None:
            self.address = server.unix_address
        else:
            self.address = bot_address(spec.sandbox, server.address, server.unix_address)
        self.pools: dict[str, Pool] = {}
        # Per bot (a ladder's version), for the host's life: a pool dropped and made again
        # (a bot paused, then resumed) does not start afresh.
        self.budgets: dict[str, OutputBudget] = {}
        for name, bot in spec.bots.items():
            self.pools[name] = self._bot_pool(name, bot)
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        self.playing: set[asyncio.Task[Played]] = set()

    def _bot_pool(self, name: str, bot: str) -> BotPool:
        spec = self.spec
        return BotPool(
            _named(parse_spec(bot), name),
            self.server,
            self.logs,
            spec.connect_timeout_s,
            spec.sandbox,
            self.address,
            spec.rejoin_grace_s,
            on_process=self.on_process,
            budget=self.budgets.setdefault(name, OutputBudget(spec.output_caps)),
        )

    def pool(self, name: str, bot: str | None) -> Pool:
        """The bot's pool; one made now for a bot the job brings its SPEC for."""
        pool = self.pools.get(name)
        if pool is None:
            if bot is None:
                raise KeyError(f"bot {name!r} is not one of this host's")
            pool = self.pools[name] = self._bot_pool(name, bot)
        return pool

    async def drop_pool(self, name: str) -> None:
        """Stop a bot's processes (a live ladder's bot retired, paused or updated), each busy
        one when its match ends; a match that seats the bot later starts fresh ones."""
        pool = self.pools.pop(name, None)
        if pool is not None:
            await pool.drain()

    @classmethod
    async def start(
        cls,
        spec: HostSpec,
        listen: str = "127.0.0.1:0",
        on_process: ProcessWatch | None = None,
        tls: Tls | None = None,
        opening: bool = False,
    ) -> MatchHost:
        """Serve on listen (with TLS when given a certificate and its key: for bots from
        elsewhere), and on a private Unix socket too when the sandbox needs one, or with TLS:
        the host's own bots connect there, in plaintext, and need no root certificate. With
        opening, the lobby tells unknown tokens to come back until its owner says it has
        registered the sessions it expects (Lobby.opening)."""
        unix_socket = private_socket(spec.sandbox)
        if unix_socket is None and tls is not None:
            unix_socket = Path(tempfile.mkdtemp(prefix=SOCKET_FOLDER_PREFIX)) / "referee.sock"
        unix = f"unix:{unix_socket}" if unix_socket else None
        cert, key = tls or (None, None)
        server = await start_server(
            listen,
            unix_listen=unix,
            spectator_token=spec.spectator_token,
            tls_cert=cert,
            tls_key=key,
        )
        server.lobby.opening = opening  # no Hello has been read yet: nothing awaited since
        if spec.spectator_token is not None:
            # In the tournament's log, which no sandboxed bot can read.
            log.info("spectators", address=server.address, token=spec.spectator_token)
        return cls(spec, server, unix_socket, on_process, bots_over_unix=tls is not None)

    async def play(self, job: MatchJob) -> Played:
        task = asyncio.current_task()
        assert task is not None
        self.playing.add(task)
        try:
            return await self._play(job)
        finally:
            self.playing.discard(task)

    async def _play(self, job: MatchJob) -> Played:
        started = time.perf_counter()
        specs = job.specs or (None,) * len(job.bots)
        pools = [self.pool(name, bot) for name, bot in zip(job.bots, specs, strict=True)]
        seated = await asyncio.gather(*(pool.checkout(job.deal) for pool in pools))
        self._output_to_match(job, seated)
        try:
            outcome = await self._match(job, seated).run(
                no_shows={s: live.no_show for s, live in enumerate(seated) if live.no_show}
            )
        finally:
            await asyncio.gather(
                *(
                    p.checkin(live, self.spec.restart_bots)
                    for p, live in zip(pools, seated, strict=True)
                )
            )
        await save_replay(Path(self.spec.replays) if self.spec.replays else None, outcome)
        seconds = time.perf_counter() - started
        log.info("match_played", match_id=job.match_id, bots=job.bots, seconds=round(seconds, 3))
        absent = {job.bots[seat]: live.why for seat, live in enumerate(seated) if live.why}
        return Played(record_of(job, outcome), self.worker, seconds, absent)

    def _output_to_match(self, job: MatchJob, seated: list[LiveBot]) -> None:
        """Each seat's output goes to the match's own file until the match is over."""
        for seat, live in enumerate(seated):
            if self.logs is not None and live.output is not None:
                live.output.playing(match_file(self.logs, job.match_id, seat, job.bots[seat]))

    def _match(self, job: MatchJob, seated: list[LiveBot]) -> Match:
        return Match(
            self.game,
            [SessionSeat(live.session) for live in seated],
            deal=deal_key(self.spec.deal_secret, self.spec.deal_book, job.deal),
            match_id=job.match_id,
            options=self.spec.options,
            settings=self.spec.settings,
            spectators=self.server.hub,
            seat_specs=list(job.specs) or [self.spec.bots[name] for name in job.bots],
        )

    async def close(self) -> None:
        """Abandon the matches in flight (a resume plays them again) and stop every bot."""
        for task in self.playing:
            task.cancel()
        await asyncio.gather(*self.playing, return_exceptions=True)
        await asyncio.gather(*(pool.close() for pool in self.pools.values()))
        await self.server.stop()
        if self.unix_socket is not None:
            shutil.rmtree(self.unix_socket.parent, ignore_errors=True)


def _named(bot: BotSpec, name: str) -> BotSpec:
    return dataclasses.replace(bot, name=name)


def record_of(job: MatchJob, outcome: MatchOutcome) -> MatchRecord:
    result = outcome.result
    return MatchRecord(
        match_id=job.match_id,
        deal=job.deal,
        bots=job.bots,
        ranks=tuple(result.ranks),
        scores=tuple(result.scores),
        reason=result.reason,
        forfeits=tuple((f.seat, f.cause.value, f.detail) for f in outcome.forfeits),
        replay=str(outcome.replay_path) if outcome.replay_path else None,
        decisions=outcome.decisions,
        substituted=outcome.substituted(),
    )


class ThreadedHost:
    """A MatchHost on an event loop of its own thread, for callers that are not async: the
    local executor, each Dask worker and each referee process of the cores executor."""

    def __init__(
        self,
        spec: HostSpec,
        listen: str = "127.0.0.1:0",
        on_process: ProcessWatch | None = None,
        tls: Tls | None = None,
        opening: bool = False,
    ) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="arena-host", daemon=True)
        self.thread.start()
        try:
            started = MatchHost.start(spec, listen, on_process, tls, opening)
            self.host = asyncio.run_coroutine_threadsafe(started, self.loop).result()
        except BaseException:
            self._stop_loop()
            raise

    def submit(self, job: MatchJob) -> concurrent.futures.Future[Played]:
        return asyncio.run_coroutine_threadsafe(self.host.play(job), self.loop)

    def call(self, work: Callable[[MatchHost], Awaitable[T]], timeout_s: float = 30.0) -> T:
        """Run work(host) on the host's loop and wait for its result: a host is touched only
        from its own thread."""

        async def on_loop() -> T:
            return await work(self.host)

        return asyncio.run_coroutine_threadsafe(on_loop(), self.loop).result(timeout_s)

    def drop_bot(self, key: str) -> None:
        """Stop the bot's processes (each busy one when its match ends)."""

        async def drop(host: MatchHost) -> None:
            await host.drop_pool(key)

        self.call(drop)

    def close(self, timeout_s: float = 30.0) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self.host.close(), self.loop).result(timeout_s)
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()
