"""A real tournament for the web tests: three bots in Opposing Force, one of them forfeiting
every match with an illegal choice, played by `arena tournament run` once per session; and a
three-seat one, where the standings have intervals rather than an Elo table."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.tournaments.web.harness import BOTS, arena

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


THREE_SEATS = """
name = "three"
game = "capture-the-commander"
seed = 3
[[bots]]
name = "strategy"
spec = "example:capture-the-commander"
[[bots]]
spec = "example:random"
[[bots]]
spec = "example:first"
[format]
kind = "round-robin"
seats = 3
games_per_pairing = 6
"""


@pytest.fixture(scope="session")
def three_seats(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a finished three-seat tournament: openskill with a bootstrap interval of
    mu, no Elo table. Six matches, two deals: one deal alone gives the bootstrap nothing to vary."""
    where = tmp_path_factory.mktemp("web-three-seats")
    config = where / "three.toml"
    config.write_text(THREE_SEATS)
    ran = arena("tournament", "run", config, "--out", where / "out", "--no-progress")
    assert ran.returncode == 0, ran.stderr
    return where / "out"
