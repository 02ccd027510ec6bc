"""A real tournament for the web tests: three bots in Opposing Force, one of them forfeiting
every match with an illegal choice, played by `arena tournament run` once per session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.web.harness import BOTS, arena

CONFIG = f"""
name = "web"
game = "opposing-force"
[[bots]]
name = "strategy"
spec = "example:opposing-force"
[[bots]]
spec = "example:random"
[[bots]]
name = "cheat"
spec = "cmd:{sys.executable} {BOTS / "rawbot.py"} illegal"
[format]
kind = "round-robin"
games_per_pairing = 2
"""


@pytest.fixture(scope="session")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a finished tournament: 6 matches, 4 of them forfeited by cheat."""
    where = tmp_path_factory.mktemp("web-tournament")
    config = where / "web.toml"
    config.write_text(CONFIG)
    ran = arena("tournament", "run", config, "--out", where / "out", "--no-progress")
    assert ran.returncode == 0, ran.stderr
    return where / "out"
