"""Attacks by archive: each crafted archive is refused with one line naming what was wrong, and
nothing is stored; beside each, a CONTROL where the naive way (tarfile.extractall without a
filter, zipfile.extractall, a size read from a header, or our guard taken off) writes outside
its folder or inflates past the limit. Every control writes inside tmp_path only."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import ValidationError

from tests.tournaments.submissions.crafting import (
    GOOD,
    gzip_claimed_size,
    lying_gzip_size,
    regular,
    sparse_tar_gz,
    special,
    stored_names,
    tar_gz,
    total_size,
    zip_bytes,
)
from tournaments.submissions import unpacking
from tournaments.submissions.archive_rules import SubmissionLimits, SubmissionRefused
from tournaments.submissions.intake import accept

pytestmark = pytest.mark.timeout(60)
SMALL = SubmissionLimits(unpacked_mb=1, files=50)
BOMB_BYTES = 20_000_000  # 20 times SMALL's unpacked limit
Naive = Literal["fully_trusted", "data"]


def refused(archive: bytes, versions: Path, limits: SubmissionLimits = SMALL) -> str:
    """accept's one-line refusal; and nothing stored, nothing half unpacked."""
    with pytest.raises(SubmissionRefused) as caught:
        accept(archive, limits, versions)
    message = str(caught.value)
    assert "\n" not in message and message
    assert stored_names(versions) == []
    return message


def naive_tar(archive: bytes, into: Path, filter: Naive = "fully_trusted") -> None:
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        tar.extractall(into, filter=filter)


def test_the_control_archive_is_accepted(tmp_path: Path) -> None:
    """What every refusal below adds its attack to is itself accepted."""
    assert accept(tar_gz([]), SMALL, tmp_path / "v").manifest.python == "bot.py"
    assert accept(zip_bytes({}), SMALL, tmp_path / "w").manifest.python == "bot.py"


def test_zip_slip_in_a_tar_is_refused(tmp_path: Path) -> None:
    archive = tar_gz([regular("../escaped.txt", b"pwned")])
    assert refused(archive, tmp_path / "versions") == "'../escaped.txt': '..' in a path"
    assert not (tmp_path / "escaped.txt").exists()
    # CONTROL: tarfile without a filter writes beside its folder
    naive_tar(archive, tmp_path / "naive")
    assert (tmp_path / "escaped.txt").read_bytes() == b"pwned"


def test_zip_slip_in_a_zip_is_refused(tmp_path: Path) -> None:
    archive = zip_bytes({"sub/../../escaped.txt": b"pwned"})
    assert "'..' in a path" in refused(archive, tmp_path / "versions")
    # CONTROL: unzipping by the entry's name (as many hand-written unzippers do) escapes
    into = tmp_path / "naive"
    with zipfile.ZipFile(io.BytesIO(archive)) as bundle:
        for entry in bundle.infolist():
            target = into / entry.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(bundle.read(entry))
    assert (tmp_path / "escaped.txt").read_bytes() == b"pwned"


def test_an_absolute_path_is_refused(tmp_path: Path) -> None:
    assert refused(tar_gz([regular("/etc/x", b"pwned")]), tmp_path / "v") == (
        "'/etc/x': an absolute path"
    )
    outside = tmp_path / "outside" / "x"
    archive = tar_gz([regular(str(outside), b"pwned")])
    assert "an absolute path" in refused(archive, tmp_path / "versions")
    assert not outside.exists()
    # CONTROL: tarfile without a filter writes the absolute path as it is
    naive_tar(archive, tmp_path / "naive")
    assert outside.read_bytes() == b"pwned"


def test_a_symlink_to_etc_passwd_is_refused(tmp_path: Path) -> None:
    archive = tar_gz([special("passwd", tarfile.SYMTYPE, "/etc/passwd")])
    assert refused(archive, tmp_path / "versions") == "'passwd': a symbolic link"
    # CONTROL: tarfile without a filter makes the link, a way out of the folder
    naive_tar(archive, tmp_path / "naive")
    assert os.readlink(tmp_path / "naive" / "passwd") == "/etc/passwd"


