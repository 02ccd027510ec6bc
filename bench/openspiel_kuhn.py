"""OpenSpiel's Kuhn poker under the same random-playout loop as bench.engines: the pure-Python
game (python_kuhn_poker), the baseline the engines must beat, and the C++ one (kuhn_poker,
through pyspiel), a second figure to aim at.

Runs in bench/.venv-openspiel (make bench-openspiel-env), never in the project's .venv, so it
imports nothing of the project: bench.engines starts it as a subprocess and reads the one JSON
line it prints.

Run: bench/.venv-openspiel/bin/python bench/openspiel_kuhn.py [--seconds S]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from typing import Any


def sample_chance(outcomes: list[tuple[int, float]], rng: random.Random) -> int:
    """The same pick as arena_games.playout.sample_chance, so both loops do the same work."""
    if len(outcomes) == 1:
        return outcomes[0][0]
    point = rng.random()
    if all(p == outcomes[0][1] for _, p in outcomes):
        return outcomes[min(int(point * len(outcomes)), len(outcomes) - 1)][0]
    total = 0.0
    for outcome, probability in outcomes:
        total += probability
        if point < total:
            return outcome
    return outcomes[-1][0]


def playouts(game: Any, seconds: float) -> tuple[float, float]:
    """(steps per second, games per second); a step is a chance outcome or a decision, and
    each decision asks for the legal actions first, as arena_games.playout.play_out does."""
    steps = games = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        chance, policy = random.Random(games), random.Random(games + 1)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_chance(state.chance_outcomes(), chance))
            else:
                legal = state.legal_actions(state.current_player())
                state.apply_action(legal[int(policy.random() * len(legal))])
            steps += 1
        games += 1
    elapsed = time.perf_counter() - started
    return steps / elapsed, games / elapsed


def clones(game: Any, seconds: float) -> tuple[float]:
    """clone() per second of a state after the deal."""
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_action(1)
    count = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        state.clone()
        count += 1
    return (count / (time.perf_counter() - started),)


SLICES = 5  # as bench.engines


def best(run: Callable[[float], tuple[float, ...]], seconds: float) -> tuple[float, ...]:
    """The fastest of SLICES runs sharing seconds, as bench.engines takes them."""
    return max((run(seconds / SLICES) for _ in range(SLICES)), key=lambda figures: figures[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    try:
        # Installed only in bench/.venv-openspiel, so no type checker of the project sees them;
        # importing open_spiel.python.games registers the Python games with pyspiel.
        import open_spiel.python.games  # type: ignore[import-not-found]  # noqa: F401
        import pyspiel  # type: ignore[import-not-found]
    except ImportError as exc:
        print(json.dumps({"error": f"open_spiel does not import here: {exc}"}))
        return 1
    game = pyspiel.load_game("python_kuhn_poker")
    result: dict[str, object] = {
        "game": "python_kuhn_poker",
        "open_spiel": _version(),
        **figures(game, args.seconds),
        "python": sys.version.split()[0],
        "cpp": {"game": "kuhn_poker", **figures(pyspiel.load_game("kuhn_poker"), args.seconds)},
    }
    print(json.dumps(result))
    return 0


def figures(game: Any, seconds: float) -> dict[str, float]:
    steps, games = best(lambda s: playouts(game, s), seconds)
    return {
        "steps_per_s": steps,
        "games_per_s": games,
        "clones_per_s": best(lambda s: clones(game, s), seconds / 2)[0],
    }


def _version() -> str:
    from importlib.metadata import version

    return version("open_spiel")


if __name__ == "__main__":
    sys.exit(main())
