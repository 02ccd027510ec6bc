"""The name of a bot's version: a hash of its folder's contents, and of nothing else (no
times, owners or permission bits but one), so the same files always give the same name.

The hash, exactly: SHA-256, in lowercase hex, of the concatenation, over every file and folder
under the bot's folder (not the folder itself), in the order of their relative paths (`/`
between the parts) compared as UTF-8 bytes, of one record each:

    a folder:  b"D " + path + b"\\0"
    a file:    b"F " + path + b"\\0" + size in decimal ASCII + b"\\0" + its bytes
               (b"X " instead of b"F " when any of its execute bits is set)

A path holds no NUL and each file's length is given before its bytes, so no two folders give
the same stream. Anything but a plain file or folder (a link, a device) is refused: the
folder is hashed as a bot would find it, and a link would make that depend on the disk around.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Literal, Protocol

from tournaments.submissions.archive_rules import SubmissionRefused

Kind = Literal["D", "F", "X"]


class Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...


CHUNK = 1024 * 1024


def content_hash(folder: Path, skip: frozenset[str] = frozenset()) -> str:
    """The folder's hash as defined above; names in skip (at any depth) are left out."""
    digest = hashlib.sha256()
    for path, kind in entries(folder, skip):
        digest.update(kind.encode() + b" " + path.encode() + b"\0")
        if kind != "D":
            _add_file(digest, folder / path)
    return digest.hexdigest()


def entries(folder: Path, skip: frozenset[str] = frozenset()) -> list[tuple[str, Kind]]:
    """Every file and folder under folder as (relative path, kind), in the hash's order."""
    found = list(_walk(folder, "", skip))
    return sorted(found, key=lambda item: item[0].encode("utf-8", "surrogateescape"))


def _walk(folder: Path, prefix: str, skip: frozenset[str]) -> Iterator[tuple[str, Kind]]:
    with os.scandir(folder) as listing:
        for item in listing:
            if item.name in skip:
                continue
            path = prefix + item.name
            mode = item.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                yield path, "D"
                yield from _walk(Path(item.path), path + "/", skip)
            elif stat.S_ISREG(mode):
                yield path, "X" if mode & 0o111 else "F"
            else:
                what = "a symbolic link" if stat.S_ISLNK(mode) else "not a file or folder"
                raise SubmissionRefused(f"{path!r}: {what}")


def _add_file(digest: Digest, path: Path) -> None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    with os.fdopen(os.open(path, flags), "rb") as file:
        digest.update(str(os.fstat(file.fileno()).st_size).encode() + b"\0")
        while chunk := file.read(CHUNK):
            digest.update(chunk)
