"""Tests referee.bots.sandbox's unconfined_warning in tournaments.runner and the ladder.

A tournament or a ladder whose bots run at tier none says so when it starts, on the console
and in its log: those bots can read everything the runner can (the deal secret, the tokens).
One in bubblewrap says nothing of the kind; `ladder init` writes bubblewrap."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.bots.sandbox import probe_bubblewrap

ARENA = [sys.executable, "-m", "tournaments.cli.arena_app"]
WARNING = "sandbox tier none: its bots run as this user and can read everything it can"
BWRAP_PROBLEM = probe_bubblewrap()


def tournament(folder: Path, tier: str) -> subprocess.CompletedProcess[str]:
    folder.mkdir()
    toml = folder / "cup.toml"
    toml.write_text(
        'name = "cup"\ngame = "opposing-force"\noutput = "run"\n'
        '[[bots]]\nspec = "example:random"\n[[bots]]\nspec = "example:first"\n'
        '[format]\nkind = "round-robin"\ngames_per_pairing = 2\n'
        f'[sandbox]\ntier = "{tier}"\n',
        encoding="utf-8",
    )
    command = [*ARENA, "tournament", "run", str(toml), "--no-progress"]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.mark.timeout(150)
@pytest.mark.parametrize(
    "tier",
    [
        "none",
        pytest.param(
            "bubblewrap",
            marks=pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM)),
        ),
    ],
)
def test_a_tournament_at_tier_none_says_its_bots_can_read_everything(
    tmp_path: Path, tier: str
) -> None:
    done = tournament(tmp_path / tier, tier)
    assert done.returncode == 0, done.stderr
    console = done.stdout + done.stderr
    log = (tmp_path / tier / "run" / "tournament.log").read_text(encoding="utf-8")
    if tier == "none":
        assert console.count(WARNING) == 1, console
        assert "sandbox_unconfined" in log and WARNING in log
    else:
        assert WARNING not in console and "sandbox_unconfined" not in log


@pytest.mark.timeout(120)
def test_a_ladder_at_tier_none_says_so_and_init_writes_bubblewrap(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    init = [*ARENA, "ladder", "init", str(folder), "--game", "opposing-force"]
    subprocess.run([*init, "--listen", "127.0.0.1:0"], check=True, timeout=60)
    toml = folder / "ladder.toml"
    text = toml.read_text(encoding="utf-8")
    assert "[sandbox]  # each bot alone" in text and 'tier = "bubblewrap"' in text
    text = text.replace('tier = "bubblewrap"', 'tier = "none"')
    toml.write_text(text.replace('address = "127.0.0.1:8061"', 'address = "127.0.0.1:0"'))
    out = folder / "serve.out"
    with out.open("wb") as sink:
        serve = subprocess.Popen([*ARENA, "ladder", "serve", str(folder)], stdout=sink, stderr=sink)
    try:
        deadline = time.monotonic() + 60
        while WARNING not in out.read_text(encoding="utf-8"):
            assert serve.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.2)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)
    assert out.read_text(encoding="utf-8").count(WARNING) == 1
    log = (folder / "ladder.log").read_text(encoding="utf-8")
    assert "sandbox_unconfined" in log and WARNING in log
