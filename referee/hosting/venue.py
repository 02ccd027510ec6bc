"""Where a tournament's or a ladder's matches are played: one referee server, and a pool of bot
processes per bot (bot_pool.py), each match at the host's table (match_table.py).

With duplicate deals a pool holds at least one process per seating (a bot at a 2-seat table
runs 2), and at most concurrency + seats - 1. With `restart_bots` every match gets fresh
processes. A process's output goes to the file of the match it plays (logs/MATCH_ID/SEAT-BOT.log),
and between matches to its own (logs/BOT-K.log), within the caps of HostSpec.output_caps: per
file, and per bot for the host's life, shared by the bot's processes (referee/bots/output.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import structlog
from arena_games import get_game
from arena_games.deals import DealKey
from arena_games.match_settings import MatchSettings

from referee.bots.launcher import BotSpec, parse_spec
from referee.bots.output import OutputBudget, OutputCaps
from referee.bots.sandbox import SOCKET_FOLDER_PREFIX, Sandbox, bot_address, private_socket
from referee.hosting.bot_pool import BotPool, LiveBot, Pool, ProcessWatch
from referee.hosting.cpu_clock import check_cpu_clock
from referee.hosting.machine_speed import with_speed
from referee.hosting.match_table import Table, save_replay
from referee.matches.match import Match, MatchOutcome
from referee.wire.server import RefereeServer, start_server

log = structlog.get_logger("referee.hosting.venue")
T = TypeVar("T")
Tls = tuple[Path, Path]  # the server's certificate and its private key (PEM files)


@dataclass(frozen=True)
class HostSpec:
    """Everything a host needs, in a form that travels to another process (a Dask worker, a
    referee process of the cores executor)."""

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
    # Spectators of this host's matches need it (a bot never gets it); None: nobody.
    spectator_token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Fixture:
    """One match to play: its id, its deal (the name a bot process is never seated for twice,
    and its key), and the bot in each seat, seat 0 first."""

    match_id: str
    deal: str
    deal_key: DealKey = field(repr=False)
    bots: tuple[str, ...]
    # Each seat's SPEC, when the host does not know the bots in advance (a live ladder's come
    # and go); empty: the host's own list (HostSpec.bots) names them.
    specs: tuple[str, ...] = ()
    # Each seat's uploaded version's files' hash, '' for a bot that is not an upload, for the
    # replay; empty: none is an upload.
    content_hashes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hosted:
    """A match the host played: its outcome, where and how long it took."""

    outcome: MatchOutcome
    worker: str
    seconds: float
    # Bot name -> why it was absent from this match, for the referee's console (paths and all).
    absent: dict[str, str] = field(default_factory=dict)


class MatchHost:
    """Plays Fixtures on one referee server; create with `await MatchHost.start(spec)`."""

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
        self.logs = Path(spec.logs) if spec.logs else None
        replays = Path(spec.replays) if spec.replays else None
        game = get_game(spec.game)
        self.table = Table(game, spec.options, spec.settings, server.hub, self.logs, replays)
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
        self.playing: set[asyncio.Task[object]] = set()  # one per match in flight

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
            count_cpu=spec.settings.clock == "cpu",
        )

    def pool(self, name: str, bot: str | None) -> Pool:
        """The bot's pool; one made now for a bot the fixture brings its SPEC for."""
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
        registered the sessions it expects (Lobby.opening). SpecError when the settings'
        CPU clock cannot be kept here (referee/hosting/cpu_clock.py)."""
        check_cpu_clock(
            spec.settings, [parse_spec(bot) for bot in spec.bots.values()], spec.sandbox
        )
        # Each host measures its own machine's speed (a Dask worker its own).
        spec = dataclasses.replace(spec, settings=with_speed(spec.settings))
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

    async def play(self, fixture: Fixture) -> Hosted:
        task = asyncio.current_task()
        assert task is not None
        self.playing.add(task)
        try:
            return await self._play(fixture)
        finally:
            self.playing.discard(task)

    async def _play(self, fixture: Fixture) -> Hosted:
        started = time.perf_counter()
        bots = fixture.bots
        specs = fixture.specs or (None,) * len(bots)
        pools = [self.pool(name, bot) for name, bot in zip(bots, specs, strict=True)]
        seated = await asyncio.gather(*(pool.checkout(fixture.deal) for pool in pools))
        self.table.output_to_match(fixture.match_id, [live.output for live in seated], bots)
        try:
            outcome = await self._match(fixture, seated).run(
                no_shows={s: live.no_show for s, live in enumerate(seated) if live.no_show}
            )
        finally:
            await asyncio.gather(
                *(
                    p.checkin(live, self.spec.restart_bots)
                    for p, live in zip(pools, seated, strict=True)
                )
            )
        await save_replay(self.table.replays, outcome)
        seconds = time.perf_counter() - started
        log.info("match_played", match_id=fixture.match_id, bots=bots, seconds=round(seconds, 3))
        absent = {bots[seat]: live.why for seat, live in enumerate(seated) if live.why}
        return Hosted(outcome, self.worker, seconds, absent)

    def _match(self, fixture: Fixture, seated: list[LiveBot]) -> Match:
        specs = list(fixture.specs) or [self.spec.bots[name] for name in fixture.bots]
        sessions = [live.session for live in seated]
        return self.table.match(
            fixture.match_id, fixture.deal_key, sessions, specs, fixture.content_hashes
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

    def run(self, work: Callable[[MatchHost], Awaitable[T]]) -> concurrent.futures.Future[T]:
        """Run work(host) on the host's loop: a host is touched only from its own thread."""

        async def on_loop() -> T:
            return await work(self.host)

        return asyncio.run_coroutine_threadsafe(on_loop(), self.loop)

    def call(self, work: Callable[[MatchHost], Awaitable[T]], timeout_s: float = 30.0) -> T:
        """Run work(host) on the host's loop and wait for its result."""
        return self.run(work).result(timeout_s)

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
