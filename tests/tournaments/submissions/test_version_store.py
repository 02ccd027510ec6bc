"""The versions folder: named by the content hash as docs/contest.md defines it, the same
contents stored once, every stored file read-only, and a store interrupted at any point (an
exception, or kill -9 of the process) leaving no version folder behind. And the author's
packer: the same folder gives the same bytes and the same hash."""

from __future__ import annotations

import hashlib
import io
import os
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.tournaments.submissions.crafting import (
    BOT,
    GOOD,
    MANIFEST,
    regular,
    stored_names,
    tar_gz,
    write_folder,
    zip_bytes,
)
from tournaments.submissions import intake, unpacking
from tournaments.submissions.archive_rules import SubmissionLimits, SubmissionRefused
from tournaments.submissions.content_hash import content_hash
from tournaments.submissions.intake import accept, stored_version, sweep_incoming
from tournaments.submissions.packer import archive_bytes, pack_folder

pytestmark = pytest.mark.timeout(60)
LIMITS = SubmissionLimits()
ROOT = Path(__file__).resolve().parents[3]
SYSTEM_PYTHON = "/usr/bin/python3"  # one an unprivileged uid may run (the venv may be closed)


def by_the_definition(files: dict[str, bytes], executable: set[str], folders: set[str]) -> str:
    """The hash as docs/contest.md defines it, computed apart from the product's code."""
    records = [(f.encode(), b"D " + f.encode() + b"\0") for f in folders]
    for name, data in files.items():
        kind = b"X " if name in executable else b"F "
        record = kind + name.encode() + b"\0" + str(len(data)).encode() + b"\0" + data
        records.append((name.encode(), record))
    return hashlib.sha256(b"".join(record for _, record in sorted(records))).hexdigest()


def test_the_hash_is_the_documented_one(tmp_path: Path) -> None:
    files = {**GOOD, "lib/util.py": b"X = 1\n", "lib.txt": b"", "run.sh": b"#!/bin/sh\n"}
    folder = write_folder(tmp_path / "bot", files, executable={"run.sh"})
    expected = by_the_definition(files, {"run.sh"}, {"lib"})
    assert content_hash(folder) == expected
    stored = accept(pack_folder(folder), LIMITS, tmp_path / "versions")
    assert stored.hash == expected and stored.folder == tmp_path / "versions" / expected


def test_the_same_contents_are_stored_once_under_one_hash(tmp_path: Path) -> None:
    versions = tmp_path / "versions"
    first = accept(tar_gz([]), LIMITS, versions)
    # the same files as a zip, in another order, under one top folder, with other times
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as bundle:
        for name in reversed(list(GOOD)):
            bundle.writestr(zipfile.ZipInfo(f"mybot/{name}", (2001, 2, 3, 4, 5, 6)), GOOD[name])
    again = accept(raw.getvalue(), LIMITS, versions)
    assert (again.hash, again.fresh, first.fresh) == (first.hash, False, True)
    assert stored_names(versions) == [first.hash]
    # CONTROL: one byte, or one execute bit, more is another version
    changed = accept(
        tar_gz([regular("arena-bot.toml", MANIFEST), regular("bot.py", BOT + b"\n")], False),
        LIMITS,
        versions,
    )
    executable = accept(tar_gz([regular("x", b"", mode=0o755)]), LIMITS, versions)
    plain = accept(tar_gz([regular("x", b"", mode=0o644)]), LIMITS, versions)
    assert len({first.hash, changed.hash, executable.hash, plain.hash}) == 4


def test_stored_files_are_read_only(tmp_path: Path) -> None:
    archive = tar_gz([regular("lib/run.sh", b"#!/bin/sh\n", mode=0o750), regular("d/e/f", b"")])
    stored = accept(archive, LIMITS, tmp_path / "versions")
    modes = {
        str(p.relative_to(stored.folder)): stat.S_IMODE(p.lstat().st_mode)
        for p in [stored.folder, *stored.folder.rglob("*")]
    }
    assert modes == {
        ".": 0o555,
        "arena-bot.toml": 0o444,
        "bot.py": 0o444,
        "lib": 0o555,
        "lib/run.sh": 0o555,
        "d": 0o555,
        "d/e": 0o555,
        "d/e/f": 0o444,
    }
    assert stat.S_IMODE((tmp_path / "versions").stat().st_mode) == 0o700


