"""Set a bot's resource limits, then become the bot: `python -I sandbox_exec.py [--cgroup DIR]...
[--cpu-seconds N --memory-mb N --processes N --open-files N] [--file-mb N] [--no-new-privs]
[--uid N --gid N [--groups G,...]] [--no-user-namespaces] [--die-with-parent PID] --
COMMAND...`.

A wrapper process rather than a preexec_fn, because the referee has gRPC threads running and
Python code between fork and exec in a threaded process can deadlock. Standard library only:
it runs with -I, before (and outside) anything the bot brings.

With --uid it starts as root and ends as that user: the limits first (a user cannot lower a
limit it never had, and RLIMIT_NPROC is checked against the new user's processes), then the
groups, the group, the user. Changing every uid away from 0 clears all capabilities, so the
bot keeps nothing of root.

--cgroup DIR (one or more): first of all, while still root, it moves itself into those control
groups (referee/bots/memory_group.py, and a build's referee/bots/pids_group.py), so the bot and
every child it will fork are in them.
--die-with-parent PID: after the change of user (which clears it), the kernel is asked to
SIGKILL this process, the bot once exec'd, when its parent, the referee PID, ends: a referee
killed with SIGKILL cannot stop its bots, which would otherwise play on until their stream
noticed. The signal comes when the parent's thread that started it ends, so bots are started
from the referee's long-lived threads (its event loops). A parent already gone (this process
reparented) is an exit at once.
--no-user-namespaces: last, a seccomp filter refuses the bot (and its children) new user
namespaces; bubblewrap's own --disable-userns needs a user namespace for bwrap, which a root
referee does not give it.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import os
import resource
import signal
import sys

PR_SET_NO_NEW_PRIVS = 38  # linux/prctl.h
PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
CLONE_NEWUSER = 0x10000000


def _cap(kind: int, soft: int, hard: int) -> None:
    """Lower a limit; never try to raise it past what this process already has."""
    _, current_hard = resource.getrlimit(kind)
    if current_hard != resource.RLIM_INFINITY:
        hard = min(hard, current_hard)
        soft = min(soft, hard)
    resource.setrlimit(kind, (soft, hard))


def join_cgroup(folder: str) -> None:
    """Move this process into the control group at folder (root's to write)."""
    with open(os.path.join(folder, "cgroup.procs"), "w", encoding="ascii") as procs:
        procs.write(str(os.getpid()))


def apply_limits(cpu_seconds: int, memory_mb: int, processes: int, open_files: int) -> None:
    # SIGXCPU at the soft limit (the cause shows in the exit status), SIGKILL a second later
    # for a bot that ignores it.
    _cap(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)
    memory = memory_mb * 1024 * 1024
    _cap(resource.RLIMIT_AS, memory, memory)
    # Counted per user, over all that user's processes and threads; not enforced for root.
    _cap(resource.RLIMIT_NPROC, processes, processes)
    _cap(resource.RLIMIT_NOFILE, open_files, open_files)
    _cap(resource.RLIMIT_CORE, 0, 0)


def forbid_new_privileges() -> None:
    """From here on no exec gains privileges: setuid programs (su, passwd, mount) and file
    capabilities run with the caller's rights only."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(errno)}")


def die_with_parent(parent: int) -> None:
    """SIGKILL when the parent ends; an OSError when it has ended already."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"prctl(PR_SET_PDEATHSIG): {os.strerror(code)}")
    if os.getppid() != parent:  # it ended before the signal was asked for
        raise OSError(f"the referee (pid {parent}) has ended")


def become(uid: int, gid: int, groups: list[int]) -> None:
    """Drop root for good, and make sure of it: a process that could still become root again
    must not run the bot."""
    os.setgroups(groups)
    os.setgid(gid)
    os.setuid(uid)
    try:
        os.setuid(0)
    except PermissionError:
        return
    raise OSError(f"still able to become root after changing to uid {uid}")


# seccomp's view of a system call (linux/seccomp.h): nr, arch, then the arguments from byte 16.
_ARCHES = {  # machine: (AUDIT_ARCH_*, clone, unshare, setns, clone3)
    "x86_64": (0xC000003E, 56, 272, 308, 435),
    "aarch64": (0xC00000B7, 220, 97, 268, 435),
}
_X32_BIT = 0x40000000
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000


class _Instruction(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint32),
    ]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


