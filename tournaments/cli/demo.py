"""`arena demo`: a small round-robin of the example bots in every game, over gRPC."""

from __future__ import annotations

import shutil
from pathlib import Path

from arena_games import GAMES
from rich.console import Console

from tournaments.cli.progress_bar import MatchProgress
from tournaments.cli.standings_print import print_standings
from tournaments.config import TournamentConfig, parse_config
from tournaments.runner import run_tournament
from tournaments.standings import standings_report
from tournaments.store import Store


def demo_config(game: str, games_per_pairing: int) -> TournamentConfig:
    """The game's strategy bot, the random bot and the first-legal-action bot, two at a table.
    No seed: the deals come from a secret, as in a real contest."""
    return parse_config(
        {
            "name": f"demo-{game}",
            "game": game,
            "bots": [
                {"spec": f"example:{game}", "name": "strategy"},
                {"spec": "example:random"},
                {"spec": "example:first"},
            ],
            "format": {"kind": "round-robin", "seats": 2, "games_per_pairing": games_per_pairing},
            "run": {"concurrency": 2},
        },
        f"demo of {game}",
    )


def run_demo(folder: Path, games_per_pairing: int, console: Console) -> list[Path]:
    """Play one tournament per game under folder (emptied first); returns their folders."""
    if folder.exists():
        shutil.rmtree(folder)
    played = []
    for game in GAMES:
        config = demo_config(game, games_per_pairing)
        where = folder / game
        store = Store.create(where, config)
        try:
            progress = MatchProgress(console, game, enabled=console.is_terminal)
            summary = run_tournament(where, store, progress)
        finally:
            store.close()
        print_standings(standings_report(config, summary.ledger, brief=True), console)
        played.append(where)
    return played
