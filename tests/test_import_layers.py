"""Tests the import-layer check `make lint` runs (lint-imports, with pyproject.toml's
[tool.importlinter] contracts): the tree keeps every contract, and the same check run on a copy
of the tree with one arrow up, one cycle between sub-packages or a CLI library in the runner
fails, naming it (the controls: what it would let through if it checked nothing)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(tree: Path | None = None) -> subprocess.CompletedProcess[str]:
    """lint-imports over the installed tree, or over `tree` (a copy of referee/ and
    tournaments/, found first on the path)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree or ROOT,
        timeout=120,
    )


def copy_with(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the product's two top layers, with `line` added to `module`'s imports."""
    for package in ("referee", "tournaments"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    path = tmp_path.joinpath(*module.split(".")).with_suffix(".py")
    text = path.read_text()
    path.write_text(
        text.replace(
            "from __future__ import annotations\n",
            f"from __future__ import annotations\n{line}\n",
            1,
        )
    )
    return tmp_path


@pytest.mark.timeout(200)
def test_the_tree_keeps_every_contract() -> None:
    done = lint_imports()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 kept, 0 broken" in done.stdout


@pytest.mark.timeout(200)
@pytest.mark.parametrize(
    ("module", "line", "broken", "named"),
    [
        (
            "referee.matches.match",
            "import tournaments.runner",
            "never back BROKEN",
            "referee.matches.match -> tournaments.runner",
        ),
        (
            "referee.matches.seats",
            "import referee.wire.sessions",
            "one layer BROKEN",
            ".matches -> .wire",
        ),
        (
            "tournaments.runner",
            "import rich.progress",
            "the web appsBROKEN",
            "tournaments.runner -> rich",
        ),
        (
            "referee.bots.launcher",
            "import example_bots",
            "imports them BROKEN",
            "referee.bots.launcher -> example_bots",
        ),
    ],
    ids=["arrow-up", "cycle", "cli-library-in-the-runner", "example-bot-imported"],
)
def test_control_the_check_fails_on_what_it_forbids(
    tmp_path: Path, module: str, line: str, broken: str, named: str
) -> None:
    done = lint_imports(copy_with(tmp_path, module, line))
    assert done.returncode != 0
    assert broken in done.stdout and named in done.stdout, done.stdout
