"""A submission accepted and stored for good, or refused with nothing stored.

    versions/                       0700, the ladder's (the process umask is 077)
      <hash>/                       0555: one version, named by content_hash.py's hash
        arena-bot.toml              0444 (0555 when executable), every file and folder alike
      .incoming-XXXX/               0700: a submission being unpacked, never a version

A submission is unpacked into a fresh `.incoming-` folder beside the versions, checked (its
manifest, the files it names), hashed, made read-only, flushed to disk, and only then renamed
to `versions/<hash>`: a rename is atomic, so a version folder is whole or absent. The same
contents submitted twice give the same hash: the second finds its folder there and stores
nothing more. A refusal removes its `.incoming-` folder; a process killed in the middle leaves
one, which `sweep_incoming` removes (call it before the first submission is taken, e.g. when
the ladder starts: it removes every `.incoming-` folder, so only one process may accept into a
versions folder).

Files are 0444 (0555 with any execute bit in the archive) and folders 0555, readable by
others because a sandboxed bot runs as a uid of its own and reads its folder through a bind
mount; the versions folder around them stays the owner's alone.
"""

from __future__ import annotations

import errno
import io
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tournaments.submissions.archive_rules import SubmissionLimits, SubmissionRefused
from tournaments.submissions.content_hash import content_hash
from tournaments.submissions.manifest import MANIFEST_FILE, BotManifest, read_manifest
from tournaments.submissions.unpacking import unpack

INCOMING_PREFIX = ".incoming-"
SYNC_THREADS = 8
_HASH = re.compile(r"[0-9a-f]{64}")
Archive = bytes | Path | IO[bytes]


@dataclass(frozen=True)
class StoredVersion:
    hash: str  # content_hash.py's: the folder's name, and what replays record
    folder: Path  # versions/<hash>, read-only
    manifest: BotManifest
    fresh: bool = True  # False: the same contents were stored already, nothing was written


def accept(archive: Archive, limits: SubmissionLimits, versions: Path) -> StoredVersion:
    """The archive (its bytes, a file of them, or a seekable stream of them, read from its
    start) stored as a version under versions, or SubmissionRefused naming what was wrong,
    with nothing stored. Its size is checked first; whoever receives it bounds it before."""
    versions.mkdir(mode=0o700, parents=True, exist_ok=True)
    with _opened(archive, limits) as stream:
        work = Path(tempfile.mkdtemp(prefix=INCOMING_PREFIX, dir=versions))
        try:
            unpacked = work / "unpacked"
            unpacked.mkdir(mode=0o700)
            unpack(stream, unpacked, limits)
            return _store(_bot_folder(unpacked), versions)
        finally:
            discard(work)


def stored_version(versions: Path, digest: str) -> StoredVersion:
    """A version stored before, by its hash (which may come from a request: it is checked)."""
    if not _HASH.fullmatch(digest) or not (versions / digest).is_dir():
        raise SubmissionRefused(f"no stored version {digest[:64]!r}")
    folder = versions / digest
    return StoredVersion(digest, folder, read_manifest(folder), fresh=False)


def sweep_incoming(versions: Path) -> list[str]:
    """Removes what a killed process left half unpacked; the names of what it removed."""
    if not versions.is_dir():
        return []
    left = [p for p in versions.iterdir() if p.name.startswith(INCOMING_PREFIX)]
    for path in left:
        discard(path)
    return sorted(p.name for p in left)


def discard(path: Path) -> None:
    """A folder and all in it, read-only parts included."""
    if not path.exists():
        return
    for folder, _, _ in os.walk(path):
        os.chmod(folder, 0o700)
    shutil.rmtree(path)


def _store(folder: Path, versions: Path) -> StoredVersion:
    manifest = read_manifest(folder)
    digest = content_hash(folder)
    final = versions / digest
    if final.is_dir():  # the same bytes, by their hash, stored whole before
        os.chmod(final, 0o555)  # in case a kill came between its rename and its chmod
        return StoredVersion(digest, final, manifest, fresh=False)
    _seal(folder)
    fresh = True
    try:
        # Moving a folder to another parent rewrites its "..": its top stays writable till then.
        os.rename(folder, final)
    except OSError as exc:
        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
            raise
        fresh = False  # stored by a racing twin just now
    os.chmod(final, 0o555)
    _sync(final)
    _sync(versions)
    return StoredVersion(digest, final, manifest, fresh)


def _seal(folder: Path) -> None:
    """Every file and folder on disk, every file read-only, every folder under the top too."""
    every = [Path(where, name) for where, folders, files in os.walk(folder) for name in files]
    every += [Path(where, name) for where, folders, _ in os.walk(folder) for name in folders]
    # fsync one by one costs a journal commit each (5 s for 2,000 files here); fsyncs made
    # at once share their commits.
    with ThreadPoolExecutor(SYNC_THREADS) as pool:
        list(pool.map(_sync, every))
    for where, folders, files in os.walk(folder, topdown=False):
        for name in files:
            path = os.path.join(where, name)
            executable = os.lstat(path).st_mode & 0o111
            os.chmod(path, 0o555 if executable else 0o444)
        for name in folders:
            os.chmod(os.path.join(where, name), 0o555)


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _bot_folder(unpacked: Path) -> Path:
    """The archive's root, or its one top folder when the manifest is there (as `zip -r
    bot.zip bot/` makes it)."""
    if (unpacked / MANIFEST_FILE).exists():
        return unpacked
    inside = list(unpacked.iterdir())
    if len(inside) == 1 and inside[0].is_dir() and (inside[0] / MANIFEST_FILE).exists():
        return inside[0]
    return unpacked  # read_manifest says what is missing


@contextmanager
def _opened(archive: Archive, limits: SubmissionLimits) -> Iterator[IO[bytes]]:
    """The archive as a stream, once its size is known to be within the limit."""
    if isinstance(archive, bytes):
        _check_size(len(archive), limits)
        yield io.BytesIO(archive)
        return
    if not isinstance(archive, Path):  # a seekable stream: an upload spooled to a file
        _check_size(archive.seek(0, os.SEEK_END), limits)
        archive.seek(0)
        yield archive
        return
    fd = os.open(archive, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SubmissionRefused("the archive is not a file")
        _check_size(info.st_size, limits)
        yield file


def _check_size(size: int, limits: SubmissionLimits) -> None:
    if size > limits.archive_bytes:
        raise SubmissionRefused(f"the archive is over {limits.archive_mb:g} MB")
