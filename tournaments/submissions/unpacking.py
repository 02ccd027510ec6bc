"""An archive from an author, unpacked into a fresh folder of ours, or refused.

The format is told by the first bytes, never by a name: gzip (a .tar.gz) or a zip. Only
regular files and folders are unpacked, each under the folder: an absolute path, a `..`, a
backslash or control character, a path over `name_chars` or deeper than `depth`, a name given
twice, a link of any kind (symbolic or hard, even one that would stay inside: a build step
could otherwise be pointed at a file outside the folder later, and no bot needs one), a
device, a FIFO, a sparse file, a setuid or setgid bit, an encrypted zip entry or one
compressed other than stored or deflate (zipfile inflates bzip2 and lzma in unbounded chunks)
are refused. Sizes are counted while reading: the bytes written, never a header's word for
them, stop the unpacking at `unpacked_mb`, so a decompression bomb inflates at most that much
(plus one chunk) before it is refused. The gzip stream under a tar is capped too, so a
huge pax or long-name header cannot be read into memory. Nothing but bytes comes from the
archive: every file is written 0600 (0700 when any execute bit was set), every folder 0700.
"""

from __future__ import annotations

import gzip
import os
import stat
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path
from typing import IO, BinaryIO, Literal, Protocol

from tournaments.submissions.archive_rules import SubmissionLimits, SubmissionRefused

CHUNK = 64 * 1024
# What a tar stream may hold besides its files' bytes: a 512-byte header, up to 511 bytes of
# padding and a pax header of names and times per entry, and the end-of-archive records.
TAR_OVERHEAD_PER_ENTRY = 4096
TAR_OVERHEAD = 64 * 1024
NAME_MAX = 255  # bytes in one file or folder name, as Linux takes it
ArchiveKind = Literal["tar.gz", "zip"]


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def archive_kind(head: bytes) -> ArchiveKind:
    """What the first bytes say the archive is."""
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    raise SubmissionRefused("not a .tar.gz or .zip archive (told by its first bytes)")


def unpack(archive: IO[bytes], into: Path, limits: SubmissionLimits) -> None:
    """The archive's files and folders into `into` (an empty folder of ours), or
    SubmissionRefused naming the first thing wrong, with part of it maybe written."""
    kind = archive_kind(archive.read(4))
    archive.seek(0)
    folder = Folder(into, limits)
    try:
        if kind == "zip":
            _unpack_zip(archive, folder)
        else:
            _unpack_tar(archive, folder)
    except SubmissionRefused:
        raise
    except _MALFORMED as exc:
        raise SubmissionRefused(f"not a valid {kind} archive: {_first_line(exc)}") from None


# What a malformed archive raises from tarfile, gzip, zlib and zipfile. Any other OSError (a
# full disk) is the server's, not the author's, and goes up as it is.
_MALFORMED = (
    tarfile.TarError,
    zipfile.BadZipFile,
    gzip.BadGzipFile,
    EOFError,
    zlib.error,
    struct.error,
    ValueError,
    NotImplementedError,
)


class Folder:
    """The folder being filled: every path checked, every byte counted."""

    def __init__(self, root: Path, limits: SubmissionLimits) -> None:
        self.root = root
        self.limits = limits
        self.kinds: dict[tuple[str, ...], Literal["file", "folder"]] = {}
        self.unpacked = 0

    def add_folder(self, name: str) -> None:
        parts = self.parts(name)
        if parts:
            self._make_folders(name, parts)

    def add_file(self, name: str, data: Readable, executable: bool) -> None:
        parts = self.parts(name)
        if not parts:
            raise SubmissionRefused(f"{shown(name)}: a file with no name")
        self._make_folders(name, parts[:-1])
        self._claim(name, parts, "file")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(self.root.joinpath(*parts), flags, 0o700 if executable else 0o600)
        with os.fdopen(fd, "wb") as out:
            self._copy(name, data, out)

    def declared(self, size: int, name: str | None = None) -> None:
        """A header's size (a member's, or all of a zip's), refused early when it is over the
        limit; the bytes read are counted all the same: a header is the author's word."""
        if self.unpacked + size > self.limits.unpacked_bytes:
            where = "" if name is None else f"{shown(name)}: "
            raise SubmissionRefused(
                f"{where}the archive unpacks to more than {self.limits.unpacked_mb:g} MB"
            )

    def parts(self, name: str) -> tuple[str, ...]:
        """The path's parts under the folder ('.' and empty ones dropped), or refused."""
        if len(name) > self.limits.name_chars:
            raise SubmissionRefused(
                f"{shown(name)}: a path longer than {self.limits.name_chars} characters"
            )
        if name.startswith("/"):
            raise SubmissionRefused(f"{shown(name)}: an absolute path")
        if ".." in name.split("/"):
            raise SubmissionRefused(f"{shown(name)}: '..' in a path")
        if any(ord(c) < 32 or c in "\\\x7f" for c in name):
            raise SubmissionRefused(f"{shown(name)}: a backslash or control character in a path")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise SubmissionRefused(f"{shown(name)}: a path not in UTF-8") from None
        parts = tuple(p for p in name.split("/") if p not in ("", "."))
        if any(len(part.encode()) > NAME_MAX for part in parts):
            raise SubmissionRefused(f"{shown(name)}: a name over {NAME_MAX} bytes in a path")
        if len(parts) > self.limits.depth:
            raise SubmissionRefused(
                f"{shown(name)}: a path more than {self.limits.depth} folders deep"
            )
        return parts

    def _make_folders(self, name: str, parts: tuple[str, ...]) -> None:
        for end in range(1, len(parts) + 1):
            if self.kinds.get(parts[:end]) == "folder":
                continue
            self._claim(name, parts[:end], "folder")
            os.mkdir(self.root.joinpath(*parts[:end]), 0o700)

    def _claim(self, name: str, parts: tuple[str, ...], kind: Literal["file", "folder"]) -> None:
        if parts in self.kinds:
            raise SubmissionRefused(f"{shown(name)}: a path given twice")
        if len(self.kinds) >= self.limits.files:
            raise SubmissionRefused(f"more than {self.limits.files} files and folders")
        self.kinds[parts] = kind

    def _copy(self, name: str, data: Readable, out: BinaryIO) -> None:
        budget = self.limits.unpacked_bytes
        while chunk := data.read(min(CHUNK, budget - self.unpacked + 1)):
            self.unpacked += len(chunk)
            if self.unpacked > budget:
                raise SubmissionRefused(
                    f"{shown(name)}: the archive unpacks to more than "
                    f"{self.limits.unpacked_mb:g} MB"
                )
            out.write(chunk)


