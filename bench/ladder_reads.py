"""How long the live ladder's pages take to read when it holds many matches: a ladder folder
is filled with N finished matches among B bots (synthetic records, rated as serve rates them),
then the leaderboard (openskill, Elo, the win rate against a bot), the recent matches and a
bot's page are each read a few times through LadderApi, as the web server reads them: the
first read, then reads with nothing new, then a read after one more match.

Run: .venv/bin/python -m bench.ladder_reads [--matches 10000] [--bots 12]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tournaments.ladder import roster
from tournaments.ladder.config_file import write_new_ladder
from tournaments.ladder.database import LadderStore
from tournaments.ladder.matchmaker import rate
from tournaments.read_models.ladder_reads import LadderApi
from tournaments.records import MatchRecord
from tournaments.schedule import MatchJob


def fill(folder: Path, matches: int, bots: int) -> None:
    write_new_ladder(folder, "opposing-force", 2, "127.0.0.1:0")
    store = LadderStore.create(folder)
    names = [f"bot{i}" for i in range(bots)]
    for name in names:
        roster.add_bot(store, name, "example:random")
    rng = random.Random(1)
    for n in range(matches):
        a, b = rng.sample([f"{name}@1" for name in names], 2)
        play(store, n, a, b, rng)
    store.close()


def play(store: LadderStore, n: int, a: str, b: str, rng: random.Random) -> None:
    job = MatchJob(f"t{n}-g0", 0, f"t{n}-d0", (a, b), ("example:random",) * 2)
    store.schedule(n, [job])
    ranks = (0, 1) if rng.random() < 0.6 else (1, 0)
    record = MatchRecord(
        job.match_id, job.deal, (a, b), ranks, (1.0 - ranks[0], 1.0 - ranks[1]), "r", ()
    )
    store.finish(record, "bench", 0.1, rate)


def timed(what: str, read: Callable[[], object], times: int = 3) -> None:
    took = []
    for _ in range(times):
        started = time.perf_counter()
        read()
        took.append(time.perf_counter() - started)
    shown = ", ".join(f"{1000 * t:.1f}" for t in took)
    print(f"{what:<44} {shown} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--bots", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as where:
        folder = Path(where)
        started = time.perf_counter()
        fill(folder, args.matches, args.bots)
        print(
            f"{args.matches} matches among {args.bots} bots written in "
            f"{time.perf_counter() - started:.1f} s"
        )
        api = LadderApi(folder)
        timed("leaderboard (against bot0)", lambda: api.leaderboard(against="bot0"))
        timed("recent matches (50)", lambda: api.recent_matches(50))
        timed("bot page (bot0)", lambda: api.bot_page("bot0"))
        store = LadderStore.open(folder)
        play(store, args.matches, "bot1@1", "bot2@1", random.Random(2))
        store.close()
        timed("leaderboard after one more match", lambda: api.leaderboard(against="bot0"), 1)
        timed("leaderboard again", lambda: api.leaderboard(against="bot0"), 2)


if __name__ == "__main__":
    main()
