"""`arena serve`: a referee for bots started elsewhere, who join with the tokens it prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import RAWBOT, free_port


@pytest.mark.timeout(120)
def test_serve_hosts_a_series_for_bots_holding_its_tokens(tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    referee = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tournaments.cli.arena_app",
            "serve",
            "--listen",
            address,
            "--games",
            "2",
            "--replays",
            str(tmp_path),
            "--connect-timeout-s",
            "60",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, COLUMNS="30"),  # a narrow pipe: the token lines stay whole
    )
    assert referee.stdout is not None
    tokens: list[str] = []
    while len(tokens) < 2:
        line = referee.stdout.readline()
        assert line, "the referee ended before printing its tokens"
        found = re.fullmatch(rf"  bot-\d: ARENA_ADDRESS={address} ARENA_TOKEN=(\S+)\n", line)
        if found:
            tokens.append(found.group(1))
    bots = [
        subprocess.Popen(
            [sys.executable, str(RAWBOT), "play"],
            env=dict(os.environ, ARENA_ADDRESS=address, ARENA_TOKEN=token),
        )
        for token in tokens
    ]
    try:
        out, err = referee.communicate(timeout=90)
        assert referee.returncode == 0, err
        assert out.count("match ") == 2 and "replays:" in out
        assert [bot.wait(timeout=30) for bot in bots] == [0, 0]
        assert len(list(tmp_path.glob("*.jsonl"))) == 2
    finally:
        for process in (referee, *bots):
            if process.poll() is None:
                process.kill()
