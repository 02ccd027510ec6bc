"""Set a bot's resource limits, then become the bot: `python -I sandbox_exec.py --cpu-seconds N
--memory-mb N --processes N --open-files N -- COMMAND...`.

A wrapper process rather than a preexec_fn, because the referee has gRPC threads running and
Python code between fork and exec in a threaded process can deadlock. Standard library only:
it runs with -I, before (and outside) anything the bot brings.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sandbox_exec", description=__doc__)
    parser.add_argument("--cpu-seconds", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--processes", type=int, required=True)
    parser.add_argument("--open-files", type=int, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run after --")
    try:
        apply_limits(args.cpu_seconds, args.memory_mb, args.processes, args.open_files)
    except (ValueError, OSError) as exc:
        print(f"sandbox: cannot set the resource limits: {exc}", file=sys.stderr)
        return 126
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"sandbox: cannot run {command[0]}: {exc.strerror or exc}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main())
