"""Bots whose results in a bracket the test decides: real processes, written to tmp_path. Each
plays the first legal action, except at the tables it is told to lose, where it answers an
illegal index at its first decision and forfeits (the illegal_action policy's default). Two of
them at one table mirror each other on a duplicate deal (the same deal, each seat once), so a
table nobody is told to lose is tied after every deal: it goes to the tie-break deals, then to
the seed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

BOT = """
import os, time
from arena_sdk.bot import Bot

LOSE = {lose!r}  # table -> the first game number it loses from


class Scripted(Bot):
    name = "scripted"

    def __init__(self):
        self.losing = False
        self.think_s = float(os.environ.get("ARENA_SCRIPTED_S", "0"))

    def on_match_start(self, match):
        table, _, game = match.match_id.rpartition("-g")
        self.losing = int(game) >= LOSE.get(table, 10**9)

    def act(self, observation, legal_actions):
        time.sleep(self.think_s)
        return len(legal_actions) + 7 if self.losing else 0
"""


def scripted_bots(folder: Path, losing: dict[str, dict[str, int]]) -> list[dict[str, str]]:
    """[[bots]] entries, seed order: bot name -> {table: first game it loses from}."""
    entries = []
    for name, lose in losing.items():
        path = folder / f"{name}.py"
        path.write_text(BOT.format(lose=lose))
        entries.append({"spec": str(path), "name": name})
    return entries


def bracket_config(
    bots: list[dict[str, str]], fmt: dict[str, Any], game: str = "capture-the-commander"
) -> dict[str, Any]:
    return {
        "name": "bracket",
        "game": game,
        "seed": 7,
        "output": "out",
        "bots": bots,
        "format": fmt,
        "time_control": {"decision_ms": 5000},
        "run": {"concurrency": 2},
    }
