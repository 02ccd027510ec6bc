"""Run a bot on an interpreter that has not installed this SDK:
`PYTHON /path/to/arena_sdk/bootstrap.py TARGET` (TARGET as for arena_sdk.launch).

The referee starts a bot that names its own interpreter (a venv with the bot's dependencies)
this way. The SDK (arena_sdk, and the generated protocol code, arena) is then taken from where
this file is, ahead of any copy the interpreter has installed, so the bot speaks the protocol
of the referee that started it; the SDK's own dependencies, grpcio and protobuf, must be
installed in the interpreter. Nothing else of the referee's environment is on the bot's path.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path
from types import ModuleType

# The folder that holds arena_sdk and arena: they are one distribution, installed together.
HOME = str(Path(__file__).resolve().parent.parent)
OWN = frozenset({"arena_sdk", "arena"})


class ThisSdk:
    """A finder for the two top-level packages of this SDK, from HOME only."""

    @classmethod
    def find_spec(
        cls, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if path is None and name in OWN:
            return PathFinder.find_spec(name, [HOME])
        return None


def main() -> int:
    # Run as a script, this file's folder is first on sys.path: its modules (client, bot...)
    # would pass for top-level ones and shadow the bot's own.
    if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
        del sys.path[0]
    sys.meta_path.insert(0, ThisSdk)
    from arena_sdk.launch import main as launch

    return launch()


if __name__ == "__main__":
    sys.exit(main())
