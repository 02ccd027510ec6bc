"""Random-playout speed of each rules engine (steps per second, legal-action generation
included) against a plain-Python baseline of the same shape measured in the same run: a loop
that keeps a 52-card list, picks random moves from a rebuilt list and appends to a history.

Run: .venv/bin/python -m bench.engines [--seconds S]
"""

from __future__ import annotations

import argparse
import random
import time

from referee.games import GAMES
from referee.games.playout import play_out, random_policy


def baseline_steps_per_second(seconds: float) -> float:
    rng = random.Random(1)
    steps = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        deck = list(range(52))
        history: list[int] = []
        while deck:
            legal = sorted(deck)
            card = legal[int(rng.random() * len(legal))]
            deck.remove(card)
            history.append(card)
            steps += 1
    return steps / (time.perf_counter() - started)


def engine_steps_per_second(name: str, seconds: float) -> tuple[float, float]:
    """(steps per second, games per second) of seeded random playouts."""
    game = GAMES[name]
    steps = games = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        state = game.new_state(None, game.seat_counts[0])
        play_out(state, random.Random(games), random_policy(random.Random(games + 1)))
        steps += len(state.history)
        games += 1
    elapsed = time.perf_counter() - started
    return steps / elapsed, games / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    baseline = baseline_steps_per_second(args.seconds)
    print(f"{'engine':24} {'steps/s':>10} {'games/s':>9} {'vs baseline':>12}")
    print(f"{'plain-Python baseline':24} {baseline:10.0f} {'':>9} {1.0:12.2f}")
    for name in sorted(GAMES):
        steps, games = engine_steps_per_second(name, args.seconds)
        print(f"{name:24} {steps:10.0f} {games:9.1f} {steps / baseline:12.3f}")


if __name__ == "__main__":
    main()
