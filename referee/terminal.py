"""The command line's two consoles and its one way of failing: a clear error, never a traceback.
Also how a command stops on a signal: as on Ctrl-C, with its cleanup run."""

from __future__ import annotations

import asyncio
import signal
import tempfile
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console

console = Console()
errors = Console(stderr=True)

T = TypeVar("T")


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print the error; raise what this returns to exit with code."""
    errors.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def writable_folder(folder: Path, what: str) -> None:
    """Make folder, and fail now, before anything has run, when what goes in it could not be
    written there: a file in its place, a read-only filesystem, no permission."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise fail(f"cannot write {what} to {folder}: {exc.strerror or exc}") from None


class Terminated(Exception):
    """The command was asked to stop with SIGTERM."""

    code = 128 + signal.SIGTERM


def run_stoppable(main: Coroutine[Any, Any, T]) -> T:
    """asyncio.run(main), where SIGTERM stops main as Ctrl-C does: main is cancelled and its
    cleanup runs (bots stopped, the server closed); then Terminated, or KeyboardInterrupt for
    Ctrl-C."""

    async def guarded() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        terminated: list[bool] = []

        def on_term() -> None:
            terminated.append(True)
            task.cancel()

        loop.add_signal_handler(signal.SIGTERM, on_term)
        try:
            return await main
        except asyncio.CancelledError:
            if terminated:
                raise Terminated from None
            raise
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    return asyncio.run(guarded())
