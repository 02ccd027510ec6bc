"""A tournament under the CPU clock keeps each seat's decision times, wall clock and CPU, and its
standings give each bot's mean and longest, as its replays say; a store from before the times
were kept reads as having none."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_games import replay_file

from referee.bots.cpu_group import cpu_accounting_problem
from tests.tournaments.web.harness import arena

SPINNER = """
import time
from arena_sdk import Bot as _Bot


class Bot(_Bot):
    spun = 0

    def act(self, observation, legal_actions):
        self.spun += 1
        if self.spun > 3:  # a few spins are enough, and keep the test short
            return 0
        end = time.process_time() + 0.03
        while time.process_time() < end:
            pass
        return 0
"""


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder the bubblewrap tier's bot users may read (0755, outside the private /tmp)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-seat-times-", dir="/var/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _config(tmp_path: Path, shared: Path, clock: str) -> Path:
    spinner = shared / "spinner.py"
    spinner.write_text(SPINNER)
    spinner.chmod(0o644)
    config = tmp_path / f"{clock}.toml"
    config.write_text(
        f"""
name = "times"
game = "opposing-force"
[[bots]]
spec = "example:random"
[[bots]]
name = "spinner"
spec = "{spinner}"
[format]
kind = "round-robin"
games_per_pairing = 2
[time_control]
decision_ms = 2000
clock = "{clock}"
wall_cap = 10
[sandbox]
tier = "bubblewrap"
"""
    )
    return config


def _standings(folder: Path) -> dict[str, dict[str, object]]:
    done = arena("tournament", "standings", folder, "--json")
    assert done.returncode == 0, done.stderr
    return {row["bot"]: row["time"] for row in json.loads(done.stdout)["standings"]}


def _replayed_cpu(folder: Path, bot: str) -> list[float]:
    found = []
    for path in (folder / "replays").glob("*.jsonl"):
        records = replay_file.read(path)
        header = records[0]
        assert isinstance(header, replay_file.Header)
        seats = {s.seat for s in header.seats if s.name == bot}
        found += [
            r.cpu_ms
            for r in records
            if isinstance(r, replay_file.DecisionRecord)
            and r.seat in seats
            and r.cpu_ms is not None
        ]
    return found


@pytest.mark.skipif(
    cpu_accounting_problem() is not None, reason=f"no CPU accounting: {cpu_accounting_problem()}"
)
def test_the_standings_give_each_bots_cpu_time_as_the_replays_do(
    tmp_path: Path, shared: Path
) -> None:
    folder = tmp_path / "out"
    config = _config(tmp_path, shared, "cpu")
    ran = arena("tournament", "run", config, "--out", folder, "--no-progress")
    assert ran.returncode == 0, ran.stderr
    times = _standings(folder)
    spun = _replayed_cpu(folder, "spinner")
    assert times["spinner"]["cpu_max_ms"] == max(spun) >= 25
    assert times["spinner"]["decisions"] == len(spun)
    random_cpu = times["random"]["cpu_mean_ms"]
    assert isinstance(random_cpu, float) and random_cpu < 25  # no spinning: a fraction of it
    # The terminal's table (the web page draws the same grid) shows them too.
    printed = arena("tournament", "standings", folder)
    assert printed.returncode == 0, printed.stderr
    cpu_max = times["spinner"]["cpu_max_ms"]
    assert isinstance(cpu_max, float) and f"/{cpu_max:.0f} ms" in printed.stdout
    assert "mean/longest per decision" in printed.stdout

    # The same store as a version without the table wrote it: no times, no error.
    with sqlite3.connect(folder / "tournament.sqlite") as db:
        db.execute("DROP TABLE seat_times")
    assert {t["decisions"] for t in _standings(folder).values()} == {0}
    assert "per decision" not in arena("tournament", "standings", folder).stdout  # no column


def test_control_on_the_wall_clock_the_standings_have_no_cpu_time(
    tmp_path: Path, shared: Path
) -> None:
    folder = tmp_path / "out"
    config = _config(tmp_path, shared, "wall")
    ran = arena("tournament", "run", config, "--out", folder, "--no-progress")
    assert ran.returncode == 0, ran.stderr
    times = _standings(folder)
    assert all(t["cpu_mean_ms"] is None and t["decisions"] for t in times.values())
    wall_max = times["spinner"]["wall_max_ms"]
    assert isinstance(wall_max, float) and wall_max >= 25
