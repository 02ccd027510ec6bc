"""Hosting a series of matches for bot processes: the referee server, one session per bot,
every match of the series, and the bots stopped cleanly at the end, whatever they did."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from referee.games.base import GameDefinition, GameOptions
from referee.launcher import BotSpec, start_bot, stop_bot
from referee.match import Match, MatchOutcome
from referee.sandbox import Sandbox, bot_address, private_socket
from referee.server import RefereeServer, start_server
from referee.sessions import BotSession, SessionSeat
from referee.settings import MatchSettings

log = structlog.get_logger("referee.host")


def match_seed(series_seed: int, deal: int | str) -> int:
    """A well-spread 63-bit seed for one deal of a series (a number, or a tournament's deal
    name)."""
    digest = hashlib.sha256(f"{series_seed}:{deal}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass
class SeriesPlan:
    """Which bots sit where in each match: every deal is played once per rotation of the
    seats (duplicate deals), so the luck of the cards cancels between bots."""

    game: GameDefinition[GameOptions]
    bots: list[BotSpec]
    games: int
    seed: int
    options: dict[str, object] = field(default_factory=dict)
    settings: MatchSettings = field(default_factory=MatchSettings)
    replays: Path | None = None
    connect_timeout_s: float = 20.0
    sandbox: Sandbox | None = None

    def lineup(self, index: int) -> tuple[int, list[int]]:
        """(seed, bot index for each seat) of match number index."""
        seats = len(self.bots)
        deal, rotation = divmod(index, seats)
        return match_seed(self.seed, deal), [(rotation + s) % seats for s in range(seats)]


OnMatch = Callable[[int, MatchOutcome, list[int]], None]


async def run_series(
    plan: SeriesPlan,
    listen: str = "127.0.0.1:0",
    on_match: OnMatch | None = None,
    server: RefereeServer | None = None,
    on_sessions: Callable[[RefereeServer, list[BotSession]], None] | None = None,
) -> list[tuple[MatchOutcome, list[int]]]:
    """Play the plan's matches, one session per bot for the whole series. Bots with a command
    are started as processes; the others must connect with their token (on_sessions shows the
    tokens)."""
    own_server = server is None
    socket = private_socket(plan.sandbox) if own_server else None
    server = server or await start_server(listen, unix_listen=f"unix:{socket}" if socket else None)
    sessions = [server.lobby.register(b.name, b.spec) for b in plan.bots]
    logs = plan.replays / "logs" if plan.replays else None
    processes = []
    try:
        if on_sessions is not None:
            on_sessions(server, sessions)
        address = bot_address(plan.sandbox, server.address, server.unix_address)
        sandbox = plan.sandbox.hiding(plan.replays) if plan.sandbox else None
        for number, (bot, session) in enumerate(zip(plan.bots, sessions, strict=True)):
            if not bot.argv:
                continue
            log_path = logs / f"{number}-{session.name}.log" if logs else None
            processes.append(await start_bot(bot, address, session.token, log_path, sandbox))
        no_shows = await _wait_connected(sessions, plan.connect_timeout_s)
        outcomes = []
        for index in range(plan.games):
            outcome, lineup = await _play_one(plan, index, sessions, no_shows, server)
            outcomes.append((outcome, lineup))
            if on_match is not None:
                on_match(index, outcome, lineup)
        return outcomes
    finally:
        for session in sessions:
            session.end("the series is over")
            server.lobby.forget(session)
        await asyncio.gather(*(stop_bot(p) for p in processes))
        if own_server:
            await server.stop()
        if socket is not None:
            shutil.rmtree(socket.parent, ignore_errors=True)


async def _wait_connected(sessions: list[BotSession], timeout_s: float) -> dict[int, str]:
    """Bot index -> why it counts as absent, for bots that never joined."""

    async def wait(session: BotSession) -> bool:
        try:
            await asyncio.wait_for(session.connected.wait(), timeout_s)
            return True
        except TimeoutError:
            return False

    joined = await asyncio.gather(*(wait(s) for s in sessions))
    return {i: f"did not join within {timeout_s:.0f} s" for i, ok in enumerate(joined) if not ok}


async def _play_one(
    plan: SeriesPlan,
    index: int,
    sessions: list[BotSession],
    no_shows: dict[int, str],
    server: RefereeServer,
) -> tuple[MatchOutcome, list[int]]:
    seed, lineup = plan.lineup(index)
    match_id = f"{plan.game.name}-{plan.seed}-{index:04d}"
    match = Match(
        plan.game,
        [SessionSeat(sessions[b]) for b in lineup],
        seed=seed,
        match_id=match_id,
        options=plan.options,
        settings=plan.settings,
        replay_path=plan.replays / f"{match_id}.jsonl" if plan.replays else None,
        seat_specs=[plan.bots[b].spec for b in lineup],
        spectators=server.hub,
    )
    absent = {seat: no_shows[b] for seat, b in enumerate(lineup) if b in no_shows}
    return await match.run(no_shows=absent), lineup
