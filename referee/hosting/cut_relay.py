"""A relay between a bot and its referee that can cut the bot's connections at once and
silently, as a network that fails: what `arena bot check --drop` puts in the bot's way to see
whether it comes back (docs/protocol.md, "Rejoining after a drop").

It carries bytes both ways, over TCP on 127.0.0.1 or over a Unix socket (for the sandbox tiers
without network), and knows nothing of gRPC. A cut resets both sides of every connection it
carries; connections made afterwards are carried as ever."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path


class CutRelay:
    """Listens where the bot is told to connect; forwards to the referee's address."""

    def __init__(self, target: str) -> None:
        self.target = target  # the referee's address: host:port or unix:/path
        self.cuts = 0
        self._carried: list[asyncio.StreamWriter] = []
        self._server: asyncio.Server | None = None

    async def start(self, unix_path: Path | None = None) -> str:
        """Listen on a Unix socket at unix_path, else on a free TCP port of 127.0.0.1; the
        address a bot should dial."""
        if unix_path is not None:
            self._server = await asyncio.start_unix_server(self._carry, path=str(unix_path))
            return f"unix:{unix_path}"
        self._server = await asyncio.start_server(self._carry, "127.0.0.1", 0)
        return f"127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def _open_target(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.target.startswith("unix:"):
            return await asyncio.open_unix_connection(self.target.removeprefix("unix:"))
        host, _, port = self.target.rpartition(":")
        return await asyncio.open_connection(host.strip("[]"), int(port))

    async def _carry(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await self._open_target()
        except OSError:
            writer.transport.abort()
            return
        self._carried += [writer, up_writer]
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    def cut(self) -> None:
        """Reset every connection carried so far, both sides, with no goodbye."""
        self.cuts += 1
        carried, self._carried = self._carried, []
        for writer in carried:
            writer.transport.abort()

    async def stop(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    sink.close()
