"""Set a bot's resource limits, then become the bot: `python -I sandbox_exec.py --cpu-seconds N
--memory-mb N --processes N --open-files N [--no-new-privs] [--uid N --gid N [--groups G,...]]
-- COMMAND...`.

A wrapper process rather than a preexec_fn, because the referee has gRPC threads running and
Python code between fork and exec in a threaded process can deadlock. Standard library only:
it runs with -I, before (and outside) anything the bot brings.

With --uid it starts as root and ends as that user: the limits first (a user cannot lower a
limit it never had, and RLIMIT_NPROC is checked against the new user's processes), then the
groups, the group, the user. Changing every uid away from 0 clears all capabilities, so the
bot keeps nothing of root.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import sys

PR_SET_NO_NEW_PRIVS = 38  # linux/prctl.h


def _cap(kind: int, soft: int, hard: int) -> None:
    """Lower a limit; never try to raise it past what this process already has."""
    _, current_hard = resource.getrlimit(kind)
    if current_hard != resource.RLIM_INFINITY:
        hard = min(hard, current_hard)
        soft = min(soft, hard)
    resource.setrlimit(kind, (soft, hard))


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


def _id_list(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sandbox_exec", description=__doc__)
    parser.add_argument("--cpu-seconds", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--processes", type=int, required=True)
    parser.add_argument("--open-files", type=int, required=True)
    parser.add_argument("--no-new-privs", action="store_true")
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
    try:
        apply_limits(args.cpu_seconds, args.memory_mb, args.processes, args.open_files)
    except (ValueError, OSError) as exc:
        print(f"sandbox: cannot set the resource limits: {exc}", file=sys.stderr)
        return 126
    try:
        if args.no_new_privs:
            forbid_new_privileges()
        if args.uid is not None:
            become(args.uid, args.gid, args.groups)
    except OSError as exc:
        print(f"sandbox: cannot drop to an unprivileged user: {exc}", file=sys.stderr)
        return 126
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"sandbox: cannot run {command[0]}: {exc.strerror or exc}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main())
