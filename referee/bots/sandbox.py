"""Sandbox tiers for bot processes: what a bot may use, and the command line that enforces it.

Tiers, weakest first (docs/sandbox.md says what each one does and does not stop):
- none: the bot runs as the referee's own user, with everything that user has.
- rlimits: kernel resource limits (CPU time, address space, processes, open files, no core
  dumps), set by a tiny wrapper (referee/bots/sandbox_exec.py) that then execs the bot; as
  root, a memory control group for its whole tree (referee/bots/memory_group.py), a TMPDIR of
  its own, and every process and shared temporary file of its uid ended with it
  (referee/bots/uid_sweep.py).
- bubblewrap: the rlimits, plus namespaces: no network, a read-only allow-list of the
  filesystem (system libraries, the interpreter, the packages the bot imports, its own folder)
  with a private /tmp and /dev/shm, its own process tree, no capabilities, no user namespaces
  of its own, and the referee reached only through a Unix socket bound into the sandbox.
- docker: a container with no network, a read-only root, a private /tmp and cgroup limits,
  started through the docker SDK (see referee/bots/sandbox_docker.py).

Every tier but docker ends the bot with the referee that started it, should the referee be
killed (SIGKILL leaves it no time to stop its bots): bubblewrap's --die-with-parent, and at the
other tiers the wrapper's parent-death signal (sandbox_exec.py --die-with-parent).

When the referee runs as root, the rlimits and bubblewrap tiers run each bot process as a uid
of its own from Sandbox.uid_base on: unprivileged outside the sandbox too, so that file modes
and RLIMIT_NPROC hold, and bots cannot signal or trace each other.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import signal
import site
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from socket import AF_UNIX
from socket import socket as Socket

from pydantic import BaseModel, ConfigDict, Field, model_validator

from referee.bots.interpreters import interpreter, own_python
from referee.bots.memory_group import MemoryGroup, make_memory_group
from referee.bots.uid_sweep import private_tmp, sweep

EXEC_WRAPPER = Path(__file__).with_name("sandbox_exec.py")
NOBODY = "65534"
SOCKET_FOLDER_PREFIX = "arena-"
MAX_ID = 2**31 - 1  # past it, tools that keep ids in a signed int go wrong

# What a confined bot keeps of the referee's environment: enough to find Python and its
# packages, and what the referee tells its bots (where and who they are, to write their output
# as they print it, to end with their referee rather than wait for it, how long to wait and
# ping); nothing that might hold the referee's secrets.
KEPT_ENV = frozenset(
    {"PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "VIRTUAL_ENV"}
    | {"PYTHONUNBUFFERED", "ARENA_ADDRESS", "ARENA_TOKEN", "ARENA_RECONNECT_S"}
    | {"ARENA_JOIN_TIMEOUT_S", "ARENA_KEEPALIVE_S"}
)

# The machine's own programs and libraries, read-only in every bubblewrap sandbox. Binaries
# name their loader under /lib64 and look for libraries in /lib and /usr/lib; /bin holds the
# shell that cmd: bots and subprocesses run. On a merged-/usr system these are symlinks and
# stay symlinks.
SYSTEM_FOLDERS = ("/usr", "/bin", "/lib", "/lib64")
# The loader's index of libraries (without it the loader may miss multiarch folders), and the
# time zone. Nothing else of /etc: no users, hosts, keys or certificates.
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime")
# Folders the sandbox makes fresh: a bot's folder can be none of these, nor anything holding
# them.
OWN_FOLDERS = frozenset(Path(p) for p in ("/", "/tmp", "/dev", "/proc"))
# The packages a Python bot imports from outside site-packages when this project is installed
# editable: the SDK, its generated protos and its local-play package (the engines, which search
# bots and the example bots use). Where each lives is asked of the import system.
SDK_PACKAGES = ("arena_sdk", "arena", "arena_games")
# Guards that tests turn off to show the attack they stop: a memory group per bot process
# (its whole tree within memory_mb), and no user namespaces for bots in bubblewrap.
MEMORY_GROUPS = True
NO_USER_NAMESPACES = True
# And a bot killed with its referee, rather than left to play on until its stream notices.
DIE_WITH_PARENT = True


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
        default=1024,
        ge=64,
        description="address space per process, and the process tree's memory where a control "
        "group can be made (rlimits, bubblewrap); memory (docker)",
    )
    processes: int = Field(default=512, ge=1, description="processes and threads")
    open_files: int = Field(default=256, ge=16, description="open file descriptors")
    tmp_mb: int = Field(default=64, ge=1, description="size of the private /tmp and /dev/shm")
    image: str = Field(
        default="python:3.11-slim", description="docker: an image with Python, arena-sdk, the bot"
    )
    cpus: float = Field(default=1.0, gt=0, description="docker: CPU share")
    user: str = Field(default=f"{NOBODY}:{NOBODY}", description="docker: uid:gid in the container")
    hidden: tuple[Path, ...] = Field(
        default=(), description="folders the bot must not read (replays, databases)"
    )
    runnable: tuple[Path, ...] = Field(
        default=(),
        description="folders inside hidden ones that a bot may be started from (a ladder's "
        "uploaded versions): each bot is shown its own folder in them, nothing around it",
    )
    uid_base: int = Field(
        default=1_900_000_000,
        ge=1000,
        description="rlimits, bubblewrap, referee as root: the first uid for bot processes",
    )
    uid_count: int = Field(
        default=65536, ge=2, description="how many uids from uid_base bot processes take in turn"
    )

    @model_validator(mode="after")
    def _ids_fit(self) -> Sandbox:
        if self.uid_base + self.uid_count > MAX_ID:
            raise ValueError(f"uid_base + uid_count must not pass {MAX_ID}")
        return self

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

    def running_from(self, *folders: Path) -> Sandbox:
        """This sandbox, with bots started from folders inside these (in a hidden one)."""
        extra = tuple(f.resolve() for f in folders if f.resolve() not in self.runnable)
        return self.model_copy(update={"runnable": self.runnable + extra}) if extra else self


@dataclass(frozen=True)
class Launch:
    """What to run for a bot: the command line, its environment, and the folder to start it
    in (None: the referee's own); and what release() ends when the bot is stopped: its own
    uid's processes and files, its private TMPDIR, its memory group."""

    argv: tuple[str, ...]
    env: dict[str, str]
    workdir: Path | None = None
    uid: int | None = None
    tmp: Path | None = None
    memory: MemoryGroup | None = None


@dataclass(frozen=True)
class Drop:
    """The unprivileged user the wrapper becomes before it execs the bot."""

    uid: int
    gid: int
    groups: tuple[int, ...] = ()


def confine(
    sandbox: Sandbox | None,
    argv: tuple[str, ...],
    env: dict[str, str],
    workdir: Path | None = None,
) -> Launch:
    """The command that runs argv inside the sandbox, in workdir (a Python file bot's own
    folder; None: the referee's). env must hold ARENA_ADDRESS, which must be a unix: address
    for the tiers without network. The docker tier first checks that an engine answers: call
    it off the event loop."""
    if sandbox is None or sandbox.tier is Tier.NONE:
        return Launch(parent_guard_argv() + argv, env, workdir)
    if sandbox.tier is Tier.DOCKER:
        from referee.bots.sandbox_docker import docker_launch  # the docker SDK only when used

        return docker_launch(sandbox, argv, env, workdir)
    kept = confined_env(env)
    as_root = referee_is_root()
    if sandbox.tier is Tier.RLIMITS:
        return _rlimits_launch(sandbox, argv, kept, workdir, as_root)
    socket = unix_socket_path(env.get("ARENA_ADDRESS", ""))
    exec_path = kept.get("PATH")
    if not as_root:
        view = bot_view(
            sandbox, argv, exec_path, socket.parent, wrapper_inside=False, workdir=workdir
        )
        outer = limits_argv(sandbox, die_with_parent=True)
        wrapped = outer + bubblewrap_argv(view, sandbox, drop=False)
        return Launch(wrapped + argv, kept | {"HOME": "/tmp"}, workdir)
    group = share_socket(socket, sandbox)
    uid = fresh_id(sandbox)
    view = bot_view(sandbox, argv, exec_path, socket.parent, wrapper_inside=True, workdir=workdir)
    check_readable(view, uid, skip=socket.parent)
    # The wrapper runs inside, as root, and becomes the bot's user: bwrap itself has no user
    # namespace, in which the bot's uid would be root outside. So bwrap's --disable-userns is
    # not for it: the wrapper's seccomp filter refuses the bot user namespaces instead.
    drop = Drop(uid, uid, () if group is None else (group,))
    memory = make_memory_group(sandbox.memory_mb) if MEMORY_GROUPS else None
    # bwrap drops the right to write control groups: a wrapper outside joins the group first.
    # It dies with the referee too: a referee killed before bwrap asks for that (bwrap's own
    # --die-with-parent) would leave it running.
    groups = (memory.path,) if memory is not None else ()
    outside = join_argv(*groups, die_with_parent=True) if groups or DIE_WITH_PARENT else ()
    inside = limits_argv(sandbox, drop, no_user_namespaces=NO_USER_NAMESPACES)
    wrapped = outside + bubblewrap_argv(view, sandbox, drop=True) + inside
    return Launch(wrapped + argv, kept | {"HOME": "/tmp"}, workdir, uid=uid, memory=memory)


def _rlimits_launch(
    sandbox: Sandbox,
    argv: tuple[str, ...],
    env: dict[str, str],
    workdir: Path | None,
    as_root: bool,
) -> Launch:
    """The rlimits tier: no namespaces, so /tmp and /dev/shm are the machine's; the bot is
    given a TMPDIR of its own, and what its uid leaves in the shared ones is removed when it
    is stopped (release). It may make no user namespace either."""
    no_userns = NO_USER_NAMESPACES
    if not as_root:
        tmp = private_tmp(None)
        limits = limits_argv(
            sandbox, no_new_privs=True, no_user_namespaces=no_userns, die_with_parent=True
        )
        return Launch(limits + argv, env | {"TMPDIR": str(tmp)}, workdir, tmp=tmp)
    uid = fresh_id(sandbox)
    check_reachable(argv, env.get("PATH"), uid, workdir)
    tmp = private_tmp(uid)
    memory = make_memory_group(sandbox.memory_mb) if MEMORY_GROUPS else None
    drop = Drop(uid, uid)
    limits = limits_argv(
        sandbox,
        drop,
        no_new_privs=True,
        memory=memory,
        no_user_namespaces=no_userns,
        die_with_parent=True,
    )
    launch_env = env | {"TMPDIR": str(tmp)}
    return Launch(limits + argv, launch_env, workdir, uid=uid, tmp=tmp, memory=memory)


def release(launch: Launch) -> None:
    """End what the bot's process may have left once it is stopped: every process of its own
    uid (a setsid child outlives its process group), its uid's files in the shared temporary
    folders, its private TMPDIR, its memory group."""
    sweep(launch.uid, launch.tmp)
    if launch.memory is not None:
        launch.memory.remove()


def referee_is_root() -> bool:
    """Root can give each bot a uid of its own; anyone else runs bots as themselves."""
    return os.geteuid() == 0


def confined_env(env: dict[str, str]) -> dict[str, str]:
    kept = {k: v for k, v in env.items() if k in KEPT_ENV}
    # RLIMIT_AS counts reserved address space, and glibc reserves 64 MB for each thread's
    # malloc arena: a gRPC client's threads alone would reserve more than it ever uses.
    return kept | {"PYTHONUNBUFFERED": "1", "MALLOC_ARENA_MAX": "2", "PYTHONDONTWRITEBYTECODE": "1"}


def limits_argv(
    sandbox: Sandbox,
    drop: Drop | None = None,
    no_new_privs: bool = False,
    memory: MemoryGroup | None = None,
    no_user_namespaces: bool = False,
    file_mb: int | None = None,
    die_with_parent: bool = False,
) -> tuple[str, ...]:
    """The wrapper that maybe joins a memory group, sets the resource limits, maybe becomes an
    unprivileged user and refuses it user namespaces, then execs what follows `--`.
    no_new_privs when it execs the bot itself (bwrap sets it too, and a setuid bwrap would not
    run under it). file_mb: the largest file it may write (a build's, without a disk of its
    own). die_with_parent: the bot is killed when this process (the thread that starts it)
    ends, unless DIE_WITH_PARENT is off."""
    args = [sys.executable, "-I", str(EXEC_WRAPPER)]
    if memory is not None:
        args += ["--cgroup", str(memory.path)]
    args += ["--cpu-seconds", str(sandbox.cpu_seconds), "--memory-mb", str(sandbox.memory_mb)]
    args += ["--processes", str(sandbox.processes), "--open-files", str(sandbox.open_files)]
    if file_mb is not None:
        args += ["--file-mb", str(file_mb)]
    if no_new_privs or drop is not None:
        args.append("--no-new-privs")
    if drop is not None:
        args += ["--uid", str(drop.uid), "--gid", str(drop.gid)]
        if drop.groups:
            args += ["--groups", ",".join(map(str, drop.groups))]
    if no_user_namespaces:
        args.append("--no-user-namespaces")
    if die_with_parent and DIE_WITH_PARENT:
        args += ["--die-with-parent", str(os.getpid())]
    return (*args, "--")


def parent_guard_argv() -> tuple[str, ...]:
    """Tier none's wrapper: it only makes the bot die with this process (the thread that
    starts it), then execs it. A wrapper, not a preexec_fn: see sandbox_exec.py."""
    return join_argv(die_with_parent=True) if DIE_WITH_PARENT else ()


def join_argv(*groups: Path, die_with_parent: bool = False) -> tuple[str, ...]:
    """The wrapper that only joins the control groups (a memory group, a build's pids group),
    as root, then execs what follows; die_with_parent as limits_argv's."""
    joins = [arg for group in groups for arg in ("--cgroup", str(group))]
    guard = ["--die-with-parent", str(os.getpid())] if die_with_parent and DIE_WITH_PARENT else []
    return (sys.executable, "-I", str(EXEC_WRAPPER), *joins, *guard, "--")


# Bot uids (and socket groups) handed out by this referee process: the next after the last,
# from a random start, so that two referees on one machine seldom meet, and never one that a
# running process already has.
_ids_lock = threading.Lock()
_id_offset: list[int] = []
_share_lock = threading.Lock()


def fresh_id(sandbox: Sandbox) -> int:
    """The next uid of the sandbox's range that no running process has."""
    with _ids_lock:
        if not _id_offset:
            _id_offset.append(secrets.randbelow(sandbox.uid_count))
        busy = ids_in_use()
        for _ in range(sandbox.uid_count):
            candidate = sandbox.uid_base + _id_offset[0] % sandbox.uid_count
            _id_offset[0] = (_id_offset[0] + 1) % sandbox.uid_count
            if candidate not in busy:
                return candidate
    last = sandbox.uid_base + sandbox.uid_count - 1
    raise SandboxError(f"every uid from {sandbox.uid_base} to {last} is in use: raise uid_count")


def ids_in_use() -> set[int]:
    """The uids and gids of the running processes (a process's /proc folder is theirs)."""
    found: set[int] = set()
    with os.scandir("/proc") as entries:
        for entry in entries:
            if entry.name.isdigit():
                try:
                    info = entry.stat()
                except OSError:
                    continue  # it ended meanwhile
                found.update((info.st_uid, info.st_gid))
    return found


def share_socket(socket: Path, sandbox: Sandbox) -> int | None:
    """The group that may reach the referee's socket: the bots of this socket's series, each
    a uid of its own, are given it as a supplementary group. A folder from private_socket()
    gets a fresh group of its own (0710, the socket 0660): no other user, nor bots of another
    series, can connect. Another folder must already let other users in."""
    folder = socket.parent
    if not socket.exists():
        raise SandboxError(f"the referee's socket {socket} does not exist: start it first")
    if not _is_private_folder(folder):
        why = _closed_to_others(socket, os.W_OK)
        if why is not None:
            raise SandboxError(
                f"a bot runs as a user of its own and cannot reach the socket {socket}: {why}; "
                "give the referee a socket made by referee.bots.sandbox.private_socket()"
            )
        return None  # open to all: no group to give (and never the folder's, maybe root's)
    with _share_lock:  # the series' bots, started from several threads, get one group
        group = folder.stat().st_gid
        if not sandbox.uid_base <= group < sandbox.uid_base + sandbox.uid_count:
            group = fresh_id(sandbox)
            os.chown(folder, -1, group)
            folder.chmod(0o710)
        os.chown(socket, -1, group)
        socket.chmod(0o660)
    return group


def _is_private_folder(folder: Path) -> bool:
    """Made by private_socket() for this user: ours to open to a group."""
    return (
        folder.parent == Path(tempfile.gettempdir())
        and folder.name.startswith(SOCKET_FOLDER_PREFIX)
        and folder.stat().st_uid == os.geteuid()
    )


@dataclass
class View:
    """What a bot in bubblewrap sees of the machine: each path at its own place."""

    binds: dict[Path, Path] = field(default_factory=dict)  # where it shows -> host's real path
    symlinks: dict[Path, str] = field(default_factory=dict)
    covers: list[Path] = field(default_factory=list)  # hidden folders inside bound ones
    writable: list[Path] = field(default_factory=list)  # a build's folder, bound read-write
    workdir: Path = Path("/tmp")


def bot_view(
    sandbox: Sandbox,
    argv: tuple[str, ...],
    exec_path: str | None,
    socket_folder: Path,
    wrapper_inside: bool,
    workdir: Path | None = None,
) -> View:
    """The allow-list for argv: the system's programs and libraries, the bot's Python (the
    referee's, or its own) and the packages a Python bot imports, the folders of the files its
    command line names, the socket folder. It starts in workdir (the bot's own folder, which
    its command line names, or a cmd@FOLDER bot's FOLDER: shown, read-only, with the paths
    relative to it) or else the referee's working folder. SandboxError when the
    command line names a hidden folder, or a folder the sandbox makes fresh."""
    view = system_view()
    if (runs_python(argv, exec_path) and not own_python(argv)) or wrapper_inside:
        for folder in python_runtime():
            show(view, folder)
    for folder in python_needs(argv, exec_path):
        show(view, folder)
    if wrapper_inside:
        show(view, EXEC_WRAPPER)
    own = [Path(os.path.abspath(workdir))] if workdir is not None else []
    for named in own + named_paths(argv, exec_path, workdir):
        _refuse_own(named)
        show(view, named)
    show(view, socket_folder)
    _refuse_hidden(view, sandbox.hidden, sandbox.runnable)
    view.covers = [
        h for h in sandbox.hidden if h.is_dir() and any(h.is_relative_to(t) for t in view.binds)
    ]
    cwd = Path(os.path.abspath(workdir)) if workdir is not None else Path.cwd()
    if not any(cwd.is_relative_to(c) for c in view.covers):
        view.workdir = cwd  # a bare folder unless bound: relative paths of a cmd: bot hold
    return view


def system_view() -> View:
    """The machine's programs and libraries, read-only: what every sandbox shows."""
    view = View()
    for name in SYSTEM_FOLDERS:
        if os.path.islink(name):
            view.symlinks[Path(name)] = os.readlink(name)
        elif os.path.isdir(name):
            show(view, Path(name))
    for name in SYSTEM_FILES:
        if os.path.exists(name):
            show(view, Path(name))
    return view


def show(view: View, path: Path) -> None:
    """Show path at its place, and at its real place when a symlink leads there: the
    interpreter of a venv is a symlink into its installation."""
    target = Path(os.path.abspath(path))
    real = path.resolve()
    if not any(target.is_relative_to(link) for link in view.symlinks):
        view.binds.setdefault(target, real)  # not through /bin when /bin is a symlink
    view.binds.setdefault(real, real)


def _refuse_own(path: Path) -> None:
    target = Path(os.path.abspath(path))
    if target in OWN_FOLDERS or target.resolve() in OWN_FOLDERS:
        raise SandboxError(
            f"the bot's command line names {target}, which the sandbox cannot show it: "
            "put the bot and its files in a folder of their own"
        )


def _refuse_hidden(view: View, hidden: Iterable[Path], runnable: Iterable[Path] = ()) -> None:
    _one_home(view, runnable)
    for folder in hidden:
        real = folder.resolve()
        for target, source in view.binds.items():
            if any(_strictly_in(target, r) and _strictly_in(source, r) for r in runnable):
                continue  # a bot's own folder among the runnable ones: never all of them
            if target.is_relative_to(real) or source.is_relative_to(real):
                raise SandboxError(
                    f"the bot would see {target}, which lies in {folder}, a folder kept from "
                    "bots (replays, the tournament's state): keep bots and their files elsewhere"
                )


def _one_home(view: View, runnable: Iterable[Path]) -> None:
    """A bot started from a runnable folder sees its own home there (versions/HASH or
    builds/NAME@N) and no other: its command line is its author's, and an argument naming
    another upload's folder (builds/ names are public) would show it that author's files."""
    homes = set()
    for root in (r.resolve() for r in runnable):
        for path in (p for bind in view.binds.items() for p in bind):
            if _strictly_in(path, root):
                homes.add(root / path.relative_to(root).parts[0])
    if len(homes) > 1:
        shown = ", ".join(sorted(h.name for h in homes))
        raise SandboxError(
            f"the bot's command line names {len(homes)} uploaded folders ({shown}): a bot sees "
            "its own folder only"
        )


def _strictly_in(path: Path, folder: Path) -> bool:
    inside = folder.resolve()
    return path != inside and path.is_relative_to(inside)


def python_needs(argv: tuple[str, ...], exec_path: str | None) -> list[Path]:
    """What a Python bot's interpreter must see besides the system: the referee's Python, or
    the bot's own (its installation, venv and packages, as it said when it was checked), and
    the packages it imports from the project (the SDK, an example bot's). None for others."""
    # First: a venv's python resolves to the installation it was made from, maybe the
    # referee's own, while what it may import is its venv's.
    if own_python(argv):
        return [*interpreter(argv[0]).folders, *package_folders(argv)]
    if runs_python(argv, exec_path):
        return python_runtime() + package_folders(argv)
    return []


def runs_python(argv: tuple[str, ...], exec_path: str | None) -> bool:
    """argv runs the referee's own interpreter (the SDK and site-packages are of use)."""
    program = shutil.which(argv[0], path=exec_path) if argv else None
    return program is not None and Path(program).resolve() == Path(sys.executable).resolve()


def python_runtime() -> list[Path]:
    """The referee's Python: its installation (the standard library, lib-dynload), and the
    venv it runs from (pyvenv.cfg, site-packages)."""
    folders = [Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).parent]
    folders += [Path(p) for p in site.getsitepackages()]
    return [f for f in folders if f.exists()]


