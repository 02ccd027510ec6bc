"""The local-play package installs and runs without the referee: arena-sdk and arena-games built
as wheels and installed into a folder of their own, a fresh interpreter that sees only them and
their declared dependencies plays every game in process with a search bot written as a bot
author would (the ISMCTS example, copied out of the repository)."""

from __future__ import annotations

import ast
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GAMES_PACKAGE = ROOT / "sdk" / "games" / "arena_games"
# What arena-games declares: arena-sdk (itself grpcio and protobuf), protobuf and pydantic.
DECLARED = {"arena", "arena_sdk", "arena_games", "google", "pydantic", "__future__"}
OURS = {"arena", "arena_sdk", "arena_games", "search_bot"}
# pydantic's own dependencies, some of which it loads only when a model needs them.
PYDANTIC_NEEDS = {"annotated_types", "pydantic_core", "typing_extensions", "typing_inspection"}

SCRIPT = """
import importlib.util, sys
sys.path[:0] = [{target!r}, {bot_dir!r}]
sys.path.append({site!r})  # the third-party dependencies only: no .pth, so no editable finder
import grpc, google.protobuf, pydantic  # the declared dependencies, and what they load
loaded = {{m.split(".")[0] for m in sys.modules}}
for name in ("referee", "tournaments", "example_bots"):
    assert importlib.util.find_spec(name) is None, name + " is importable"
from arena_games import GAMES
from arena_games.local_play import LocalMatch, play_local
from arena_sdk import Bot
from search_bot import IsmctsBot

class First(Bot):
    def act(self, observation, legal_actions):
        return 0

import arena_games
print("FROM", arena_games.__file__)
for name, game in GAMES.items():
    result = play_local(game, [IsmctsBot(iterations=4, seed=1), First()], deal=1)
    print("PLAYED", name, list(result.ranks))
match = LocalMatch("officers-battle", seed=2)
match.play(0)
print("BOARD", len(match.board(0).splitlines()))
stdlib = set(sys.stdlib_module_names)
new = {{m.split(".")[0] for m in sys.modules}} - loaded - stdlib
print("MODULES", sorted(m for m in new if not m.startswith("_sysconfigdata")))
"""


def test_the_engines_import_only_the_sdk_protobuf_pydantic_and_the_standard_library() -> None:
    stdlib = set(sys.stdlib_module_names)
    for source in GAMES_PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top in DECLARED or top in stdlib, f"{source} imports {name}"


@pytest.mark.timeout(240)
def test_local_play_runs_from_an_install_of_the_sdk_and_the_engines_alone(tmp_path: Path) -> None:
    sources = tmp_path / "src"  # builds write into their source folder: never into the repo's
    shutil.copytree(ROOT / "sdk", sources, ignore=shutil.ignore_patterns("*.egg-info", "build"))
    wheels, target, bot_dir = tmp_path / "wheels", tmp_path / "installed", tmp_path / "bot"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels)]
    subprocess.run([*build, str(sources), str(sources / "games")], check=True, timeout=120)
    built = sorted(p.name.split("-")[0] for p in wheels.glob("*.whl"))
    assert built == ["arena_games", "arena_sdk"]
    install = [*pip, "install", "--no-deps", "--no-index", "--target", str(target)]
    subprocess.run([*install, *map(str, wheels.glob("*.whl"))], check=True, timeout=120)
    bot_dir.mkdir()
    shutil.copy(ROOT / "example_bots" / "ismcts_bot.py", bot_dir / "search_bot.py")
    script = SCRIPT.format(target=str(target), bot_dir=str(bot_dir), site=site.getsitepackages()[0])
    run = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith(f"FROM {target}")
    assert len([line for line in lines if line.startswith("PLAYED")]) == 5
    modules = set(eval(lines[-1].removeprefix("MODULES ")))
    extra = modules - OURS - PYDANTIC_NEEDS
    assert not extra, f"local play loads more than its dependencies: {extra}"
