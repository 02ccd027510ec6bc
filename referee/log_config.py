"""structlog set-up: quiet, readable lines on the terminal, or JSON lines to a file."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
from pathlib import Path
from typing import TextIO, cast

import structlog

from referee.printable import visible


def configure(level: str = "warning", json_file: Path | None = None) -> None:
    numeric = logging.getLevelName(level.upper())
    processors: list[structlog.typing.Processor] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso"),
    ]
    if json_file is not None:
        json_file.parent.mkdir(parents=True, exist_ok=True)
        structlog.configure(
            processors=[*processors, structlog.processors.JSONRenderer()],
            wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
            logger_factory=structlog.WriteLoggerFactory(cast(TextIO, UnfailingLog(json_file))),
            cache_logger_on_first_use=False,
        )
        return
    render = structlog.dev.ConsoleRenderer(colors=False)

    def render_visible(logger: object, name: str, event: structlog.typing.EventDict) -> str:
        """The line with its control characters made visible: a value may be a bot's text (a
        forfeit's detail, a name), and it would reach the terminal as it is."""
        return visible(str(render(logger, name, event)))

    structlog.configure(
        processors=[*processors, render_visible],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )


class UnfailingLog(io.TextIOBase):
    """A log file whose writes never raise: a line that cannot be written (a full disk) goes
    to stderr instead, so logging never stops the process that logs. Unbuffered, so a line
    is either on disk or on stderr, never on both later."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)  # the umask decides

    def write(self, text: str) -> int:
        data = text.encode()
        try:
            while data:
                data = data[os.write(self.fd, data) :]
        except OSError:
            with contextlib.suppress(OSError):  # stderr may be a file on that same disk
                sys.stderr.write(data.decode(errors="replace"))
        return len(text)

    def writable(self) -> bool:
        return True