def package_folders(argv: tuple[str, ...]) -> list[Path]:
    """Where the packages a Python bot imports live, asked of the import system (an editable
    install maps them into the project's folders): the SDK, the package of a `-m` module or a
    `package.module:Class` target, and what that package needs."""
    names = list(SDK_PACKAGES)
    for before, arg in zip(("", *argv), argv, strict=False):
        if before == "-m":
            module = arg
        elif ":" in arg and "/" not in arg:
            module = arg.partition(":")[0]
        else:
            continue
        top = module.partition(".")[0]
        names.append(top)
    folders = []
    for name in dict.fromkeys(names):
        if not name.isidentifier():
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue  # the bot's own import will say what is missing, in its log
        if spec is not None:
            folders += [Path(p) for p in spec.submodule_search_locations or ()]
            if spec.origin and not spec.submodule_search_locations:
                folders.append(Path(spec.origin))
    return [f for f in folders if f.exists()]


def named_paths(
    argv: tuple[str, ...], exec_path: str | None, workdir: Path | None = None
) -> list[Path]:
    """The existing paths the command line names, as folders ('bot.py:Class' counts as
    bot.py; a file stands for its folder, which is the bot's own): the program, found on
    exec_path, and each argument, relative ones from the working folder (workdir, or the
    referee's)."""
    found = []
    program = shutil.which(argv[0], path=exec_path) if argv else None
    for arg in ([program] if program else []) + list(argv[1:]):
        candidate = Path(arg.split(".py:", 1)[0] + ".py" if ".py:" in arg else arg)
        if workdir is not None and arg:
            candidate = workdir / candidate  # an absolute candidate stays itself
        if arg and candidate.exists():
            absolute = Path(os.path.abspath(candidate))
            found.append(absolute if absolute.is_dir() else absolute.parent)
    return found


