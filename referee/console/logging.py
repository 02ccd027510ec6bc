"""structlog set-up: quiet, readable lines on the terminal, or JSON lines to a file."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import structlog

from referee.console.terminal import visible


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
            logger_factory=structlog.WriteLoggerFactory(json_file.open("a", encoding="utf-8")),
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
