"""Hosting a series of matches for bot processes: the referee server, the bots' sessions,
every match of the series, and the bots stopped cleanly at the end, whatever they did.

With duplicate deals, no bot process plays two seatings of one deal: each bot started here runs
one process per rotation of the seats, and process r plays only the matches in which the seats
are rotated r times, so it never sees another seating of any deal it has played. Each match is
played at a Table (match_table.py), as a tournament's are (venue.py)."""

from __future__ import annotations

import asyncio
import secrets
import shutil
import socket
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from arena_games.base import GameDefinition, GameOptions
from arena_games.deals import DealKey
from arena_games.match_settings import MatchSettings

from referee.bots.launcher import (
    BotSpec,
    cpu_group_of,
    output_of,
    process_end,
    start_bot,
    stop_bot,
)
from referee.bots.output import OutputBudget, OutputCaps, match_file
from referee.bots.sandbox import Sandbox, bot_address, private_socket
from referee.hosting.cpu_clock import check_cpu_clock
from referee.hosting.joining import NoShow, wait_joined
from referee.hosting.machine_speed import with_speed
from referee.hosting.match_table import Table, save_replay
from referee.matches.match import MatchOutcome
from referee.matches.seats import Spectators
from referee.wire.server import RefereeServer, start_server
from referee.wire.sessions import BotSession, Lobby


@dataclass
class SeriesPlan:
    """Which bots sit where in each match. The seats rotate from match to match; with
    duplicate deals every deal is played once per rotation, so the luck of the cards cancels
    between bots. The secret (arena_games.deals) keys every deal; the series id names the
    matches (and their replays) and carries nothing of the secret."""

    game: GameDefinition[GameOptions]
    bots: list[BotSpec]
    games: int
    secret: bytes = field(repr=False)
    options: dict[str, object] = field(default_factory=dict)
    settings: MatchSettings = field(default_factory=MatchSettings)
    replays: Path | None = None
    connect_timeout_s: float = 20.0
    sandbox: Sandbox | None = None
    duplicate_deals: bool = True
    # How long a remote bot whose stream dropped may rejoin with its token (bots started here
    # are known dead when their process ends: none for them).
    rejoin_grace_s: float = 0.0
    output_caps: OutputCaps = field(default_factory=OutputCaps)  # of each bot's output kept
    # (bot number, its process number) -> the address that process is given instead of the
    # referee's own: a relay in between (referee/hosting/cut_relay.py, `arena bot check --drop`).
    relayed: dict[tuple[int, int], str] = field(default_factory=dict)
    series: str = field(default_factory=lambda: secrets.token_hex(4))

    def rotation(self, index: int) -> int:
        return index % len(self.bots)

    def lineup(self, index: int) -> tuple[DealKey, list[int]]:
        """(the deal's key, bot index for each seat) of match number index."""
        seats = len(self.bots)
        deal = index // seats if self.duplicate_deals else index
        rotation = self.rotation(index)
        return DealKey.of(self.secret, f"d{deal}"), [(rotation + s) % seats for s in range(seats)]

    def match_id(self, index: int) -> str:
        return f"{self.game.name}-{self.series}-{index:04d}"

    @property
    def logs(self) -> Path | None:
        """Where the bots' output goes: beside the replays (None: kept nowhere)."""
        return self.replays / "logs" if self.replays is not None else None

    def table(self, spectators: Spectators) -> Table:
        """Where the series' matches are played."""
        return Table(self.game, self.options, self.settings, spectators, self.logs, self.replays)

    def processes(self, bot: int) -> int:
        """How many processes a started bot runs: one per rotation it plays, with duplicate
        deals (a process never sees two seatings of a deal); else one."""
        return min(self.games, len(self.bots)) if self.duplicate_deals else 1


OnMatch = Callable[[int, MatchOutcome, list[int]], None]
# Each bot's sessions: one per process it runs (see SeriesPlan.processes).
OnSessions = Callable[[RefereeServer, list[list[BotSession]]], None]