def path_folders(argv: tuple[str, ...] | list[str]) -> list[Path]:
    """The folders of the existing absolute paths in argv ('bot.py:Class' counts as bot.py)."""
    found = []
    for arg in argv:
        candidate = Path(arg.split(".py:", 1)[0] + ".py" if ".py:" in arg else arg)
        if candidate.is_absolute() and candidate.exists():
            found.append(candidate if candidate.is_dir() else candidate.parent)
    return found


def bubblewrap_argv(view: View, sandbox: Sandbox, drop: bool) -> tuple[str, ...]:
    """bwrap with new namespaces (so no network), its own /dev, /proc and /tmp, and the view
    bound read-only. drop: bwrap runs as root without a user namespace and keeps only the
    capabilities to change user, which the wrapper inside uses, then loses. Otherwise an
    unprivileged user namespace, with no capabilities, that cannot make more of them."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError(
            "the bubblewrap tier needs the bwrap command: install the bubblewrap package "
            "(apt-get install bubblewrap)"
        )
    args = [bwrap]
    if drop:
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        args += ["--unshare-cgroup-try", "--cap-drop", "ALL"]
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--unshare-all", "--unshare-user", "--disable-userns"]
        args += ["--uid", NOBODY, "--gid", NOBODY, "--cap-drop", "ALL"]
    args += ["--die-with-parent", "--new-session"] if DIE_WITH_PARENT else ["--new-session"]
    return (*args, *view_args(view, sandbox.tmp_mb), "--")


def view_args(view: View, tmp_mb: int) -> list[str]:
    """bwrap's mounts for the view, in an order that works: fresh /dev, /proc and /tmp, the
    folders above each bound path (0755: bwrap would make them 0700, which the bot's user
    could not cross), the binds outermost first, the covers over hidden folders."""
    args = []
    for link, points_to in view.symlinks.items():
        args += ["--symlink", points_to, str(link)]
    args += ["--dev", "/dev", "--proc", "/proc"]
    # /tmp and /dev/shm: tmpfs of the sandbox's own, each of tmp_mb, gone with it (bwrap's
    # /dev would give a /dev/shm that only root may write, in a tmpfs without a size).
    for shared in ("/tmp", "/dev/shm"):
        args += ["--perms", "1777", "--size", str(tmp_mb * 1024 * 1024), "--tmpfs", shared]
    binds = _outermost(view.binds)
    made: set[Path] = set()
    for target in binds:
        args += _bare_folders(reversed(target.parents), binds, made)
    for target in binds:
        args += ["--ro-bind", str(view.binds[target]), str(target)]
    for folder in view.writable:  # after the read-only binds, which it must not be under
        args += _bare_folders(reversed(folder.parents), binds, made)
        args += ["--bind", str(folder), str(folder)]
    for folder in view.covers:
        args += ["--tmpfs", str(folder), "--remount-ro", str(folder)]
    workdir = [*reversed(view.workdir.parents), view.workdir]
    return [*args, *_bare_folders(workdir, binds, made), "--chdir", str(view.workdir)]


def _outermost(binds: dict[Path, Path]) -> list[Path]:
    """The bound places, outermost first, without those inside another one."""
    kept: list[Path] = []
    for target in sorted(binds, key=lambda t: len(t.parts)):
        if not any(target.is_relative_to(k) for k in kept):
            kept.append(target)
    return kept


def _bare_folders(folders: Iterable[Path], binds: list[Path], made: set[Path]) -> list[str]:
    """Empty folders, 0755, where the view has nothing bound: the way to what is."""
    args = []
    for folder in folders:
        fresh = folder in OWN_FOLDERS or folder in made
        if not fresh and not any(folder.is_relative_to(b) for b in binds):
            args += ["--perms", "0755", "--dir", str(folder)]
            made.add(folder)
    return args


def check_readable(view: View, uid: int, skip: Path) -> None:
    """Each bound path must be open to other users: the bot, as uid, is one of them. The
    folders above need not be; inside the sandbox they are bwrap's own."""
    for target, source in view.binds.items():
        if source == skip.resolve():
            continue
        why = _mode_lacks(source, _wants(source))
        if why is not None:
            raise SandboxError(
                f"the bot runs as uid {uid} and cannot read {target}: {why}; let other "
                "users read it (chmod o+rX) or run the referee as an ordinary user"
            )


