"""Hosting a series of matches for bot processes: the referee server, the bots' sessions,
every match of the series, and the bots stopped cleanly at the end, whatever they did.

With duplicate deals, no bot process plays two seatings of one deal: each bot started here runs
one process per rotation of the seats, and process r plays only the matches in which the seats
are rotated r times, so it never sees another seating of any deal it has played."""

from __future__ import annotations

import asyncio
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from referee.deals import DealKey
from referee.games.base import GameDefinition, GameOptions
from referee.launcher import BotSpec, start_bot, stop_bot
from referee.match import Match, MatchOutcome
from referee.sandbox import Sandbox, bot_address, private_socket
from referee.server import RefereeServer, start_server
from referee.sessions import BotSession, SessionSeat
from referee.settings import MatchSettings

log = structlog.get_logger("referee.host")


@dataclass
class SeriesPlan:
    """Which bots sit where in each match. The seats rotate from match to match; with
    duplicate deals every deal is played once per rotation, so the luck of the cards cancels
    between bots. The secret (referee.deals) keys every deal; the series id names the matches
    (and their replays) and carries nothing of the secret."""

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
) -> list[tuple[MatchOutcome, list[int]]]:
    """Play the plan's matches over sessions that last the whole series. Bots with a command
    are started as processes; the others must connect with their token (on_sessions shows the
    tokens)."""
    own_server = server is None
    socket = private_socket(plan.sandbox) if own_server else None
    server = server or await start_server(listen, unix_listen=f"unix:{socket}" if socket else None)
    sessions = [
        [server.lobby.register(b.name, b.spec) for _ in range(plan.processes(i) if b.argv else 1)]
        for i, b in enumerate(plan.bots)
    ]
    for bot, own in zip(plan.bots, sessions, strict=True):
        if not bot.argv:
            own[0].rejoin_grace_s = plan.rejoin_grace_s
    processes = []
    try:
        if on_sessions is not None:
            on_sessions(server, sessions)
        address = bot_address(plan.sandbox, server.address, server.unix_address)
        sandbox = plan.sandbox.hiding(plan.replays) if plan.sandbox else None
        for number, (bot, own) in enumerate(zip(plan.bots, sessions, strict=True)):
            for process, session in enumerate(own if bot.argv else []):
                log_path = _log_path(plan, number, session.name, process)
                processes.append(await start_bot(bot, address, session.token, log_path, sandbox))
        no_shows = await _wait_connected(
            [s for own in sessions for s in own], plan.connect_timeout_s
        )
        outcomes = []
        for index in range(plan.games):
            seated = [own[plan.rotation(index) % len(own)] for own in sessions]
            outcome, lineup = await _play_one(plan, index, seated, no_shows, server)
            outcomes.append((outcome, lineup))
            if on_match is not None:
                on_match(index, outcome, lineup)
        return outcomes
    finally:
        for own in sessions:
            for session in own:
                session.end("the series is over")
                server.lobby.forget(session)
        await asyncio.gather(*(stop_bot(p) for p in processes))
        if own_server:
            await server.stop()
        if socket is not None:
            shutil.rmtree(socket.parent, ignore_errors=True)


def bot_logs(plan: SeriesPlan, number: int, name: str) -> list[Path]:
    """The log files of a started bot's processes, first process first."""
    return [
        path
        for process in range(plan.processes(number))
        if (path := _log_path(plan, number, name, process)) is not None
    ]


def _log_path(plan: SeriesPlan, number: int, name: str, process: int) -> Path | None:
    if plan.replays is None:
        return None
    suffix = f"-{process + 1}" if process else ""
    return plan.replays / "logs" / f"{number}-{name}{suffix}.log"


async def _wait_connected(sessions: list[BotSession], timeout_s: float) -> dict[str, str]:
    """Session token -> why it counts as absent, for sessions nobody joined."""

    async def wait(session: BotSession) -> bool:
        try:
            await asyncio.wait_for(session.connected.wait(), timeout_s)
            return True
        except TimeoutError:
            return False

    joined = await asyncio.gather(*(wait(s) for s in sessions))
    return {
        s.token: f"did not join within {timeout_s:.0f} s"
        for s, ok in zip(sessions, joined, strict=True)
        if not ok
    }


async def _play_one(
    plan: SeriesPlan,
    index: int,
    seated: list[BotSession],
    no_shows: dict[str, str],
    server: RefereeServer,
) -> tuple[MatchOutcome, list[int]]:
    """Match number index; seated[b] is the session bot b plays it on."""
    deal, lineup = plan.lineup(index)
    match_id = plan.match_id(index)
    match = Match(
        plan.game,
        [SessionSeat(seated[b]) for b in lineup],
        deal=deal,
        match_id=match_id,
        options=plan.options,
        settings=plan.settings,
        replay_path=plan.replays / f"{match_id}.jsonl" if plan.replays else None,
        seat_specs=[plan.bots[b].spec for b in lineup],
        spectators=server.hub,
    )
    absent = {
        seat: no_shows[seated[b].token]
        for seat, b in enumerate(lineup)
        if seated[b].token in no_shows
    }
    return await match.run(no_shows=absent), lineup