async def run_series(
    plan: SeriesPlan,
    listen: str = "127.0.0.1:0",
    on_match: OnMatch | None = None,
    server: RefereeServer | None = None,
    on_sessions: OnSessions | None = None,
    stop_at_exit: bool = False,
) -> list[tuple[MatchOutcome, list[int]]]:
    """Play the plan's matches over sessions that last the whole series. Bots with a command
    are started as processes; the others must connect with their token (on_sessions shows the
    tokens). A process that ends before it joins counts as absent at once, not after the
    timeout; with stop_at_exit it stops the series instead (BotExited). ListenError when the
    referee cannot listen on listen."""
    check_cpu_clock(plan.settings, plan.bots, plan.sandbox)
    plan = replace(plan, settings=with_speed(plan.settings))
    own_server = server is None
    unix_socket = private_socket(plan.sandbox) if own_server else None
    unix = f"unix:{unix_socket}" if unix_socket else None
    server = server or await listen_on(listen, unix_listen=unix)
    sessions = [
        [server.lobby.register(b.name, b.spec) for _ in range(plan.processes(i) if b.argv else 1)]
        for i, b in enumerate(plan.bots)
    ]
    for bot, own in zip(plan.bots, sessions, strict=True):
        if not bot.argv:
            own[0].rejoin_grace_s = plan.rejoin_grace_s
    started: dict[str, tuple[asyncio.subprocess.Process, Path | None]] = {}  # by token
    try:
        if on_sessions is not None:
            on_sessions(server, sessions)
        address = bot_address(plan.sandbox, server.address, server.unix_address)
        sandbox = plan.sandbox.hiding(plan.replays) if plan.sandbox else None
        counting = plan.settings.clock == "cpu"
        for number, (bot, own) in enumerate(zip(plan.bots, sessions, strict=True)):
            budget = OutputBudget(plan.output_caps)  # shared by the bot's processes
            for rotation, session in enumerate(own if bot.argv else []):
                log_path = _log_path(plan, number, session.name, rotation)
                dial = plan.relayed.get((number, rotation), address)
                process = await start_bot(
                    bot, dial, session.token, log_path, sandbox, budget, count_cpu=counting
                )
                session.process_end = process_end(process, sandbox)
                session.cpu_s = _meter(process)
                started[session.token] = (process, log_path)
        no_shows = await _wait_all_joined(plan, sessions, started, stop_at_exit, server.lobby)
        table = plan.table(server.hub)
        outcomes = []
        for index in range(plan.games):
            seated = [own[plan.rotation(index) % len(own)] for own in sessions]
            processes = [started[s.token][0] if s.token in started else None for s in seated]
            outcome, lineup = await _play_one(plan, index, seated, no_shows, table, processes)
            outcomes.append((outcome, lineup))
            if on_match is not None:
                on_match(index, outcome, lineup)
        return outcomes
    finally:
        everyone = [session for own in sessions for session in own]
        await _end_sessions(everyone, started)
        for session in everyone:
            server.lobby.forget(session)
        if own_server:
            await server.stop()
        if unix_socket is not None:
            shutil.rmtree(unix_socket.parent, ignore_errors=True)


def _meter(process: asyncio.subprocess.Process) -> Callable[[], float] | None:
    """The CPU seconds of a started bot's tree so far, when it runs in a CPU group."""
    group = cpu_group_of(process)
    return group.cpu_s if group is not None else None


async def _end_sessions(
    sessions: list[BotSession], started: dict[str, tuple[asyncio.subprocess.Process, Path | None]]
) -> None:
    """Tell the bots that joined that the series is over, and stop every process. One that has
    not joined (the series stopped early: another bot died) cannot be told: it is stopped at
    once, before it joins a session that is over and is refused."""
    joined = {s.token for s in sessions if s.connected.is_set()}
    for session in sessions:
        if session.token in joined:
            session.end("the series is over")
    await asyncio.gather(
        *(
            stop_bot(process, grace_s=2.0 if token in joined else 0.0)
            for token, (process, _) in started.items()
        )
    )
    for session in sessions:
        session.end("the series is over")


def bot_logs(plan: SeriesPlan, number: int, name: str) -> list[Path]:
    """The log files of a started bot's processes, first process first."""
    return [
        path
        for process in range(plan.processes(number))
        if (path := _log_path(plan, number, name, process)) is not None
    ]


def bot_output_files(plan: SeriesPlan, number: int, name: str) -> list[Path]:
    """Every file of a started bot's output, its processes' own and its matches', in the order
    they were last written: the end of the last one is the end of what it wrote."""
    logs = plan.logs
    if logs is None:
        return []
    matches = (
        match_file(logs, plan.match_id(i), s, name)
        for i in range(plan.games)
        for s in range(len(plan.bots))
    )
    found = [path for path in (*bot_logs(plan, number, name), *matches) if path.is_file()]
    return sorted(found, key=lambda path: path.stat().st_mtime_ns)


