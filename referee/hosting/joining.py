"""Waiting for a bot to join the referee, and why it counts as absent when it does not: its
process ended first (seen at once, not after the timeout), or it did not join in time."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

from referee.bots.launcher import describe_log, exit_words, output_settled
from referee.bots.sandbox import Sandbox
from referee.wire.sessions import BotSession, Lobby


@dataclass(frozen=True)
class NoShow:
    """Why a bot's session counts as absent: its process ended before it joined (`how` it
    ended), or it did not join in time."""

    how: str
    exited: bool = False

    @property
    def detail(self) -> str:
        """The cause as every seat of the match is told it: no path of this machine."""
        return f"{self.how} before joining (see its log)" if self.exited else self.how

    def explained(self, log_path: Path | None) -> str:
        """The cause with where the bot's log is and how it ends: for the referee's console."""
        return f"{self.how}{' before joining the referee' if self.exited else ''}; " + (
            describe_log(log_path)
        )


async def wait_joined(
    session: BotSession,
    process: asyncio.subprocess.Process | None,
    timeout_s: float,
    sandbox: Sandbox | None = None,
    lobby: Lobby | None = None,
) -> NoShow | None:
    """None once the session has joined; else why it is absent. A process that ends first is
    seen at once: a bot that fails at import costs no join timeout. With the lobby, the streams
    it turned away meanwhile (an unknown token, no Hello) are named too."""
    began = time.monotonic()
    waits: set[asyncio.Future[object]] = {asyncio.ensure_future(session.connected.wait())}
    if process is not None:
        waits.add(asyncio.ensure_future(process.wait()))
    try:
        await asyncio.wait(waits, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in waits:
            task.cancel()
    if session.connected.is_set():
        return None
    refused = lobby.refused_since(began) if lobby is not None else []
    seen = f"; meanwhile the referee turned away {' and '.join(refused)}" if refused else ""
    if process is not None and process.returncode is not None:
        await output_settled(process)  # its log's end, which the console shows, all there
        return NoShow(exit_words(process, sandbox) + seen, exited=True)
    return NoShow(f"did not join within {timeout_s:g} s{seen}")
