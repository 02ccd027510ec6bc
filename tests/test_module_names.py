"""Tests the product's tree (referee/, tournaments/, sdk/arena_sdk/, example_bots/): no module
repeats its folder's name, and no two modules share a name outside the game packages
(sdk/games/arena_games/, where every game has its state.py, view.py and rules.py). The import
layers themselves are `make lint`'s (lint-imports, pyproject.toml's [tool.importlinter])."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("referee", "tournaments", "sdk/arena_sdk", "example_bots")
NOT_NAMES = {"__init__", "__main__"}


def modules(top: Path) -> list[Path]:
    """The product's modules and packages (folders with an __init__.py) under top."""
    found = [p for p in top.rglob("*.py") if p.stem not in NOT_NAMES]
    found += [p.parent for p in top.rglob("__init__.py") if p.parent != top]
    return [p for p in found if "__pycache__" not in p.parts and "node_modules" not in p.parts]


def name(path: Path) -> str:
    return path.stem if path.suffix == ".py" else path.name


def repeats_folder(path: Path) -> bool:
    """ladder/ladder_store.py, replays/replay_view.py: the folder's name (or its singular) again
    at the start of the module's."""
    folder = path.parent.name
    stems = {folder, folder.removesuffix("s")}
    return any(name(path).startswith(f"{stem}_") for stem in stems if stem)


def test_no_module_repeats_its_folders_name() -> None:
    repeated = [p.relative_to(ROOT) for top in PRODUCT for p in modules(ROOT / top)]
    assert [str(p) for p in repeated if repeats_folder(ROOT / p)] == []


def test_no_two_modules_share_a_name() -> None:
    where: defaultdict[str, list[str]] = defaultdict(list)
    for top in PRODUCT:
        for path in modules(ROOT / top):
            where[name(path)].append(str(path.relative_to(ROOT)))
    assert {n: places for n, places in where.items() if len(places) > 1} == {}


def test_the_checks_find_what_they_look_for() -> None:
    """Control: the names issue 32 found are caught."""
    assert repeats_folder(Path("tournaments/ladder/ladder_store.py"))
    assert repeats_folder(Path("referee/replays/replay_view.py"))
    assert repeats_folder(Path("referee/series/series_host.py"))
    assert not repeats_folder(Path("tournaments/ladder/database.py"))