def check_reachable(
    argv: tuple[str, ...], exec_path: str | None, uid: int, workdir: Path | None = None
) -> None:
    """Without a mount namespace, the bot as uid must reach everything it needs on the host
    itself: its program, the referee's Python and the packages it imports, its files. Only
    the top of each folder is checked, not all it holds."""
    program = shutil.which(argv[0], path=exec_path) if argv else None
    needed = [Path(program)] if program else []
    needed += python_needs(argv, exec_path)
    needed += named_paths(argv, exec_path, workdir)
    needed += [workdir] if workdir is not None else []
    for item in needed:
        # The way the command names it, and where symlinks lead: both are walked.
        for way in (Path(os.path.abspath(item)), item.resolve()):
            why = _closed_to_others(way, _wants(way))
            if why is not None:
                raise SandboxError(
                    f"the rlimits tier runs the bot as uid {uid}, an unprivileged user, who "
                    f"cannot reach {way}: {why}; use the bubblewrap tier, or an interpreter "
                    "and bot folder that other users may read"
                )


def _wants(path: Path) -> int:
    return os.R_OK | os.X_OK if path.is_dir() or os.access(path, os.X_OK) else os.R_OK


def _closed_to_others(path: Path, wants: int) -> str | None:
    """Why a user who neither owns path nor shares its group cannot use it as wanted."""
    for folder in reversed(path.parents):
        why = _mode_lacks(folder, os.X_OK)
        if why is not None:
            return why
    return _mode_lacks(path, wants)


