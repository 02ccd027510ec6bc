"""The command line's two consoles and its one way of failing: a clear error, never a traceback."""

from __future__ import annotations

import typer
from rich.console import Console

console = Console()
errors = Console(stderr=True)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print the error; raise what this returns to exit with code."""
    errors.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)
