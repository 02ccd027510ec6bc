"""Sandbox tiers for bot processes: what a bot may use, and the command line that enforces it.

Tiers, weakest first (docs/sandbox.md says what each one does and does not stop):
- none: the bot runs as the referee's own user, with everything that user has.
- rlimits: kernel resource limits (CPU time, address space, processes, open files, no core
  dumps), set by a tiny wrapper (referee/sandbox_exec.py) that then execs the bot.
- bubblewrap: the rlimits, plus namespaces: no network, a read-only view of the filesystem with
  a private /tmp, its own process tree, no capabilities, and the referee reached only through a
  Unix socket bound into the sandbox.
- docker: a container with no network, a read-only root, a private /tmp and cgroup limits,
  started through the docker SDK (see referee/sandbox_docker.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

EXEC_WRAPPER = Path(__file__).with_name("sandbox_exec.py")
NOBODY = "65534"

# What a confined bot keeps of the referee's environment: enough to find Python and its
# packages, nothing that might hold the referee's secrets.
KEPT_ENV = frozenset(
    {"PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "VIRTUAL_ENV"}
    | {"ARENA_ADDRESS", "ARENA_TOKEN"}
)


class Tier(StrEnum):
    NONE = "none"
    RLIMITS = "rlimits"
    BUBBLEWRAP = "bubblewrap"
    DOCKER = "docker"


class SandboxError(Exception):
    """A sandbox that cannot be set up here: a missing tool, no engine, no Unix socket."""


class Sandbox(BaseModel):
    """How one bot process is confined; chosen per tournament or match."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tier: Tier = Tier.NONE
    cpu_seconds: int = Field(
        default=3600, ge=1, description="CPU time for the bot process's whole life, all matches"
    )
    memory_mb: int = Field(
        default=1024, ge=64, description="address space (rlimits, bubblewrap) or memory (docker)"
    )
    processes: int = Field(default=512, ge=1, description="processes and threads")
    open_files: int = Field(default=256, ge=16, description="open file descriptors")
    tmp_mb: int = Field(default=64, ge=1, description="size of the private /tmp")
    image: str = Field(
        default="python:3.11-slim", description="docker: an image with Python, arena-sdk, the bot"
    )
    cpus: float = Field(default=1.0, gt=0, description="docker: CPU share")
    user: str = Field(default=f"{NOBODY}:{NOBODY}", description="docker: uid:gid in the container")
    hidden: tuple[Path, ...] = Field(
        default=(), description="folders the bot must not read (replays, databases)"
    )

    @property
    def needs_unix_socket(self) -> bool:
        """The bot has no network: the referee must give it a unix: address."""
        return self.tier in (Tier.BUBBLEWRAP, Tier.DOCKER)

    def hiding(self, *folders: Path | None) -> Sandbox:
        """This sandbox with more folders kept out of the bot's sight."""
        extra = tuple(
            f.resolve() for f in folders if f is not None and f.resolve() not in self.hidden
        )
        return self.model_copy(update={"hidden": self.hidden + extra}) if extra else self


@dataclass(frozen=True)
class Launch:
    """What to run for a bot: the command line and its environment."""

    argv: tuple[str, ...]
    env: dict[str, str]


def confine(sandbox: Sandbox | None, argv: tuple[str, ...], env: dict[str, str]) -> Launch:
    """The command that runs argv inside the sandbox. env must hold ARENA_ADDRESS, which must
    be a unix: address for the tiers without network. The docker tier first checks that an
    engine answers: call it off the event loop."""
    if sandbox is None or sandbox.tier is Tier.NONE:
        return Launch(argv, env)
    if sandbox.tier is Tier.DOCKER:
        from referee.sandbox_docker import docker_launch  # the docker SDK only when used

        return docker_launch(sandbox, argv, env)
    kept = confined_env(env)
    if sandbox.tier is Tier.RLIMITS:
        return Launch(limits_argv(sandbox) + argv, kept)
    socket = unix_socket_path(env.get("ARENA_ADDRESS", ""))
    wrapped = limits_argv(sandbox) + bubblewrap_argv(sandbox, argv, socket.parent)
    return Launch(wrapped + argv, kept | {"HOME": "/tmp"})


def confined_env(env: dict[str, str]) -> dict[str, str]:
    kept = {k: v for k, v in env.items() if k in KEPT_ENV}
    # RLIMIT_AS counts reserved address space, and glibc reserves 64 MB for each thread's
    # malloc arena: a gRPC client's threads alone would reserve more than it ever uses.
    return kept | {"PYTHONUNBUFFERED": "1", "MALLOC_ARENA_MAX": "2", "PYTHONDONTWRITEBYTECODE": "1"}


def limits_argv(sandbox: Sandbox) -> tuple[str, ...]:
    """The wrapper that sets the resource limits, then execs what follows `--`."""
    return (
        sys.executable,
        "-I",
        str(EXEC_WRAPPER),
        "--cpu-seconds",
        str(sandbox.cpu_seconds),
        "--memory-mb",
        str(sandbox.memory_mb),
        "--processes",
        str(sandbox.processes),
        "--open-files",
        str(sandbox.open_files),
        "--",
    )


