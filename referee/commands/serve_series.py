"""`arena serve`: a referee that hosts a series for bots started elsewhere, by anyone holding
a token it prints."""

from __future__ import annotations

from pathlib import Path

from arena_games.base import GameDefinition, GameOptions
from rich.console import Console

from referee.bots.launcher import BotSpec
from referee.hosting.series import SeriesPlan, listen_on, run_series
from referee.matches.match import MatchOutcome
from referee.printable import visible
from referee.wire.server import RefereeServer
from referee.wire.sessions import BotSession


async def serve_series(
    game: GameDefinition[GameOptions],
    listen: str,
    seats: int,
    games: int,
    secret: bytes,
    replays: Path,
    connect_timeout_s: float,
    console: Console,
    tls_cert: Path | None = None,
    tls_key: Path | None = None,
    rejoin_grace_s: float = 30.0,
) -> None:
    """Host the series for bots that join with the printed tokens. Raises ListenError when it
    cannot listen, TlsError for an unusable certificate or key."""
    remote = [BotSpec(spec="remote", name=f"bot-{i}", argv=()) for i in range(seats)]
    # A remote bot is one party whatever processes it runs: it would see every seating of a
    # duplicate deal. So every match is a deal of its own here (the seats still rotate).
    plan = SeriesPlan(
        game,
        remote,
        games,
        secret,
        replays=replays,
        connect_timeout_s=connect_timeout_s,
        duplicate_deals=False,
        rejoin_grace_s=rejoin_grace_s,
    )

    def show_tokens(server: RefereeServer, sessions: list[list[BotSession]]) -> None:
        console.print(f"referee listening on {server.address}; {games} matches of {game.name}")
        if tls_cert is not None:
            console.print(
                f"  TLS: bots set ARENA_ROOT_CERT to the root certificate that signed {tls_cert}",
                highlight=False,
            )
        for (session,) in sessions:  # a remote bot has one session
            console.print(
                f"  {session.name}: ARENA_ADDRESS={server.address} ARENA_TOKEN={session.token}",
                highlight=False,
            )
        console.print(f"  spectators: {spectators(server)}", highlight=False)

    def show_match(index: int, outcome: MatchOutcome, lineup: list[int]) -> None:
        console.print(visible(f"match {index + 1}: {outcome.result.reason}"), highlight=False)

    server = await listen_on(listen, tls_cert=tls_cert, tls_key=tls_key)
    try:
        await run_series(plan, on_match=show_match, on_sessions=show_tokens, server=server)
    finally:
        await server.stop()
    console.print(f"replays: {replays}")


def spectators(server: RefereeServer) -> str:
    """Where and how spectators watch: Watch is not served on a Unix socket."""
    if server.address.startswith("unix"):
        return "none (Watch is not served on a Unix socket; listen on a TCP address for them)"
    return f"ARENA_ADDRESS={server.address} ARENA_SPECTATOR_TOKEN={server.spectator_token}"