def user_namespace_filter(machine: str) -> list[tuple[int, int, int, int]]:
    """The BPF program: unshare() and clone() with CLONE_NEWUSER, and setns(), fail with
    EPERM; clone3(), whose flags a filter cannot read, fails with ENOSYS, so that the C
    library falls back to clone(); any other ABI (i386 or x32 calls on x86_64) gets EPERM."""
    arch, clone, unshare, setns, clone3 = _ARCHES[machine]
    eperm, enosys = _ERRNO | errno.EPERM, _ERRNO | errno.ENOSYS
    return [
        (_LD_ABS, 0, 0, 4),  # 0: the arch
        (_JEQ, 1, 0, arch),  # 1
        (_RET, 0, 0, eperm),  # 2
        (_LD_ABS, 0, 0, 0),  # 3: the system call's number
        (_JGE, 7, 0, _X32_BIT),  # 4 -> 12
        (_JEQ, 8, 0, clone3),  # 5 -> 14
        (_JEQ, 5, 0, setns),  # 6 -> 12
        (_JEQ, 2, 0, unshare),  # 7 -> 10
        (_JEQ, 1, 0, clone),  # 8 -> 10
        (_RET, 0, 0, _ALLOW),  # 9
        (_LD_ABS, 0, 0, 16),  # 10: the flags, the first argument's low half
        (_JSET, 0, 1, CLONE_NEWUSER),  # 11 -> 12 or 13
        (_RET, 0, 0, eperm),  # 12
        (_RET, 0, 0, _ALLOW),  # 13
        (_RET, 0, 0, enosys),  # 14
    ]


def forbid_user_namespaces() -> None:
    """Install the filter for this process and all it will run (it needs no new privileges,
    set before)."""
    machine = os.uname().machine
    if machine not in _ARCHES:
        raise OSError(f"no user-namespace filter for {machine}")
    program = user_namespace_filter(machine)
    instructions = (_Instruction * len(program))(*(_Instruction(*i) for i in program))
    fprog = _Program(len(program), instructions)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"prctl(PR_SET_SECCOMP): {os.strerror(code)}")


def _id_list(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sandbox_exec", description=__doc__)
    parser.add_argument("--cgroup", action="append", default=[])
    parser.add_argument("--file-mb", type=int)
    parser.add_argument("--cpu-seconds", type=int)
    parser.add_argument("--memory-mb", type=int)
    parser.add_argument("--processes", type=int)
    parser.add_argument("--open-files", type=int)
    parser.add_argument("--no-new-privs", action="store_true")
    parser.add_argument("--no-user-namespaces", action="store_true")
    parser.add_argument("--die-with-parent", type=int, metavar="PID")
    parser.add_argument("--uid", type=int)
    parser.add_argument("--gid", type=int)
    parser.add_argument("--groups", type=_id_list, default=[])
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run after --")
    if (args.uid is None) != (args.gid is None):
        parser.error("--uid and --gid go together")
    limits = (args.cpu_seconds, args.memory_mb, args.processes, args.open_files)
    if None in limits and limits != (None,) * 4:
        parser.error("--cpu-seconds, --memory-mb, --processes and --open-files go together")
    try:
        for group in args.cgroup:
            join_cgroup(group)
    except OSError as exc:
        print(f"sandbox: cannot join the bot's control group: {exc}", file=sys.stderr)
        return 126
    try:
        if args.cpu_seconds is not None:
            apply_limits(args.cpu_seconds, args.memory_mb, args.processes, args.open_files)
        if args.file_mb is not None:  # SIGXFSZ past it, as a file bigger than that is written
            _cap(resource.RLIMIT_FSIZE, args.file_mb * 1024 * 1024, args.file_mb * 1024 * 1024)
    except (ValueError, OSError) as exc:
        print(f"sandbox: cannot set the resource limits: {exc}", file=sys.stderr)
        return 126
    try:
        if args.no_new_privs or args.no_user_namespaces:
            forbid_new_privileges()
        if args.uid is not None:
            become(args.uid, args.gid, args.groups)
    except OSError as exc:
        print(f"sandbox: cannot drop to an unprivileged user: {exc}", file=sys.stderr)
        return 126
    try:
        if args.die_with_parent is not None:
            die_with_parent(args.die_with_parent)
    except OSError as exc:
        print(f"sandbox: the bot would outlive its referee: {exc}", file=sys.stderr)
        return 126
    try:
        if args.no_user_namespaces:
            forbid_user_namespaces()
    except OSError as exc:
        print(f"sandbox: cannot refuse the bot user namespaces: {exc}", file=sys.stderr)
        return 126
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"sandbox: cannot run {command[0]}: {exc.strerror or exc}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main())
