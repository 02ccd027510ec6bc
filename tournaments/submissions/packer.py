"""The author's side: a bot's folder packed as a .tar.gz, the same bytes every time for the
same files, so the same folder always gets the same version hash.

The archive holds every file and folder under the folder (the manifest at its root), but
never `.git` or `__pycache__` folders (PACK_SKIPS); in the order of content_hash.py, with
times 0, owner and group 0 and no names, modes 0755 (folders, and files with an execute bit)
or 0644, and a gzip header without a name or time. A link or any other special file in the
folder is refused, as the ladder would refuse it.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
from pathlib import Path

from tournaments.submissions.archive_rules import SubmissionRefused
from tournaments.submissions.content_hash import entries
from tournaments.submissions.manifest import MANIFEST_FILE

PACK_SKIPS = frozenset({".git", "__pycache__"})


def pack_folder(folder: Path) -> bytes:
    """The folder as a deterministic .tar.gz, or SubmissionRefused (no manifest, a link)."""
    if not (folder / MANIFEST_FILE).is_file():
        raise SubmissionRefused(f"no {MANIFEST_FILE} in {folder}")
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, kind in entries(folder, PACK_SKIPS):
            _add(tar, folder / path, path, kind)
    return gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)


def archive_bytes(path: Path) -> bytes:
    """What `arena author submit` sends for PATH: a folder packed, or an archive as it is."""
    if path.is_dir():
        return pack_folder(path)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SubmissionRefused(f"cannot read {path}: {exc.strerror}") from None


def _add(tar: tarfile.TarFile, path: Path, name: str, kind: str) -> None:
    info = tarfile.TarInfo(name)
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if kind == "D":
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        tar.addfile(info)
        return
    info.mode = 0o755 if kind == "X" else 0o644
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    with os.fdopen(os.open(path, flags), "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise SubmissionRefused(f"{name!r}: not a file")
        info.size = os.fstat(file.fileno()).st_size
        tar.addfile(info, file)