def test_a_symlink_chain_leaving_the_folder_is_refused(tmp_path: Path) -> None:
    chain: list[tarfile.TarInfo | tuple[tarfile.TarInfo, bytes]] = [
        special("a", tarfile.SYMTYPE, "b"),
        special("b", tarfile.SYMTYPE, "c"),
        special("c", tarfile.SYMTYPE, ".."),
        regular("a/escaped.txt", b"pwned"),
    ]
    archive = tar_gz(chain)
    assert refused(archive, tmp_path / "versions") == "'a': a symbolic link"
    # CONTROL: each link alone looks near, the chain writes outside the folder
    naive_tar(archive, tmp_path / "naive" / "inner")
    assert (tmp_path / "naive" / "escaped.txt").read_bytes() == b"pwned"


def test_a_zip_symlink_is_refused(tmp_path: Path) -> None:
    archive = zip_bytes({"passwd": b"/etc/passwd"}, {"passwd": stat.S_IFLNK | 0o777})
    assert refused(archive, tmp_path / "versions") == "'passwd': a symbolic link"
    # CONTROL: the entry is a link by its Unix mode, as `unzip` would make it
    with zipfile.ZipFile(io.BytesIO(archive)) as bundle:
        assert stat.S_ISLNK(bundle.getinfo("passwd").external_attr >> 16)


def test_a_hard_link_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"the operator's")
    archive = tar_gz(
        [special("link", tarfile.LNKTYPE, str(secret)), regular("link", b"overwritten")]
    )
    assert refused(archive, tmp_path / "versions") == "'link': a hard link"
    assert secret.read_bytes() == b"the operator's"
    # CONTROL: tarfile without a filter links to the file, then writes through the link
    naive_tar(archive, tmp_path / "naive")
    assert secret.read_bytes() == b"overwritten"


@pytest.mark.parametrize(
    ("kind", "what"),
    [
        (tarfile.FIFOTYPE, "a FIFO"),
        (tarfile.CHRTYPE, "a character device"),
        (tarfile.BLKTYPE, "a block device"),
    ],
)
def test_a_device_or_fifo_is_refused(tmp_path: Path, kind: bytes, what: str) -> None:
    assert refused(tar_gz([special("node", kind)]), tmp_path / "versions") == f"'node': {what}"


def test_a_fifo_control(tmp_path: Path) -> None:
    """CONTROL: tarfile without a filter makes the FIFO (a reader of it would hang)."""
    naive_tar(tar_gz([special("node", tarfile.FIFOTYPE)]), tmp_path / "naive")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "naive" / "node").st_mode)


def test_a_sparse_file_is_refused(tmp_path: Path) -> None:
    archive = sparse_tar_gz("holes", BOMB_BYTES)
    assert len(archive) < 1000
    assert refused(archive, tmp_path / "versions") == "'holes': a sparse file"
    # CONTROL: a sparse member is a regular file to tarfile, whose data filter unpacks a
    # file of the size its header claims, from an archive of a few hundred bytes
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        assert tar.getmember("holes").isreg()
    naive_tar(archive, tmp_path / "naive", filter="data")
    assert (tmp_path / "naive" / "holes").stat().st_size == BOMB_BYTES


def test_a_setuid_file_is_refused(tmp_path: Path) -> None:
    archive = tar_gz([regular("tool", b"#!/bin/sh\n", mode=0o4755)])
    assert refused(archive, tmp_path / "versions") == "'tool': a setuid or setgid bit"
    zipped = zip_bytes({"tool": b"#!/bin/sh\n"}, {"tool": stat.S_IFREG | 0o2755})
    assert refused(zipped, tmp_path / "versions") == "'tool': a setuid or setgid bit"
    # CONTROL: tarfile without a filter keeps the bit
    naive_tar(archive, tmp_path / "naive")
    assert os.stat(tmp_path / "naive" / "tool").st_mode & stat.S_ISUID


def test_a_name_given_twice_is_refused(tmp_path: Path) -> None:
    archive = tar_gz([regular("bot.py", b"import os; os.system('evil')\n")])
    assert refused(archive, tmp_path / "versions") == "'bot.py': a path given twice"
    # CONTROL: unpacked naively, the second copy wins: what a reviewer read is not what runs
    naive_tar(archive, tmp_path / "naive")
    assert b"evil" in (tmp_path / "naive" / "bot.py").read_bytes()


