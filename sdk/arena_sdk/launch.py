"""Run a bot class as a session: `python -m arena_sdk.launch TARGET [--address A] [--token T]
[--reconnect-for SECONDS] [--keepalive SECONDS]`.

TARGET is `path/to/bot.py` (the Bot subclass defined there; `path.py:Class` to pick one) or
`package.module:Class`. The referee starts bots this way for `arena play`. A bot file's folder
goes first on sys.path, as a script's does, so a bot of several files imports its own modules.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import logging
import sys
from pathlib import Path
from types import ModuleType

from arena_sdk.bot import Bot
from arena_sdk.client import KEEPALIVE_S, RECONNECT_S, ArenaError, run


def load_bot_class(target: str) -> type[Bot]:
    """The Bot subclass TARGET names; ValueError says what is wrong with it."""
    # A file's name may hold colons itself: only a class name after the last one splits.
    where, separator, class_name = target.rpartition(":")
    if not separator or target.endswith(".py"):
        where, class_name = target, ""
    module = _load_module(where)
    if class_name:
        found = getattr(module, class_name, None)
        if not (inspect.isclass(found) and issubclass(found, Bot)):
            raise ValueError(f"{where} has no Bot subclass named {class_name}")
        return found
    candidates = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, Bot)
        and obj is not Bot
        and obj.__module__ == module.__name__
    ]
    if len(candidates) != 1:
        names = ", ".join(c.__name__ for c in candidates) or "none"
        raise ValueError(
            f"{where} must define exactly one Bot subclass (found: {names}); "
            f"name one with {where}:ClassName"
        )
    return candidates[0]


def _load_module(where: str) -> ModuleType:
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise ValueError(f"no bot file at {where}")
        folder = str(path.resolve().parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        spec = importlib.util.spec_from_file_location(f"arena_bot_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ValueError(f"cannot load {where}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(where)
    except ImportError as exc:
        raise ValueError(f"cannot import {where}: {exc}") from None


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"not a number of seconds, 0 or more: {text!r}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="arena_sdk.launch", description=__doc__)
    parser.add_argument("target")
    parser.add_argument("--address", help="the referee's address (default: $ARENA_ADDRESS)")
    parser.add_argument(
        "--token",
        help="the session's token (default: $ARENA_TOKEN); write --token=VALUE, since a token "
        "may begin with '-'",
    )
    parser.add_argument(
        "--reconnect-for",
        type=_seconds,
        metavar="SECONDS",
        help="how long to keep trying to come back when the referee goes away (the ladder "
        f"stops or restarts, the connection drops); 0: exit at once (default: "
        f"$ARENA_RECONNECT_S, else {RECONNECT_S:g})",
    )
    parser.add_argument(
        "--keepalive",
        type=_seconds,
        metavar="SECONDS",
        help="ping the referee after this long with nothing from it, and give the connection "
        f"up when no answer comes within as long again; 0: never (default: $ARENA_KEEPALIVE_S, "
        f"else {KEEPALIVE_S:g})",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    try:
        bot = load_bot_class(args.target)()
        summary = run(
            bot,
            args.address,
            args.token,
            reconnect_s=args.reconnect_for,
            keepalive_s=args.keepalive,
        )
    except (ValueError, ArenaError) as exc:
        print(f"bot: {exc}", file=sys.stderr)
        return 2
    print(
        f"bot: session over after {summary.matches} matches ({summary.end_reason})", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