def writes(path: Path, uid: int) -> bytes:
    """What a process as uid gets when it opens path to append: b"" when it may."""
    probe = "import sys; open(sys.argv[1], 'ab')"
    done = subprocess.run(
        [SYSTEM_PYTHON, "-c", probe, str(path)], user=uid, capture_output=True, timeout=30
    )
    return done.stderr


def test_a_stored_file_is_not_written_even_by_its_owner() -> None:
    """As a ladder run by an ordinary user: its own versions are read-only to it (root, as
    the tests run, writes anything). In a folder of /tmp: tmp_path's parents are root's."""
    owner = 65534
    top = Path(tempfile.mkdtemp(prefix="arena-versions-"))
    try:
        stored = accept(tar_gz([]), LIMITS, top / "versions")
        target = stored.folder / "bot.py"
        for path in [top, top / "versions", stored.folder, target]:
            os.chown(path, owner, owner, follow_symlinks=False)
        assert b"PermissionError" in writes(target, owner)
        os.chmod(target, 0o644)  # CONTROL: writable, the same owner writes it
        assert writes(target, owner) == b""
    finally:
        intake.discard(top)


def test_a_stored_version_is_found_by_its_hash_only(tmp_path: Path) -> None:
    versions = tmp_path / "versions"
    stored = accept(tar_gz([]), LIMITS, versions)
    assert stored_version(versions, stored.hash).manifest == stored.manifest
    for bad in ["../versions", stored.hash[:63], stored.hash.upper(), "a" * 64]:
        with pytest.raises(SubmissionRefused, match="no stored version"):
            stored_version(versions, bad)


@pytest.mark.parametrize("where", ["unpacking", "sealing", "renaming"])
def test_an_interrupted_store_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    versions = tmp_path / "versions"
    archive = tar_gz([regular(f"f{i}", b"x") for i in range(5)])

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt  # not an Exception: what a signal or Ctrl-C raises

    with monkeypatch.context() as patched:
        if where == "unpacking":
            calls = iter(range(100))
            real = unpacking.Folder.add_file

            def add_file(self: unpacking.Folder, *args: Any, **kwargs: Any) -> None:
                if next(calls) == 3:
                    interrupted()
                real(self, *args, **kwargs)

            patched.setattr(unpacking.Folder, "add_file", add_file)
        elif where == "sealing":
            patched.setattr(intake, "_sync", interrupted)
        else:
            patched.setattr(os, "rename", interrupted)
        with pytest.raises(KeyboardInterrupt):
            accept(archive, LIMITS, versions)
    assert stored_names(versions) == []
    # CONTROL: uninterrupted, the same archive is stored
    assert stored_names(versions) == [] and accept(archive, LIMITS, versions).fresh
    assert len(stored_names(versions)) == 1


