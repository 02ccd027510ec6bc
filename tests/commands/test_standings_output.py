"""`arena tournament standings` for scripts and people, through the real command: --json is the
one document, with an openskill interval at three seats and Elo with LOS at two; names print as
written on a narrow pipe; a tournament with a book of deals plays the book's deals in order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from arena_games import replay_file as replay
from arena_games.deals import DealKey

ODD = ":end: [red]"
BOOK = [DealKey.practice(n).key.hex() for n in (1, 2)]
# Deterministic: the random bot draws from the deal's commitment, which changes every run, so
# with it the six outcomes could all come out alike and leave the bootstrap nothing to vary.
LAST_LEGAL = """
from arena_sdk.bot import Bot

class LastLegalBot(Bot):
    name = "last"

    def act(self, observation, legal_actions):
        return len(legal_actions) - 1
"""

THREE_SEATS = f"""
name = "three {ODD}"
game = "capture-the-commander"
deals = "book.txt"
[[bots]]
name = "[bold]strategy:end:"
spec = "example:capture-the-commander"
[[bots]]
spec = "last.py"
[[bots]]
spec = "example:first"
[format]
kind = "round-robin"
seats = 3
games_per_pairing = 6
"""

TWO_SEATS = """
name = "two"
game = "orc-pit-fighting"
[[bots]]
spec = "example:orc-pit-fighting"
[[bots]]
spec = "example:random"
[format]
kind = "round-robin"
games_per_pairing = 2
"""


def arena(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    return subprocess.run(
        [sys.executable, "-m", "tournaments.cli.arena_app", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env | {"COLUMNS": "30"},
    )


@pytest.mark.timeout(300)
def test_three_seats_from_a_book_with_intervals_and_names_as_written(tmp_path: Path) -> None:
    config = tmp_path / "three.toml"
    config.write_text(THREE_SEATS)
    (tmp_path / "last.py").write_text(LAST_LEGAL)
    (tmp_path / "book.txt").write_text(
        f"# two deals\n{BOOK[0]}  # the first\n\n{BOOK[1].upper()}\n"
    )
    out = tmp_path / f"out {ODD}"
    ran = arena("tournament", "run", config, "--out", out, "--no-progress")
    assert ran.returncode == 0, ran.stderr
    (tmp_path / "book.txt").unlink()  # the tournament keeps its book: standings need no file

    scripted = arena("tournament", "standings", out, "--json")
    assert scripted.returncode == 0, scripted.stderr
    document = json.loads(scripted.stdout)
    assert document["name"] == f"three {ODD}" and document["finished"] == 6
    assert document["elo"] is None and "bootstrap" in document["interval"]
    for row in document["standings"]:
        assert row["mu_low"] < row["mu"] < row["mu_high"]
    assert "[bold]strategy:end:" in [row["bot"] for row in document["standings"]]

    text = arena("tournament", "standings", out)
    assert "…" not in text.stdout and "\N{END WITH LEFTWARDS ARROW ABOVE}" not in text.stdout
    assert f"three {ODD} (capture-the-commander, round-robin): 6/6 matches" in text.stdout
    row = next(line for line in text.stdout.splitlines() if "[bold]strategy:end:" in line)
    strategy = next(r for r in document["standings"] if r["bot"] == "[bold]strategy:end:")
    assert f"{strategy['mu_low']:.1f} .. {strategy['mu_high']:.1f}" in row

    played = sorted((out / "replays").glob("*.jsonl"), key=lambda p: int(p.stem.rsplit("g")[1]))
    headers = [replay.read(path)[0] for path in played]
    # One table of three: the book's first deal in every rotation, then its second.
    assert [h.deal_key for h in headers if isinstance(h, replay.Header)] == [BOOK[0]] * 3 + [
        BOOK[1]
    ] * 3
    assert arena("replay", "verify", *played).returncode == 0


@pytest.mark.timeout(180)
def test_two_seats_give_elo_with_los_and_a_crosstable(tmp_path: Path) -> None:
    config = tmp_path / "two.toml"
    config.write_text(TWO_SEATS)
    assert (
        arena("tournament", "run", config, "--out", tmp_path / "out", "--no-progress").returncode
        == 0
    )
    document = json.loads(arena("tournament", "standings", tmp_path / "out", "--json").stdout)
    assert document["interval"] is None and document["state"] == "finished"
    assert all(row["mu_low"] is None for row in document["standings"])
    top, bottom = document["elo"]
    assert top["los_next"] == pytest.approx(document["los"][top["bot"]][bottom["bot"]])
    assert bottom["los_next"] is None
    los = document["los"]
    assert los[top["bot"]][bottom["bot"]] + los[bottom["bot"]][top["bot"]] == pytest.approx(1)
    meetings = document["crosstable"][top["bot"]][bottom["bot"]]
    assert meetings["games"] == 2
    text = arena("tournament", "standings", tmp_path / "out").stdout
    assert "LOS" in text and f"{top['los_next']:.1%}" in text


def test_a_bad_book_is_a_clear_error_naming_its_line(tmp_path: Path) -> None:
    config = tmp_path / "three.toml"
    config.write_text(THREE_SEATS)
    (tmp_path / "last.py").write_text(LAST_LEGAL)  # so that the book is the one thing wrong
    (tmp_path / "book.txt").write_text(f"{BOOK[0]}\nnot-a-key\n")
    failed = arena("tournament", "run", config, "--out", tmp_path / "out")
    assert failed.returncode == 2 and "Traceback" not in failed.stderr
    assert "deals:" in failed.stderr and "line 2: 'not-a-key' is not a deal key" in failed.stderr
    assert not (tmp_path / "out" / "tournament.sqlite").exists()
