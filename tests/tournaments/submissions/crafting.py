"""Archives written for the tests: honest ones with tarfile and zipfile, and crafted ones whose
entries no honest packer would write (links, devices, `..`, lying sizes)."""

from __future__ import annotations

import gzip
import io
import struct
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

MANIFEST = b'python = "bot.py"\n'
BOT = b"from arena_sdk import Bot as _Bot\n\n\nclass Bot(_Bot):\n    pass\n"
GOOD = {"arena-bot.toml": MANIFEST, "bot.py": BOT}


def regular(name: str, data: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    return info, data


def special(name: str, kind: bytes, linkname: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    """A link, device or FIFO entry."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.mode = mode
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3
    return info


def tar_gz(
    members: Iterable[tarfile.TarInfo | tuple[tarfile.TarInfo, bytes]],
    with_good: bool = True,
) -> bytes:
    """A .tar.gz of the members, after the good bot's files when with_good."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        if with_good:
            for name, data in GOOD.items():
                info, body = regular(name, data)
                tar.addfile(info, io.BytesIO(body))
        for member in members:
            if isinstance(member, tuple):
                tar.addfile(member[0], io.BytesIO(member[1]))
            else:
                tar.addfile(member)
    return raw.getvalue()


def zip_bytes(
    files: dict[str, bytes], modes: dict[str, int] | None = None, with_good: bool = True
) -> bytes:
    """A zip (deflated) of the files, Unix modes from modes (st_mode, type bits included)."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name, data in {**(GOOD if with_good else {}), **files}.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = (modes or {}).get(name, 0o100644) << 16
            bundle.writestr(info, data)
    return raw.getvalue()


def lying_gzip_size(archive: bytes, claimed: int) -> bytes:
    """The .tar.gz with its gzip trailer's size (ISIZE) saying claimed bytes."""
    return archive[:-4] + struct.pack("<I", claimed)


def gzip_claimed_size(archive: bytes) -> int:
    """What a naive check reads as the inflated size: the gzip trailer's last four bytes."""
    return int(struct.unpack("<I", archive[-4:])[0])


def write_folder(root: Path, files: dict[str, bytes], executable: Iterable[str] = ()) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o755 if name in set(executable) else 0o644)
    return root


def total_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def stored_names(versions: Path) -> list[str]:
    """Everything in the versions folder: a refusal leaves it empty (or absent)."""
    return sorted(p.name for p in versions.iterdir()) if versions.exists() else []


def sparse_tar_gz(name: str, real_size: int) -> bytes:
    """A .tar.gz holding the good bot and a GNU sparse member of no data whose header says
    it unpacks to real_size bytes (holes): tarfile writes no such thing, so its header is
    patched by hand."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for good, data in GOOD.items():
            info, body = regular(good, data)
            tar.addfile(info, io.BytesIO(body))
        tar.addfile(special(name, tarfile.GNUTYPE_SPARSE))
    blocks = bytearray(raw.getvalue())
    at = bytes(blocks).index(name.encode() + b"\0")  # the member's header block
    header = blocks[at : at + 512]
    header[483:495] = b"%011o\0" % real_size  # GNU's "realsize"
    header[148:156] = b" " * 8  # the checksum, counted as spaces
    header[148:156] = b"%06o\0 " % sum(header)
    blocks[at : at + 512] = header
    return gzip.compress(bytes(blocks))
