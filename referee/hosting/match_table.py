"""The table a host plays its matches at, one copy for a series and a tournament alike: the
match over the bots' sessions, each seat's output in the match's own file while it plays, and
the replay saved after the match."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog
from arena_games import replay_file as replay
from arena_games.base import GameDefinition, GameOptions
from arena_games.deals import DealKey
from arena_games.match_settings import MatchSettings

from referee.bots.output import BotOutput, match_file
from referee.matches.match import Match, MatchOutcome
from referee.matches.seats import Spectators
from referee.wire.sessions import BotSession, SessionSeat

log = structlog.get_logger("referee.hosting.match_table")


@dataclass(frozen=True)
class Table:
    """What every match of one host shares: the game with its options and clocks, where its
    spectators watch, and the folders of the seats' output and of the replays (None: none
    kept)."""

    game: GameDefinition[GameOptions]
    options: dict[str, object]
    settings: MatchSettings
    spectators: Spectators
    logs: Path | None
    replays: Path | None

    def match(
        self,
        match_id: str,
        deal: DealKey,
        sessions: Sequence[BotSession],
        specs: list[str],
        content_hashes: Sequence[str] = (),
    ) -> Match:
        """The match of these sessions, seat 0 first; specs: each seat's SPEC, and
        content_hashes each uploaded version's files' hash ('' for another bot), for its
        replay."""
        return Match(
            self.game,
            [SessionSeat(session) for session in sessions],
            deal=deal,
            match_id=match_id,
            options=self.options,
            settings=self.settings,
            seat_specs=specs,
            content_hashes=content_hashes,
            spectators=self.spectators,
            cpu_meters=[session.cpu_s for session in sessions],
        )

    def output_to_match(
        self, match_id: str, outputs: Sequence[BotOutput | None], names: Sequence[str]
    ) -> None:
        """Each seat's output (None: a bot that is not this host's process) goes to the match's
        own file until the match is over."""
        for seat, (output, name) in enumerate(zip(outputs, names, strict=True)):
            if self.logs is not None and output is not None:
                output.playing(match_file(self.logs, match_id, seat, name))


async def save_replay(folder: Path | None, outcome: MatchOutcome) -> None:
    """Write the match's replay into folder and set outcome.replay_path to it. Written here,
    after the match, not by the match: a replay that cannot be written (a full disk, a folder
    gone) costs only the replay, with a warning that says why; the result stands. Written off
    the event loop: its fsync would stop every other match's clock and stream meanwhile."""
    if folder is None:
        return
    path = folder / f"{outcome.match_id}.jsonl"
    try:
        outcome.replay_path = await asyncio.to_thread(replay.write, path, outcome.records)
    except replay.ReplayWriteError as exc:
        outcome.replay_path = None
        log.warning("replay_not_written", match_id=outcome.match_id, error=str(exc))