def _mode_lacks(path: Path, wants: int) -> str | None:
    mode = path.stat().st_mode
    bits = (stat.S_IROTH if wants & os.R_OK else 0) | (stat.S_IXOTH if wants & os.X_OK else 0)
    bits |= stat.S_IWOTH if wants & os.W_OK else 0
    if mode & bits == bits:
        return None
    return f"{path} is mode {stat.S_IMODE(mode):o}, closed to other users"


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


def unconfined_warning(sandbox: Sandbox | None) -> str | None:
    """The line a ladder or tournament prints at start when its bots run at tier none."""
    if sandbox is not None and sandbox.tier is not Tier.NONE:
        return None
    return (
        "sandbox tier none: its bots run as this user and can read everything it can (the "
        'deal secret, tokens, replays, logs); set [sandbox] tier = "bubblewrap"'
    )


def describe_exit(returncode: int, sandbox: Sandbox | None, stopped: bool = False) -> str:
    """How a bot process ended, in plain words, naming the limit that killed it if one did."""
    signum = -returncode if returncode < 0 else None
    tier = sandbox.tier if sandbox is not None else Tier.NONE
    if tier is Tier.BUBBLEWRAP and 128 < returncode < 128 + signal.NSIG:
        signum = returncode - 128  # bwrap reports its child's death by signal this way
    if signum is None:
        return f"exited with code {returncode}"
    try:
        short = signal.Signals(signum).name
    except ValueError:
        short = ""
    name = f"signal {signum} ({short})" if short else f"signal {signum}"
    if stopped:
        return f"was stopped by the referee ({short or name})"
    if signum == signal.SIGXCPU and sandbox is not None:
        return f"was killed by {name}: it used up its CPU-time limit of {sandbox.cpu_seconds} s"
    return f"was killed by {name}"