def _log_path(plan: SeriesPlan, number: int, name: str, process: int) -> Path | None:
    if plan.logs is None:
        return None
    suffix = f"-{process + 1}" if process else ""
    return plan.logs / f"{number}-{name}{suffix}.log"


class BotExited(Exception):
    """A bot's process ended before it joined the referee, so it can play none of its
    matches: the error says which bot, how it ended, and the end of its log."""

    def __init__(self, bot: BotSpec, no_show: NoShow, log_path: Path | None) -> None:
        super().__init__(f"bot {bot.name} ({bot.spec}) {no_show.explained(log_path)}")


class ListenError(Exception):
    """The referee cannot listen where it was asked to: the address is in use, or not one of
    this machine's."""


async def listen_on(
    listen: str,
    unix_listen: str | None = None,
    tls_cert: Path | None = None,
    tls_key: Path | None = None,
) -> RefereeServer:
    """start_server, whose failure to bind is a ListenError naming the address and why."""
    _check_bindable(listen)
    try:
        return await start_server(
            listen, unix_listen=unix_listen, tls_cert=tls_cert, tls_key=tls_key
        )
    except (OSError, RuntimeError) as exc:  # grpc says only "Failed to bind", as RuntimeError
        if isinstance(exc, RuntimeError) and "bind" not in str(exc):
            raise
        raise ListenError(
            f"cannot listen on {listen}: the address is in use, or not one of this machine's"
        ) from None


def _check_bindable(listen: str) -> None:
    """Bind a TCP address once, as grpc will, to fail with the system's reason ("Address
    already in use") where grpc would only say that it failed, in a log line of its own."""
    if listen.startswith("unix:"):
        return
    host, _, port = listen.rpartition(":")
    if not port.isdigit():
        raise ListenError(f"cannot listen on {listen}: give host:port, or unix:/path")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]") or None, int(port), type=socket.SOCK_STREAM
        )[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as grpc does
            probe.bind(address)
    except OSError as exc:
        raise ListenError(f"cannot listen on {listen}: {exc.strerror or exc}") from None


async def _wait_all_joined(
    plan: SeriesPlan,
    sessions: list[list[BotSession]],
    started: dict[str, tuple[asyncio.subprocess.Process, Path | None]],
    stop_at_exit: bool,
    lobby: Lobby,
) -> dict[str, str]:
    """Session token -> why it counts as absent, for sessions nobody joined; with
    stop_at_exit, BotExited as soon as a bot's process ends before joining."""
    waiting = {
        asyncio.ensure_future(
            wait_joined(
                s,
                started[s.token][0] if s.token in started else None,
                plan.connect_timeout_s,
                plan.sandbox,
                lobby,
            )
        ): (number, s)
        for number, own in enumerate(sessions)
        for s in own
    }
    absent: dict[str, str] = {}
    try:
        while waiting:
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                number, session = waiting.pop(task)
                no_show = task.result()
                if no_show is None:
                    continue
                if stop_at_exit and no_show.exited:
                    raise BotExited(plan.bots[number], no_show, started[session.token][1])
                absent[session.token] = no_show.detail
    finally:
        for task in waiting:
            task.cancel()
    return absent


async def _play_one(
    plan: SeriesPlan,
    index: int,
    seated: list[BotSession],
    no_shows: dict[str, str],
    table: Table,
    processes: list[asyncio.subprocess.Process | None],
) -> tuple[MatchOutcome, list[int]]:
    """Match number index; seated[b] is the session bot b plays it on, processes[b] its
    process (None: a bot that connects by itself), whose output goes to the match's log."""
    deal, lineup = plan.lineup(index)
    match_id = plan.match_id(index)
    match = table.match(
        match_id, deal, [seated[b] for b in lineup], [plan.bots[b].spec for b in lineup]
    )
    absent = {
        seat: no_shows[seated[b].token]
        for seat, b in enumerate(lineup)
        if seated[b].token in no_shows
    }
    outputs = [output_of(p) if p is not None else None for p in processes]
    table.output_to_match(
        match_id, [outputs[b] for b in lineup], [plan.bots[b].name for b in lineup]
    )
    try:
        outcome = await match.run(no_shows=absent)
    finally:
        for output in outputs:
            if output is not None:
                output.between()
    await save_replay(table.replays, outcome)
    return outcome, lineup
