"""A final's entrants.json (tournaments/contest.py's Entrants: who entered each bot, and the hash
of their token) read and checked against the tournament file that names it. A file that is not
one is refused in one line naming what is wrong with it."""

from __future__ import annotations

import re
import stat
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from tournaments.contest import Entrants

MAX_ENTRANTS_BYTES = 1024 * 1024  # a few hundred bytes an entrant: far beyond any final
_SHA256 = re.compile(r"[0-9a-f]{64}")


class EntrantsError(ValueError):
    """An entrants file that cannot be used, in one line."""


def read_entrants(path: Path, bots: Iterable[str]) -> Entrants:
    """The entrants of path, every one's bot among `bots` (the tournament file's) and named
    once, every token hash a sha256 hex digest; EntrantsError otherwise."""
    try:
        status = path.stat()
    except OSError as exc:
        raise EntrantsError(f"{path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(status.st_mode):  # a FIFO would block, /dev/zero never end
        raise EntrantsError(f"{path} is not a file")
    if status.st_size > MAX_ENTRANTS_BYTES:
        raise EntrantsError(f"{path} is longer than {MAX_ENTRANTS_BYTES} bytes")
    try:
        entrants = Entrants.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise EntrantsError(f"{path}: {exc.strerror or exc}") from None
    except ValidationError as exc:
        raise EntrantsError(f"{path}: {_first_problem(exc)}") from None
    _check(entrants, set(bots), path)
    return entrants


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    more = len(exc.errors()) - 1
    return (f"{where}: {message}" if where else message) + (f" (and {more} more)" if more else "")


def _check(entrants: Entrants, bots: set[str], path: Path) -> None:
    seen: set[str] = set()
    for number, entrant in enumerate(entrants.entrants):
        where = f"{path}: entrants.{number}"
        if entrant.bot not in bots:
            raise EntrantsError(
                f"{where}.bot: {entrant.bot!r} is not a bot of the tournament file "
                f"({', '.join(sorted(bots))})"
            )
        if entrant.bot in seen:
            raise EntrantsError(f"{where}.bot: {entrant.bot!r} is entered twice")
        seen.add(entrant.bot)
        if entrant.token_sha256 is not None and not _SHA256.fullmatch(entrant.token_sha256):
            raise EntrantsError(
                f"{where}.token_sha256: not a sha256 hex digest (64 of 0-9a-f), as the ladder "
                "keeps an author's token"
            )
