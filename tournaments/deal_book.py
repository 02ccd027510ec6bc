"""A book of deals: the deals a tournament plays, given in a file, as an opening book gives
chess engines their openings; instead of a fresh deal from the tournament's secret.

The file: one deal key a line, 64 hex digits, as a replay's header holds it (`deal_key`); `#`
starts a comment, blank lines are skipped. So a book is made from the replays of deals worth
playing again, and two tournaments with one book play the same cards.

The scheduler numbers the deals in the order it schedules them; the k-th deal is played with
the book's entry k mod its length (every seating of it, with duplicate deals), from the top
again when the book runs out. The deal's name carries its entry (`t0-d1@book3`), so a resume or
a Dask worker plays the same cards. The salt of each deal's commitment still comes from the
tournament's secret: a seat's commitment does not say which entry it is playing.

A book is known outside the referee, like a practice seed: bots that know it know the deals.
And a book shorter than the deals a tournament plays repeats them: a bot process may meet a
deal again (in another match than the seatings of one scheduled deal, which never share a
process). A book is for testing bots on chosen deals, not for a contest with stakes.
"""

from __future__ import annotations

import string
from pathlib import Path

from arena_games.deals import SECRET_BYTES, DealKey

MARK = "@book"
KEY_DIGITS = 2 * SECRET_BYTES


class DealBookError(ValueError):
    """A book that cannot be read or holds something other than deal keys."""


def read_book(path: Path) -> tuple[str, ...]:
    """The book's keys, lowercase hex, in order; DealBookError names the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise DealBookError(f"cannot read the deals file {path}: {why}") from None
    keys: dict[str, int] = {}  # key -> its line
    for number, line in enumerate(text.splitlines(), start=1):
        entry = line.partition("#")[0].strip().lower()
        if not entry:
            continue
        if len(entry) != KEY_DIGITS or not set(entry) <= set(string.hexdigits.lower()):
            raise DealBookError(
                f"{path}, line {number}: {entry[:80]!r} is not a deal key (a key is "
                f"{KEY_DIGITS} hex digits, as a replay header's deal_key)"
            )
        if entry in keys:
            raise DealBookError(
                f"{path}, line {number}: the deal of line {keys[entry]} again (each deal "
                "once: the book repeats by itself when the tournament plays more deals)"
            )
        keys[entry] = number
    if not keys:
        raise DealBookError(f"{path} holds no deal key: one a line, {KEY_DIGITS} hex digits")
    return tuple(keys)


def booked(deal: str, entry: int) -> str:
    """The name of the scheduled deal `deal` when it plays the book's entry."""
    return f"{deal}{MARK}{entry}"


def entry_of(deal: str) -> int | None:
    """The book entry a deal's name says it plays; None for a deal from the secret."""
    _, mark, entry = deal.rpartition(MARK)
    return int(entry) if mark and entry.isdigit() else None


def deal_key(secret: bytes, book: tuple[str, ...], deal: str) -> DealKey:
    """The key of the scheduled deal: its book entry's, or one derived from the secret."""
    entry = entry_of(deal)
    if entry is None:
        return DealKey.of(secret, deal)
    if entry >= len(book):
        raise ValueError(f"deal {deal} plays entry {entry} of a book of {len(book)}")
    # The commitment's salt as for any deal of the tournament: from its secret and the name.
    return DealKey(bytes.fromhex(book[entry]), DealKey.of(secret, deal).salt)