SLOW_ACCEPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from tournaments.submissions import unpacking
    from tournaments.submissions.archive_rules import SubmissionLimits
    from tournaments.submissions.intake import accept

    real = unpacking.Folder.add_file
    def add_file(self, *args, **kwargs):
        real(self, *args, **kwargs)
        Path(sys.argv[2]).touch()
        time.sleep(60)
    unpacking.Folder.add_file = add_file
    accept(Path(sys.argv[1]), SubmissionLimits(), Path(sys.argv[3]))
    """
)


def test_kill_9_in_the_middle_leaves_no_version(tmp_path: Path) -> None:
    versions = tmp_path / "versions"
    upload = tmp_path / "upload.tar.gz"
    upload.write_bytes(tar_gz([regular(f"f{i}", b"x") for i in range(5)]))
    started = tmp_path / "started"
    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_ACCEPT, str(upload), str(started), str(versions)], cwd=ROOT
    )
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert started.exists()
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    left = stored_names(versions)
    # CONTROL: the killed store did leave its half-unpacked folder, which the sweep removes
    assert len(left) == 1 and left[0].startswith(intake.INCOMING_PREFIX)
    assert sweep_incoming(versions) == left
    assert stored_names(versions) == []
    assert accept(upload, LIMITS, versions).fresh


def test_the_packer_gives_the_same_bytes_for_the_same_folder(tmp_path: Path) -> None:
    files = {**GOOD, "data/weights.bin": os.urandom(1000), "run.sh": b"#!/bin/sh\n"}
    folder = write_folder(tmp_path / "bot", files, executable={"run.sh"})
    (folder / "empty").mkdir()
    first = pack_folder(folder)
    os.utime(folder / "bot.py", (1, 1))  # another time, owner-only modes: the same archive
    (folder / "bot.py").chmod(0o600)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"cache")
    (folder / ".git").mkdir()
    assert pack_folder(folder) == first == archive_bytes(folder)
    stored = accept(first, LIMITS, tmp_path / "versions")
    assert stored.hash == content_hash(folder, frozenset({"__pycache__", ".git"}))
    with tarfile.open(fileobj=io.BytesIO(first)) as tar:
        members = tar.getmembers()
    assert [m.name for m in members] == sorted(m.name for m in members)
    assert {(m.mtime, m.uid, m.gid, m.uname) for m in members} == {(0, 0, 0, "")}
    # CONTROL: one byte more in one file is another archive and another hash
    (folder / "bot.py").write_bytes(BOT + b"#")
    assert pack_folder(folder) != first
    assert content_hash(folder, frozenset({"__pycache__", ".git"})) != stored.hash


def test_the_packer_refuses_a_link_and_a_folder_without_manifest(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "bot", GOOD)
    (folder / "passwd").symlink_to("/etc/passwd")
    with pytest.raises(SubmissionRefused, match="'passwd': a symbolic link"):
        pack_folder(folder)
    (folder / "passwd").unlink()
    assert pack_folder(folder)  # CONTROL: without the link it packs
    (folder / "arena-bot.toml").unlink()
    with pytest.raises(SubmissionRefused, match=r"no arena-bot\.toml"):
        pack_folder(folder)
    archive = tmp_path / "bot.zip"
    archive.write_bytes(zip_bytes({}))
    assert archive_bytes(archive) == archive.read_bytes()  # an archive goes as it is


@pytest.mark.timeout(120)
def test_how_long_accepting_10_mb_of_2000_files_takes(tmp_path: Path) -> None:
    """A figure, printed (run with -s): no timed assert on a shared machine."""
    files = {**GOOD, **{f"d{i % 20}/f{i}.bin": os.urandom(4_900) for i in range(1958)}}
    folder = write_folder(tmp_path / "bot", files)
    archive = pack_folder(folder)
    assert 9_000_000 < len(archive) <= LIMITS.archive_bytes
    began = time.perf_counter()
    stored = accept(archive, LIMITS, tmp_path / "versions")
    took = time.perf_counter() - began
    count = sum(1 for _ in stored.folder.rglob("*"))
    assert count == 1960 + 20 and stored.hash == content_hash(folder)
    print(f"\naccepted {len(archive) / 1e6:.1f} MB, {count} files and folders in {took:.2f} s")


def test_a_racing_twin_stores_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes accept the same contents at once: the second rename finds the first's
    folder, keeps it, and leaves nothing of its own."""
    versions = tmp_path / "versions"
    expected = accept(tar_gz([]), LIMITS, tmp_path / "first").hash
    real_seal = intake._seal

    def twin_stores_meanwhile(folder: Path) -> None:
        real_seal(folder)
        (versions / expected).mkdir()
        (versions / expected / "the twin's").write_bytes(b"")

    monkeypatch.setattr(intake, "_seal", twin_stores_meanwhile)
    stored = accept(tar_gz([]), LIMITS, versions)
    assert (stored.hash, stored.fresh) == (expected, False)
    assert stored_names(versions) == [expected]
    assert [p.name for p in (versions / expected).iterdir()] == ["the twin's"]


def test_an_upload_spooled_to_a_stream_is_taken_from_its_start(tmp_path: Path) -> None:
    """As a web framework hands an upload over: a seekable stream, maybe read already."""
    with tempfile.SpooledTemporaryFile(max_size=1000) as upload:
        upload.write(zip_bytes({"noise": os.urandom(3000)}))  # rolled over to a file
        stored = accept(upload, LIMITS, tmp_path / "versions")
        assert stored.fresh and (stored.folder / "noise").stat().st_size == 3000
        # CONTROL: the same stream over a smaller limit is refused, having stored nothing
        with pytest.raises(SubmissionRefused, match=r"over 0\.001 MB"):
            accept(upload, SubmissionLimits(archive_mb=0.001), tmp_path / "small")
    assert stored_names(tmp_path / "small") == []
