"""A Python bot's own interpreter (`FILE.py@PYTHON`, `python = ...` in a tournament): checked
before it plays, and what of the machine it needs to see in a sandbox.

Such a bot is started as `PYTHON .../arena_sdk/bootstrap.py TARGET`: the bootstrap gives it
arena's own SDK (the referee's protocol), and the interpreter must have the SDK's dependencies,
grpcio and protobuf, besides the bot's own. The interpreter is asked once, in a process of its
own, for its version, its folders and whether those import; the answer is kept for the
referee's life.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import arena_sdk

BOOTSTRAP = Path(arena_sdk.__file__).resolve().with_name("bootstrap.py")
OLDEST = (3, 11)  # the SDK's requires-python
PROBE_TIMEOUT_S = 60.0
_PROBE = """
import importlib, json, site, sys
missing = []
for name in ("grpc", "google.protobuf"):
    try:
        importlib.import_module(name)
    except Exception as exc:
        missing.append(f"{name} ({type(exc).__name__}: {exc})")
print(json.dumps({
    "version": list(sys.version_info[:3]),
    "folders": [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    + list(site.getsitepackages()) + [p for p in sys.path if p],
    "missing": missing,
}))
"""


class InterpreterError(ValueError):
    """An interpreter a bot cannot run on, and why."""


@dataclass(frozen=True)
class Interpreter:
    path: str  # as given, made absolute but not resolved: a venv's python is a symlink
    version: tuple[int, ...]
    folders: tuple[Path, ...]  # its installation, its venv, its packages


def locate(program: str, base: Path | None = None) -> str:
    """The interpreter's absolute path: a bare name is looked up on PATH, a relative path is
    taken from base (the working folder by default)."""
    if "/" not in program:
        found = shutil.which(program)
        if found is None:
            raise InterpreterError(f"no interpreter {program!r} on PATH")
        return found
    return os.path.abspath((base or Path.cwd()) / program)


@functools.cache
def interpreter(path: str) -> Interpreter:
    """The interpreter at path (absolute), checked: InterpreterError says what is wrong."""
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise InterpreterError(f"the interpreter {path} is not an executable file")
    answer = _ask(path)
    version = tuple(int(str(v)) for v in answer["version"])
    if version < OLDEST:
        raise InterpreterError(
            f"{path} is Python {'.'.join(map(str, version))}; the SDK needs "
            f"{'.'.join(map(str, OLDEST))} or newer"
        )
    if answer["missing"]:
        raise InterpreterError(
            f"{path} cannot import what the SDK needs: {'; '.join(map(str, answer['missing']))}. "
            "Install the SDK's dependencies into it: pip install ./sdk (or grpcio and protobuf)"
        )
    folders = tuple(dict.fromkeys(Path(str(f)) for f in answer["folders"] if Path(str(f)).exists()))
    return Interpreter(path, version, folders)


def _ask(path: str) -> dict[str, list[object]]:
    """The probe's answer; InterpreterError when path does not answer as Python does."""
    try:
        done = subprocess.run(
            [path, "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InterpreterError(f"{path} could not be run as a Python interpreter: {exc}") from None
    try:
        answer: dict[str, list[object]] = json.loads(done.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        said = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        raise InterpreterError(
            f"{path} did not answer as a Python interpreter: {said[0]}"
        ) from None
    return answer


def own_python(argv: tuple[str, ...]) -> bool:
    """argv starts a Python bot on an interpreter of its own (through the bootstrap)."""
    return len(argv) > 1 and argv[1] == str(BOOTSTRAP)