def _unpack_zip(archive: IO[bytes], folder: Folder) -> None:
    with zipfile.ZipFile(archive) as bundle:
        entries = bundle.infolist()
        if len(entries) > folder.limits.files:
            raise SubmissionRefused(f"more than {folder.limits.files} files and folders")
        folder.declared(sum(e.file_size for e in entries))
        for entry in entries:
            mode = _zip_mode(entry)
            if entry.is_dir():
                folder.add_folder(entry.filename)
                continue
            folder.declared(entry.file_size, entry.filename)
            with bundle.open(entry) as data:
                folder.add_file(entry.filename, data, executable=bool(mode & 0o111))


def _zip_mode(entry: zipfile.ZipInfo) -> int:
    """The entry's Unix mode (0 when the zip gives none), refused when it is not a plain file
    or folder, or the entry is encrypted or compressed in a way inflated without a bound."""
    name = entry.filename
    if entry.flag_bits & 0x1:
        raise SubmissionRefused(f"{shown(name)}: an encrypted entry")
    if entry.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise SubmissionRefused(
            f"{shown(name)}: compressed with method {entry.compress_type}; "
            "only stored and deflate are taken"
        )
    mode = entry.external_attr >> 16 if entry.create_system == 3 else 0
    kind = stat.S_IFMT(mode)
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise SubmissionRefused(f"{shown(name)}: {_KINDS.get(kind, 'not a file or folder')}")
    _refuse_special_bits(name, mode)
    return mode


_KINDS = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
}


def _refuse_special_bits(name: str, mode: int) -> None:
    if mode & (stat.S_ISUID | stat.S_ISGID):
        raise SubmissionRefused(f"{shown(name)}: a setuid or setgid bit")


def _unpack_tar(archive: IO[bytes], folder: Folder) -> None:
    limits = folder.limits
    cap = limits.unpacked_bytes + TAR_OVERHEAD_PER_ENTRY * limits.files + TAR_OVERHEAD
    with gzip.GzipFile(fileobj=archive, mode="rb") as inflated:
        capped = CappedReader(inflated, cap, limits)
        # "r|": a stream, read once from the start; nothing seeks back to re-read a member.
        with tarfile.open(fileobj=capped, mode="r|") as tar:  # type: ignore[call-overload]
            for member in tar:
                _tar_member(tar, member, folder)


def _tar_member(tar: tarfile.TarFile, member: tarfile.TarInfo, folder: Folder) -> None:
    name = member.name
    if member.issym() or member.islnk():
        raise SubmissionRefused(f"{shown(name)}: a {'symbolic' if member.issym() else 'hard'} link")
    if member.sparse is not None or member.type == tarfile.GNUTYPE_SPARSE:
        raise SubmissionRefused(f"{shown(name)}: a sparse file")
    if not (member.isreg() or member.isdir()):
        raise SubmissionRefused(f"{shown(name)}: {_tar_kind(member)}")
    _refuse_special_bits(name, member.mode)
    folder.parts(name)  # ours first: the filter's messages name server paths
    try:  # and the standard library's own rules, as a second opinion
        tarfile.data_filter(member, str(folder.root))
    except tarfile.FilterError as exc:
        raise SubmissionRefused(f"{shown(name)}: refused ({type(exc).__name__})") from None
    if member.isdir():
        folder.add_folder(name)
        return
    folder.declared(member.size, name)
    data = tar.extractfile(member)
    assert data is not None  # a regular member always has its data
    folder.add_file(name, data, executable=bool(member.mode & 0o111))


def _tar_kind(member: tarfile.TarInfo) -> str:
    if member.ischr():
        return "a character device"
    if member.isblk():
        return "a block device"
    if member.isfifo():
        return "a FIFO"
    return f"not a file or folder (tar type {member.type!r})"


class CappedReader:
    """A stream that refuses to give more than cap bytes in all: under a tar, the inflated
    gzip, headers included, so no header of the author's can be read whole into memory."""

    def __init__(self, inner: Readable, cap: int, limits: SubmissionLimits) -> None:
        self.inner = inner
        self.cap = cap
        self.limits = limits
        self.given = 0

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > self.cap - self.given + 1:
            size = self.cap - self.given + 1
        data = self.inner.read(size)
        self.given += len(data)
        if self.given > self.cap:
            raise SubmissionRefused(
                f"the archive unpacks to more than {self.limits.unpacked_mb:g} MB"
            )
        return data


def shown(name: str) -> str:
    """A name from the archive as a message may show it: quoted, escaped, at most 80 long."""
    text = repr(name)
    return text if len(text) <= 80 else text[:77] + "..."


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]