def private_socket(sandbox: Sandbox | None) -> Path | None:
    """A fresh path for the referee's Unix socket, in a folder only this user may enter, when
    the sandbox needs one; the caller removes the folder when done."""
    if sandbox is None or not sandbox.needs_unix_socket:
        return None
    return Path(tempfile.mkdtemp(prefix=SOCKET_FOLDER_PREFIX)) / "referee.sock"


def probe_bubblewrap() -> str | None:
    """None when the bubblewrap tier works on this machine, else why not, in bwrap's words
    (user namespaces may be refused inside a container, for one). A bot of `true` goes the
    whole way: the socket shared, the view, the change of user when root."""
    sandbox = Sandbox(tier=Tier.BUBBLEWRAP)
    path = Path(tempfile.mkdtemp(prefix=SOCKET_FOLDER_PREFIX)) / "referee.sock"
    listener = Socket(AF_UNIX)
    try:
        listener.bind(str(path))
        env = {"ARENA_ADDRESS": f"unix:{path}", "PATH": os.environ.get("PATH", os.defpath)}
        launch = confine(sandbox, ("true",), env)
        try:
            done = subprocess.run(
                launch.argv, env=launch.env, capture_output=True, text=True, timeout=30, check=False
            )
        finally:
            release(launch)
    except SandboxError as exc:
        return str(exc)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be run: {exc}"
    finally:
        listener.close()
        shutil.rmtree(path.parent, ignore_errors=True)
    if done.returncode == 0:
        return None
    return done.stderr.strip() or f"bwrap exited with code {done.returncode}"