def watched(monkeypatch: pytest.MonkeyPatch) -> list[unpacking.Folder]:
    """Every Folder unpack makes from here on, to see how much it read."""
    made: list[unpacking.Folder] = []
    real = unpacking.Folder.__init__

    def init(self: unpacking.Folder, *args: Any) -> None:
        real(self, *args)
        made.append(self)

    monkeypatch.setattr(unpacking.Folder, "__init__", init)
    return made


def test_a_tar_bomb_declared_small_is_stopped_while_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 20 MB file of zeros, its gzip trailer claiming 1,000 bytes. Even with the header
    check off, the bytes counted as they are read stop it at the limit."""
    bomb = lying_gzip_size(tar_gz([regular("zeros", bytes(BOMB_BYTES))]), 1000)
    assert len(bomb) < 100_000 and gzip_claimed_size(bomb) == 1000
    message = refused(bomb, tmp_path / "versions")
    assert message == "'zeros': the archive unpacks to more than 1 MB"
    readers: list[unpacking.CappedReader] = []
    capped = unpacking.CappedReader

    def recorded(*args: object) -> unpacking.CappedReader:
        reader = capped(*args)  # type: ignore[arg-type]
        readers.append(reader)
        return reader

    monkeypatch.setattr(unpacking.Folder, "declared", lambda *_: None)
    monkeypatch.setattr(unpacking, "CappedReader", recorded)
    folders = watched(monkeypatch)
    assert refused(bomb, tmp_path / "versions") == message
    assert folders[0].unpacked <= SMALL.unpacked_bytes + 1
    assert readers[0].given < SMALL.unpacked_bytes + 2 * unpacking.CHUNK + 20_000
    # CONTROL: the trailer's word passes a naive check, and the data filter bounds no size
    assert gzip_claimed_size(bomb) < SMALL.unpacked_bytes
    naive_tar(bomb, tmp_path / "naive", filter="data")
    assert total_size(tmp_path / "naive") >= BOMB_BYTES


def test_many_small_files_over_the_size_are_counted(tmp_path: Path) -> None:
    """No file alone is over the limit; their sum is."""
    archive = tar_gz([regular(f"f{i}", bytes(300_000)) for i in range(4)])
    assert refused(archive, tmp_path / "versions") == "'f3': the archive unpacks to more than 1 MB"
    # CONTROL: unpacked naively, the folder is over the limit
    naive_tar(archive, tmp_path / "naive", filter="data")
    assert total_size(tmp_path / "naive") > SMALL.unpacked_bytes


def test_a_zip_bomb_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = zip_bytes({"zeros": bytes(BOMB_BYTES)})
    assert len(bomb) < 100_000  # a ratio of over 200 to 1
    assert refused(bomb, tmp_path / "versions") == "the archive unpacks to more than 1 MB"
    # with the header checks off, the bytes read stop it all the same, at the limit
    monkeypatch.setattr(unpacking.Folder, "declared", lambda *_: None)
    folders = watched(monkeypatch)
    assert "unpacks to more than 1 MB" in refused(bomb, tmp_path / "versions")
    assert folders[0].unpacked <= SMALL.unpacked_bytes + 1
    # CONTROL: zipfile.extractall inflates it all
    with zipfile.ZipFile(io.BytesIO(bomb)) as bundle:
        bundle.extractall(tmp_path / "naive")
    assert total_size(tmp_path / "naive") >= BOMB_BYTES


def test_a_zip_whose_directory_lies_about_sizes_is_refused(tmp_path: Path) -> None:
    """The central directory says 10 bytes; the data inflates to 20 MB."""
    bomb = bytearray(zip_bytes({"zeros": bytes(BOMB_BYTES)}))
    at = bytes(bomb).rindex(b"PK\x01\x02")  # the central directory's entry for "zeros"
    bomb[at + 24 : at + 28] = (10).to_bytes(4, "little")  # its uncompressed size
    message = refused(bytes(bomb), tmp_path / "versions")
    assert message.startswith("not a valid zip archive: ")
    # CONTROL: inflating the entry's data as it is, without the directory's word, is the bomb
    with zipfile.ZipFile(io.BytesIO(bytes(bomb))) as bundle:
        entry = bundle.getinfo("zeros")
        assert entry.file_size == 10
        raw = bytes(bomb)[entry.header_offset + 30 + len("zeros") :][: entry.compress_size]
    import zlib

    assert len(zlib.decompressobj(-15).decompress(raw)) == BOMB_BYTES


def test_too_many_files_are_refused(tmp_path: Path) -> None:
    archive = tar_gz([regular(f"f{i}", b"x") for i in range(SMALL.files)])
    assert refused(archive, tmp_path / "versions") == "more than 50 files and folders"
    zipped = zip_bytes({f"f{i}": b"x" for i in range(SMALL.files)})
    assert refused(zipped, tmp_path / "versions") == "more than 50 files and folders"
    # CONTROL: unpacked naively, all of them are made
    naive_tar(archive, tmp_path / "naive", filter="data")
    assert len(list((tmp_path / "naive").iterdir())) > SMALL.files


def test_an_archive_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    archive = tar_gz([regular("noise.bin", os.urandom(30_000))])
    limits = SubmissionLimits(archive_mb=0.02)
    assert refused(archive, tmp_path / "versions", limits) == "the archive is over 0.02 MB"
    path = tmp_path / "upload.tar.gz"
    path.write_bytes(archive)
    with pytest.raises(SubmissionRefused, match=r"over 0\.02 MB"):
        accept(path, limits, tmp_path / "versions")
    # CONTROL: under a larger limit the same archive is taken
    assert accept(path, SubmissionLimits(archive_mb=0.05), tmp_path / "ok").fresh


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("a/" * 17 + "deep.txt", "a path more than 16 folders deep"),
        ("d" * 200 + "/" + "n" * 55, "a path longer than 255 characters"),
        ("\u00f1" * 128, "a name over 255 bytes in a path"),  # 128 characters, 256 bytes
        ("back\\slash", "a backslash or control character in a path"),
        ("new\nline", "a backslash or control character in a path"),
        ("\udcff.txt", "a path not in UTF-8"),  # the byte 0xff, as tarfile reads it
    ],
)
def test_a_bad_name_is_refused(tmp_path: Path, name: str, why: str) -> None:
    assert refused(tar_gz([regular(name, b"x")]), tmp_path / "versions").endswith(why)


def test_a_long_name_control(tmp_path: Path) -> None:
    """CONTROL: the limits are the operator's: raised, the same names are taken."""
    archive = tar_gz(
        [regular("a/" * 17 + "deep.txt", b"x"), regular("d" * 200 + "/" + "n" * 99, b"x")]
    )
    assert accept(archive, SubmissionLimits(depth=20, name_chars=300), tmp_path / "v").fresh


