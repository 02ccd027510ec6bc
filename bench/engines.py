"""Speed of each rules engine on one thread: random-playout steps and full games per second
(legal-action generation included), clone() per second, and determinizations per second
(resample of a true state, sample() of a sampler built from a seat's view), and example:ismcts's
iterations per second with the share of them spent drawing determinizations, against baselines
measured in the same run: OpenSpiel's pure-Python Kuhn poker under the same loop (in its own
interpreter, bench/.venv-openspiel), a plain-Python loop of the same shape, and copy.deepcopy
for clone().
Every figure is the best of 5 short runs, as the machine is shared.

Run: .venv/bin/python -m bench.engines [--seconds S] [--game NAME ...] [--only playouts]
Writes bench/results/engines.json.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import subprocess
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from arena_games import GAMES
from arena_games.base import GameOptions, GameState, SeatView
from arena_games.playout import play_out, random_policy, sample_chance
from arena_games.tracking import random_views

from bench.bench_report import Goal, Report, emit
from example_bots.ismcts_bot import Node, iterate

HERE = Path(__file__).resolve().parent
OPENSPIEL_PYTHON = HERE / ".venv-openspiel" / "bin" / "python"
SLICES = 5  # bench/openspiel_kuhn.py takes the best of as many


def best(run: Callable[[float], tuple[float, ...]], seconds: float) -> tuple[float, ...]:
    """The fastest of SLICES runs sharing seconds (by the first figure): on a shared machine the
    least disturbed run is the closest to the code's own speed, as timeit's advice goes."""
    return max((run(seconds / SLICES) for _ in range(SLICES)), key=lambda figures: figures[0])


def baseline_steps_per_second(seconds: float) -> tuple[float]:
    """A loop that keeps a 52-card list, picks random moves from a rebuilt list and appends to a
    history: what any pure-Python engine must at least do per step."""
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
    return (steps / (time.perf_counter() - started),)


def engine_steps_per_second(name: str, seconds: float) -> tuple[float, float]:
    """(steps per second, games per second) of seeded random playouts; a step is a chance
    outcome or a decision, as in OpenSpiel."""
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


def positions(name: str, count: int) -> list[GameState[GameOptions]]:
    """States from all through random games (start, middle, near the end), to clone."""
    game = GAMES[name]
    found: list[GameState[GameOptions]] = []
    seed = 0
    while len(found) < count:
        state = game.new_state(None, game.seat_counts[0])
        rng, policy = random.Random(seed), random_policy(random.Random(seed + 1))
        while not state.is_over():
            if seed % 7 == len(state.history) % 7:
                found.append(state.clone())
            if state.is_chance():
                state.apply_chance(sample_chance(state.chance_outcomes(), rng))
            else:
                for seat in state.to_move():
                    state.apply(seat, policy(state, seat, state.legal_actions(seat)))
        seed += 1
    return found[:count]


def copies_per_second(
    states: list[GameState[GameOptions]], seconds: float, deep: bool
) -> tuple[float]:
    """clone() (or copy.deepcopy when deep) per second, over the states in turn."""
    count = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for state in states:
            copy.deepcopy(state) if deep else state.clone()
        count += len(states)
    return (count / (time.perf_counter() - started),)


def views(name: str, count: int) -> list[tuple[GameState[GameOptions], SeatView]]:
    """(true state, deciding seat's view) at decisions spread through random games."""
    game = GAMES[name]
    found: list[tuple[GameState[GameOptions], SeatView]] = []
    seed = 0
    while len(found) < count:
        for index, (state, view) in enumerate(random_views(game, game.seat_counts[0], seed)):
            if index % 9 == seed % 9:
                found.append((state.clone(), view))
        seed += 1
    return found[:count]


def worlds_per_second(
    pairs: list[tuple[GameState[GameOptions], SeatView]], seconds: float, from_view: bool
) -> tuple[float]:
    """Determinizations per second, over the positions in turn: resample(seat) of the true
    state (its cache warm, as a search's root is), or sample() of a sampler built once from
    the seat's view (the building is left out: a bot builds it once per decision)."""
    rng = random.Random(3)
    draws: list[Callable[[], object]] = []
    for state, view in pairs:
        if from_view:
            draws.append(partial(GAMES[state_game(state)].world_sampler(view).sample, rng))
        else:
            draws.append(partial(state.resample, view.seat, rng))
            state.resample(view.seat, rng)  # warm any cache, as a search's root is
    count = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for draw in draws:
            draw()
        count += len(draws)
    return (count / (time.perf_counter() - started),)


def search_per_second(
    pairs: list[tuple[GameState[GameOptions], SeatView]], seconds: float
) -> tuple[float, float]:
    """example:ismcts's iterations per second over the positions in turn, each with its own
    tree and a sampler built once from the view, as the bot does at a decision; and the share
    of that time spent drawing the determinizations."""
    rng = random.Random(5)
    searches = [(GAMES[state_game(s)].world_sampler(view), Node()) for s, view in pairs]
    count, sampling = 0, 0.0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for sampler, root in searches:
            drawing = time.perf_counter()
            world = sampler.sample(rng)
            sampling += time.perf_counter() - drawing
            iterate(root, world, rng)
        count += len(searches)
    elapsed = time.perf_counter() - started
    return count / elapsed, sampling / elapsed


def state_game(state: GameState[GameOptions]) -> str:
    return next(n for n, g in GAMES.items() if isinstance(state, g.state_class))


def openspiel_kuhn(seconds: float, python: Path) -> dict[str, object]:
    """OpenSpiel's Kuhn poker figures from its own interpreter, or {"error": why not}."""
    if not python.exists():
        return {"error": f"{python} is missing: make bench-openspiel-env creates it"}
    script = HERE / "openspiel_kuhn.py"
    try:
        done = subprocess.run(
            [str(python), str(script), "--seconds", str(seconds)],
            capture_output=True,
            text=True,
            timeout=60 + 4 * seconds,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": "the OpenSpiel measurement did not finish in time"}
    try:
        result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"error": f"the OpenSpiel run failed: {done.stderr.strip()[-300:]}"}
    return result


def playouts_only(seconds: float, names: list[str]) -> Report:
    """Just the engines' playouts, for a profiler: no baselines, no clones."""
    rows: list[dict[str, object]] = []
    for name in names:
        steps, games = best(partial(engine_steps_per_second, name), seconds)
        rows.append({"engine": name, "steps/s": steps, "games/s": games})
    return Report("engines-playouts", "Rules engines: random playouts only", rows)


def measure(seconds: float, names: list[str], openspiel_python: Path) -> Report:
    kuhn = openspiel_kuhn(seconds, openspiel_python)
    cpp = kuhn.get("cpp")  # OpenSpiel's C++ Kuhn poker: a second figure to aim at
    (baseline,) = best(baseline_steps_per_second, seconds)
    rows: list[dict[str, object]] = []
    if "error" not in kuhn:
        rows.append(
            {
                "engine": "OpenSpiel python_kuhn_poker",
                "steps/s": kuhn["steps_per_s"],
                "games/s": kuhn["games_per_s"],
                "clones/s": kuhn["clones_per_s"],
            }
        )
        if isinstance(cpp, dict):
            rows.append(
                {
                    "engine": "OpenSpiel kuhn_poker (C++)",
                    "steps/s": cpp["steps_per_s"],
                    "games/s": cpp["games_per_s"],
                    "clones/s": cpp["clones_per_s"],
                }
            )
    rows.append({"engine": "plain-Python baseline", "steps/s": baseline})
    for name in names:
        steps, games = best(partial(engine_steps_per_second, name), seconds)
        states = positions(name, 50)
        (clones,) = best(partial(copies_per_second, states, deep=False), seconds / 2)
        (deep,) = best(partial(copies_per_second, states, deep=True), seconds / 4)
        decisions = views(name, 30)
        (resamples,) = best(partial(worlds_per_second, decisions, from_view=False), seconds / 2)
        (samples,) = best(partial(worlds_per_second, decisions, from_view=True), seconds / 2)
        iterations, sampling = best(partial(search_per_second, decisions), seconds)
        rows.append(
            {
                "engine": name,
                "steps/s": steps,
                "games/s": games,
                "clones/s": clones,
                "clone vs deepcopy": clones / deep,
                "resamples/s": resamples,
                "view samples/s": samples,
                "clones per resample": clones / resamples,
                "clones per view sample": clones / samples,
                "ISMCTS iterations/s": iterations,
                "ISMCTS time sampling": sampling,
                "steps vs plain": steps / baseline,
            }
        )
        if "error" not in kuhn:
            rows[-1]["steps vs Kuhn"] = steps / float(kuhn["steps_per_s"])  # type: ignore[arg-type]
            if isinstance(cpp, dict):
                rows[-1]["steps vs C++ Kuhn"] = steps / float(cpp["steps_per_s"])
    return _judge(Report("engines", "Rules engines: random playouts on one thread", rows), kuhn)


def _judge(report: Report, kuhn: dict[str, object]) -> Report:
    engines = [r for r in report.rows if "steps vs plain" in r]
    if "error" in kuhn:
        reference, key = "the plain-Python baseline", "steps vs plain"
        report.notes.append(f"OpenSpiel not measured: {kuhn['error']}")
    else:
        reference, key = "OpenSpiel's pure-Python Kuhn poker", "steps vs Kuhn"
        report.facts["OpenSpiel"] = f"open_spiel {kuhn['open_spiel']}, Python {kuhn['python']}"
    slowest = min(engines, key=lambda r: float(r[key]))  # type: ignore[arg-type]
    ratio = float(slowest[key])  # type: ignore[arg-type]
    report.goals.append(
        Goal(
            f"every engine at least as fast per step as {reference}",
            ratio >= 1.0,
            f"slowest: {slowest['engine']} at {ratio:.2f} x",
        )
    )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per engine and measure")
    parser.add_argument("--game", action="append", choices=sorted(GAMES), help="default: all")
    parser.add_argument("--openspiel-python", type=Path, default=OPENSPIEL_PYTHON)
    parser.add_argument(
        "--only", choices=["playouts"], help="skip baselines and clones (for a profiler)"
    )
    args = parser.parse_args()
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    names = args.game or sorted(GAMES)
    if args.only == "playouts":
        emit(playouts_only(args.seconds, names))
    else:
        emit(measure(args.seconds, names, args.openspiel_python))


if __name__ == "__main__":
    main()