def bubblewrap_argv(
    sandbox: Sandbox, argv: tuple[str, ...], socket_folder: Path
) -> tuple[str, ...]:
    """bwrap with every namespace unshared (so no network), no capabilities, the filesystem
    read-only, a private /tmp, and the referee's socket folder bound in."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError(
            "the bubblewrap tier needs the bwrap command: install the bubblewrap package "
            "(apt-get install bubblewrap)"
        )
    args = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns"]
    # An unprivileged uid inside: when the referee runs as root, bwrap would otherwise hand
    # the bot root's full capabilities within its namespaces.
    args += ["--uid", NOBODY, "--gid", NOBODY, "--cap-drop", "ALL"]
    args += ["--die-with-parent", "--new-session", "--ro-bind", "/", "/"]
    args += ["--dev", "/dev", "--proc", "/proc"]
    args += ["--size", str(sandbox.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp"]
    for folder in _under_tmp([socket_folder, Path.cwd(), *path_folders(argv)]):
        args += ["--ro-bind", str(folder), str(folder)]
    for folder in sandbox.hidden:
        if folder.is_dir():
            args += ["--tmpfs", str(folder)]
    args += ["--chdir", str(Path.cwd()), "--"]
    return tuple(args)


def path_folders(argv: tuple[str, ...] | list[str]) -> list[Path]:
    """The folders of the existing absolute paths in argv ('bot.py:Class' counts as bot.py)."""
    found = []
    for arg in argv:
        candidate = Path(arg.split(".py:", 1)[0] + ".py" if ".py:" in arg else arg)
        if candidate.is_absolute() and candidate.exists():
            found.append(candidate if candidate.is_dir() else candidate.parent)
    return found


def _under_tmp(folders: list[Path]) -> list[Path]:
    """The folders the private /tmp would hide, outermost first, without repeats."""
    tmp = Path("/tmp")
    kept: list[Path] = []
    for folder in sorted({f.resolve() for f in folders}, key=lambda f: len(f.parts)):
        inside = folder.is_relative_to(tmp) and folder != tmp
        if inside and not any(folder.is_relative_to(k) for k in kept):
            kept.append(folder)
    return kept


def unix_socket_path(address: str) -> Path:
    """The socket file of a 'unix:/path' (or 'unix:///path') address."""
    if not address.startswith("unix:"):
        raise SandboxError(
            f"a bot without network reaches the referee only through a Unix socket, "
            f"not {address or 'no address'}: the referee must also listen on unix:/path"
        )
    path = address.removeprefix("unix:")
    path = "/" + path.lstrip("/") if path.startswith("//") else path
    return Path(os.path.abspath(path))


def bot_address(sandbox: Sandbox | None, address: str, unix_address: str | None) -> str:
    """The address to give a bot in this sandbox, of a referee that listens on address and,
    maybe, also on unix_address."""
    if sandbox is None or not sandbox.needs_unix_socket or address.startswith("unix:"):
        return address
    if unix_address is None:
        raise SandboxError(
            f"the {sandbox.tier.value} tier has no network: start the referee with a Unix "
            "socket too (start_server(..., unix_listen='unix:/path'))"
        )
    return unix_address


def describe_exit(returncode: int, sandbox: Sandbox | None, stopped: bool = False) -> str:
    """How a bot process ended, in plain words, naming the limit that killed it if one did."""
    signum = -returncode if returncode < 0 else None
    tier = sandbox.tier if sandbox is not None else Tier.NONE
    if tier is Tier.BUBBLEWRAP and 128 < returncode < 128 + signal.NSIG:
        signum = returncode - 128  # bwrap reports its child's death by signal this way
    if signum is None:
        return f"exited with code {returncode}"
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    if stopped:
        return f"was stopped by the referee ({name})"
    if signum == signal.SIGXCPU and sandbox is not None:
        return f"was killed by {name}: it used up its CPU-time limit of {sandbox.cpu_seconds} s"
    return f"was killed by {name}"


def private_socket(sandbox: Sandbox | None) -> Path | None:
    """A fresh path for the referee's Unix socket, in a folder only this user may enter, when
    the sandbox needs one; the caller removes the folder when done."""
    if sandbox is None or not sandbox.needs_unix_socket:
        return None
    return Path(tempfile.mkdtemp(prefix="arena-")) / "referee.sock"


def probe_bubblewrap() -> str | None:
    """None when the bubblewrap tier works on this machine, else why not, in bwrap's words
    (user namespaces may be refused inside a container, for one)."""
    with tempfile.TemporaryDirectory(prefix="arena-probe-") as folder:
        try:
            argv = bubblewrap_argv(Sandbox(tier=Tier.BUBBLEWRAP), (), Path(folder))
        except SandboxError as exc:
            return str(exc)
        try:
            done = subprocess.run(
                [*argv, "true"], capture_output=True, text=True, timeout=30, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap could not be run: {exc}"
    if done.returncode == 0:
        return None
    return done.stderr.strip() or f"bwrap exited with code {done.returncode}"