@pytest.mark.parametrize(
    "archive",
    [b"python = 'bot.py'\n", b"", b"PK\x05", b"\x1f\x8bnot gzip at all", b"\x1f\x8b" + bytes(100)],
)
def test_not_an_archive_is_refused(tmp_path: Path, archive: bytes) -> None:
    message = refused(archive, tmp_path / "versions")
    assert message.startswith(("not a .tar.gz or .zip", "not a valid tar.gz archive"))


def test_a_plain_tar_is_told_by_content_not_name(tmp_path: Path) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in GOOD.items():
            info, body = regular(name, data)
            tar.addfile(info, io.BytesIO(body))
    path = tmp_path / "bot.tar.gz"  # the name says gzip, the bytes do not
    path.write_bytes(raw.getvalue())
    assert refused(path.read_bytes(), tmp_path / "versions").startswith("not a .tar.gz or .zip")
    zipped = tmp_path / "bot.tar.gz.png"  # a zip, whatever its name
    zipped.write_bytes(zip_bytes({}))
    assert accept(zipped, SMALL, tmp_path / "ok").manifest.python == "bot.py"


def test_only_stored_and_deflate_are_taken(tmp_path: Path) -> None:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_BZIP2) as bundle:
        for name, data in GOOD.items():
            bundle.writestr(name, data)
    assert refused(raw.getvalue(), tmp_path / "versions") == (
        "'arena-bot.toml': compressed with method 12; only stored and deflate are taken"
    )


def test_the_limits_are_a_strict_toml_table() -> None:
    table = tomllib.loads("[submissions]\narchive_mb = 5\nfiles = 100\n")["submissions"]
    limits = SubmissionLimits.model_validate(table)
    assert (limits.archive_bytes, limits.files, limits.unpacked_mb) == (5_000_000, 100, 50)
    for bad in ({"archive_mb": 0}, {"files": -1}, {"archive_mb": float("nan")}, {"filez": 3}):
        with pytest.raises(ValidationError):
            SubmissionLimits.model_validate(bad)
