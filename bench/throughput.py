"""Matches per second of a whole tournament of short games, played three ways on the same
matches and deals: persistent bot processes (one session plays match after match, the
baseline), a fresh bot process per match (restart_bots), and the in-process path with no gRPC
(arena_games.local_play.play_local, as tests and search bots use it).

Run: .venv/bin/python -m bench.throughput [--matches N] [--game NAME] [--concurrency C]
Writes bench/results/throughput.json.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_games import GAMES, get_game
from arena_games.deals import DealKey, series_secret
from arena_games.local_play import play_local
from arena_sdk.bot import Bot, Choice
from arena_sdk.launch import load_bot_class

from bench.bench_report import Report, emit
from referee import log_config as arena_logging
from referee.bots.launcher import examples
from tournaments.config import TournamentConfig, parse_config
from tournaments.run_progress import NoProgress
from tournaments.runner import run_tournament
from tournaments.schedule import Ledger, MatchJob, scheduler_for
from tournaments.store import Store

BOTS = ("random", "first")


def tournament(game: str, matches: int, concurrency: int, restart: bool) -> TournamentConfig:
    return parse_config(
        {
            "name": "bench-throughput",
            "game": game,
            "seed": 7,
            "bots": [{"spec": f"example:{name}"} for name in BOTS],
            "format": {"kind": "round-robin", "games_per_pairing": matches},
            "time_control": {"decision_ms": 5000},
            "run": {"concurrency": concurrency, "restart_bots": restart},
        }
    )


def over_grpc(config: TournamentConfig) -> tuple[float, int, int]:
    """(seconds, matches, decisions) of a whole tournament run, store and replays included."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = Store.create(folder, config)
        quiet = NoProgress()
        try:
            started = time.perf_counter()
            summary = run_tournament(folder, store, quiet)
            seconds = time.perf_counter() - started
        finally:
            store.close()
    if summary.failed:
        raise RuntimeError(f"matches failed: {summary.failed}")
    records = summary.ledger.records()
    forfeited = [r.match_id for r in records if r.forfeits]
    if forfeited:
        raise RuntimeError(f"matches forfeited, so not a fair timing: {forfeited}")
    return seconds, len(records), sum(r.decisions for r in records)


class Counted(Bot):
    """An example bot that counts the decisions it is asked."""

    def __init__(self, inner: Bot) -> None:
        self.inner = inner
        self.name = inner.name
        self.decisions = 0

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> Choice:
        self.decisions += 1
        return self.inner.act(observation, legal_actions)


def in_process(config: TournamentConfig) -> tuple[float, int, int]:
    """(seconds, matches, decisions) of the same matches and deals through play_local."""
    secret = series_secret(config.seed)  # the config's practice seed: the tournament's deals
    jobs: list[MatchJob] = scheduler_for(config, secret).next_jobs(Ledger()) or []
    game = get_game(config.game)
    bots = {name: Counted(load_bot_class(examples()[name])()) for name in BOTS}
    started = time.perf_counter()
    for job in jobs:
        deal = DealKey.of(secret, job.deal)
        play_local(game, [bots[name] for name in job.bots], deal, config.options, job.match_id)
    seconds = time.perf_counter() - started
    return seconds, len(jobs), sum(b.decisions for b in bots.values())


def measure(game: str, matches: int, concurrency: int) -> Report:
    runs = {
        "persistent bot processes": over_grpc(tournament(game, matches, concurrency, False)),
        "fresh process per match": over_grpc(tournament(game, matches, concurrency, True)),
        "in-process (play_local)": in_process(tournament(game, matches, concurrency, False)),
    }
    baseline_seconds, baseline_matches, _ = runs["persistent bot processes"]
    baseline = baseline_matches / baseline_seconds
    rows: list[dict[str, object]] = []
    for way, (seconds, played, decisions) in runs.items():
        rows.append(
            {
                "way": way,
                "matches": played,
                "seconds": seconds,
                "matches/s": played / seconds,
                "decisions/s": decisions / seconds,
                "vs persistent": played / seconds / baseline,
            }
        )
    report = Report(
        "throughput",
        f"Tournament throughput: {matches} {game} matches, example:random against example:first",
        rows,
    )
    report.facts["concurrency (matches at once, over gRPC)"] = concurrency
    report.notes.append("the in-process path plays one match at a time on one thread")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=40, help="an even number, at least 2")
    parser.add_argument("--game", choices=sorted(GAMES), default="capture-the-commander")
    parser.add_argument("--concurrency", type=int, default=2, help="matches at once over gRPC")
    args = parser.parse_args()
    if args.matches < 2 or args.matches % 2:
        parser.error("--matches must be an even number (each deal is played from both seats)")
    if args.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    arena_logging.configure("warning")
    try:
        emit(measure(args.game, args.matches, args.concurrency))
    except RuntimeError as exc:  # a run that cannot be timed fairly: say why, no traceback
        sys.exit(f"bench.throughput: {exc}")


if __name__ == "__main__":
    main()
