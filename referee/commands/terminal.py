"""The command line's two consoles and its one way of failing: a clear error, never a traceback.
Also how a command stops on a signal: as on Ctrl-C, with its cleanup run.

Both consoles print text as it is: no markup, no emoji codes, no highlighting, so a bot's name
or a file's name shows as written (`[red]`, `:end:` and all); styles are given as rich Text.
When the output is not a terminal (a pipe, a file), nothing is cut or wrapped whatever the
width (rich would otherwise assume 80 columns, or $COLUMNS): lines are as long as they are."""

from __future__ import annotations

import asyncio
import signal
import sys
import tempfile
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.text import Text

from referee.printable import visible

# Wide enough for any line: rich lays tables out within the width, and cuts what does not fit.
UNBOUNDED = 1_000_000


def plain_console(stderr: bool = False) -> Console:
    """A console that prints text literally, and never cuts or wraps when not on a terminal."""
    settings: dict[str, Any] = {"markup": False, "emoji": False, "highlight": False}
    probe = Console(stderr=stderr, **settings)
    if probe.is_terminal:
        return probe
    return Console(stderr=stderr, width=UNBOUNDED, soft_wrap=True, **settings)


console = plain_console()
errors = plain_console(stderr=True)

T = TypeVar("T")


def plain_when_piped(*apps: typer.Typer) -> None:
    """Help and usage errors in click's plain words, never wrapped, when the output is not a
    terminal: typer's rich panels are boxes cut to 80 columns (or $COLUMNS), and a usage error
    in one is no longer a line a script can grep."""
    if console.is_terminal and errors.is_terminal:
        return
    for app in apps:
        app.rich_markup_mode = None
    apps[0].info.context_settings = {"terminal_width": UNBOUNDED, "max_content_width": UNBOUNDED}


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print the error, its control characters made visible (it may quote a file or a bot);
    raise what this returns to exit with code."""
    errors.print(Text.assemble(("error:", "bold red"), " ", visible(message)), soft_wrap=True)
    return typer.Exit(code)


def print_json(document: BaseModel) -> None:
    """The one JSON document of a command's --json, alone on stdout: not through rich, which
    would wrap it."""
    sys.stdout.write(document.model_dump_json(indent=2) + "\n")
    sys.stdout.flush()


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
