"""The folder a build writes: a fresh working copy of the stored version, on a disk of its own,
and what is kept of it afterwards.

Under a root referee the working copy is a tmpfs mounted at its place, of the build's disk
limit in bytes and in files, owned by the build's uid: a build that fills it gets ENOSPC, and
the host's disk never sees a byte of it. After the build (every process of it gone) what it
made is copied out to the same path on the real disk, checked first: only files, folders and
links that stay inside; its size counted as a copy would take it (a sparse or hard-linked file
whole), within the limit. An ordinary user's referee cannot mount: the copy is on the real
disk, each file the build writes is bounded by RLIMIT_FSIZE, and the whole is checked after.

What is kept belongs to the referee's user, written by no one else, readable by all (the bot,
later, is another uid, and the sandbox shows it only its own folder): folders 0755, files 0644
or 0755, no setuid bit.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024
COPY_SUFFIX = ".copy"


class DiskError(Exception):
    """The working copy cannot be made or kept; the message says why, in plain words."""


@dataclass(frozen=True)
class BuildDisk:
    """The build's folder, and whether it is a tmpfs of its own (root) or on the real disk."""

    folder: Path
    mounted: bool
    limit_bytes: int
    limit_files: int

    def full(self) -> bool:
        """A tmpfs with no block or no inode left: the build has filled its disk."""
        if not self.mounted:
            return False
        try:
            info = os.statvfs(self.folder)
        except OSError:
            return False
        return info.f_bavail == 0 or info.f_favail == 0

    def file_cut(self) -> bool:
        """On the real disk: a file of the build has reached RLIMIT_FSIZE (disk_mb), so a
        write past it failed (EFBIG: Python, the wrapper, leaves SIGXFSZ ignored)."""
        if self.mounted:
            return False
        for root, _, names in os.walk(self.folder):
            for name in names:
                info = os.lstat(os.path.join(root, name))
                if stat.S_ISREG(info.st_mode) and info.st_size >= self.limit_bytes:
                    return True
        return False


def clear(output: Path) -> None:
    """Remove what an earlier build left at output, even a tmpfs still mounted there (a
    referee killed during a build leaves one)."""
    for leftover in (output / "bot", output / f"bot{COPY_SUFFIX}"):
        if os.path.ismount(leftover):
            subprocess.run(["umount", "-l", str(leftover)], capture_output=True, check=False)
    shutil.rmtree(output, ignore_errors=True)


def make_disk(source: Path, output: Path, disk_mb: int, files: int, uid: int | None) -> BuildDisk:
    """output/bot: the stored version copied into a tmpfs of disk_mb and `files` inodes
    owned by uid (root), or into a plain folder (uid None: the referee's own user)."""
    folder = output / "bot"
    try:
        folder.mkdir(mode=0o700)
    except OSError as exc:
        raise DiskError(f"cannot make the build's folder: {exc}") from None
    mounted = uid is not None
    if uid is not None:
        options = f"size={disk_mb}m,nr_inodes={files},mode=0755,uid={uid},gid={uid},nosuid,nodev"
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise DiskError(f"cannot mount the build's disk: {done.stderr.strip()}")
    disk = BuildDisk(folder, mounted, disk_mb * MIB, files)
    try:
        shutil.copytree(source, folder, symlinks=True, dirs_exist_ok=True)
    except (OSError, shutil.Error) as exc:
        drop(disk)
        raise DiskError(
            f"the version does not fit on the build's disk of {disk_mb} MB: {exc}"
        ) from None
    # bwrap enters it as root without the right to pass modes: open to all, here; output,
    # above, is the referee's alone (0700), and keeps everyone else out of it.
    folder.chmod(0o755)
    if uid is not None:
        _give(folder, uid)
    return disk


def _give(folder: Path, uid: int) -> None:
    """Everything in folder to uid, links themselves and never what they lead to."""
    for root, dirs, names in os.walk(folder):
        for name in dirs + names:
            os.lchown(os.path.join(root, name), uid, uid)


def drop(disk: BuildDisk) -> None:
    """Throw the working copy away (a failed build)."""
    if disk.mounted:
        subprocess.run(["umount", "-l", str(disk.folder)], capture_output=True, check=False)
    shutil.rmtree(disk.folder, ignore_errors=True)


def keep(disk: BuildDisk) -> None:
    """Keep what the build made, at its folder: checked (DiskError why not, and nothing is
    kept), owned by the referee, read-only to everyone else. Call it only once every process
    of the build is gone: nothing may change the folder while it is checked and copied."""
    copy = disk.folder.with_name(disk.folder.name + COPY_SUFFIX)
    try:
        check(disk.folder, disk.limit_bytes, disk.limit_files)
        _settle(disk.folder, disk.folder, disk.folder if not disk.mounted else copy)
    except OSError as exc:
        shutil.rmtree(copy, ignore_errors=True)
        drop(disk)
        raise DiskError(f"cannot keep what the build made: {exc}") from None
    except DiskError:
        drop(disk)
        raise
    if disk.mounted:
        drop(disk)
        copy.rename(disk.folder)


def check(folder: Path, limit_bytes: int, limit_files: int) -> None:
    """What the build left must stay in its folder and fit its limits as a copy would take it:
    a hard link takes no inode of a tmpfs, and each is a file of its own once copied."""
    inside = folder.resolve()
    total = count = 0
    for root, dirs, names in os.walk(folder):
        count += len(dirs) + len(names)
        if count > limit_files:
            raise DiskError(
                f"the build made more than {limit_files} files and folders (hard links counted "
                "each), over its limit"
            )
        for name in dirs + names:
            path = Path(root, name)
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode) and not Path(os.path.realpath(path)).is_relative_to(
                inside
            ):
                where = path.relative_to(folder)
                raise DiskError(
                    f"the build left a link that leads out of its folder: {where} -> "
                    f"{os.readlink(path)}"
                )
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
    if total > limit_bytes:
        raise DiskError(
            f"the build made {total // MIB} MB of files (sparse and linked files counted "
            f"whole), over its disk limit of {limit_bytes // MIB} MB"
        )


def _settle(source: Path, top: Path, target: Path) -> None:
    """Copy source to target (or, when they are one, fix it in place): folders, files and
    links only, owned by the referee, folders 0755, files 0644 or 0755."""
    in_place = source == target
    for root, dirs, names in os.walk(source):
        here = target / Path(root).relative_to(top)
        if not in_place:
            here.mkdir(exist_ok=True)
        here.chmod(0o755)
        for name in dirs + names:
            _settle_entry(Path(root, name), here / name, in_place)


def _settle_entry(path: Path, to: Path, in_place: bool) -> None:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        if not in_place:
            os.symlink(os.readlink(path), to)
    elif stat.S_ISREG(info.st_mode):
        if not in_place:
            shutil.copyfile(path, to, follow_symlinks=False)
        to.chmod(0o755 if info.st_mode & 0o111 else 0o644)
    elif in_place and not stat.S_ISDIR(info.st_mode):  # a fifo, a socket: not kept
        with contextlib.suppress(OSError):
            path.unlink()
