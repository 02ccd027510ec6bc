"""Strato-Sphere's balance, not its speed: how much the seat order decides, how games end and how
long they last, for the strategy bot against itself and the random bot against itself, at two
and four seats. Not part of bench.all (no baseline to be a ratio of); the figures answer the
fairness goal of the reach and dead-position rulings (docs/games/strato-sphere.md, "Balance").

Run: .venv/bin/python -m bench.strato_sphere_balance [--games N] [--seats 2 4] [--bots ...]
Writes bench/results/strato_sphere_balance.json.

EXPERIMENTS, NOT RULES: --first-round 4:1,2,3,4 plays the four-seat first round with other move
counts, by patching the engine in this process only (rules.FIRST_ROUND_MOVES); --komi 4:0.5
scores a four-seat game that ends by nodes counted (the cap, a dead position) with seat s's
count raised by 0.5 * s, as a komi would. Both measure what a rule change would do before
anyone rules it. Rows so measured carry "experiment" and are written to
strato_sphere_experiment.json instead, so they are never taken for the rules' figures.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from arena_games import get_game
from arena_games.base import Result
from arena_games.local_play import play_local_game
from arena_games.strato_sphere import StratoSphereState, rules
from arena_games.strato_sphere.rules import DRAW, PASS, decode
from arena_games.strato_sphere.state import ranked
from arena_sdk.bot import Bot

from bench.bench_report import RESULTS
from example_bots.random_bot import RandomBot
from example_bots.strato_sphere_bot import StratoSphereBot

GAME = get_game("strato-sphere")
BOTS: dict[str, Callable[[int], Bot]] = {
    "strategy": lambda seed: StratoSphereBot(),
    "random": RandomBot,
}


@dataclass
class Tally:
    """What a set of games between copies of one bot came to."""

    bots: str
    seats: int
    games: int = 0
    decided: int = 0  # games with one seat alone in first place
    first_by_seat: list[int] = field(default_factory=list)
    endings: Counter[str] = field(default_factory=Counter)
    first_turn: int = 0  # decided before the first turn ended
    first_round: int = 0  # decided before every seat had a turn
    turns: int = 0
    decisions: int = 0
    passes: Counter[str] = field(default_factory=Counter)

    def add(self, state: StratoSphereState) -> None:
        result = state.result()
        self.games += 1
        kind = ending(result.reason)
        # A zone is taken in the middle of a turn, which counts as played.
        self.turns += state.turns + (kind == "zone taken")
        self.endings[kind] += 1
        self.decisions += sum(1 for step in state.history if step.seat >= 0)
        self.passes.update(passes(state))
        firsts = [seat for seat, rank in enumerate(result.ranks) if rank == 0]
        if len(firsts) == 1:
            self.decided += 1
            self.first_by_seat[firsts[0]] += 1
            self.first_turn += state.turns == 0
            self.first_round += state.turns < state.num_seats

    def summary(self) -> dict[str, object]:
        shares = [round(n / self.decided, 3) if self.decided else None for n in self.first_by_seat]
        return {
            **{k: v for k, v in asdict(self).items() if k not in ("turns", "endings", "passes")},
            "endings": dict(self.endings),
            "passes": dict(self.passes),
            "seat_0_share_of_decided": shares[0],
            "first_share_by_seat": shares,
            "mean_turns": round(self.turns / self.games, 1),
        }


def passes(final: StratoSphereState) -> Counter[str]:
    """The game's passes, replayed: forced (nothing else legal), or by choice, split by what
    else was legal (only attacks, or more) and whether the hand was jammed (no card of the
    seat's force and no draw)."""
    counts: Counter[str] = Counter()
    state = GAME.new_state(None, final.num_seats)
    assert isinstance(state, StratoSphereState)
    for step in final.history:
        if step.seat >= 0 and step.action == PASS:
            legal = state.legal_actions(step.seat)
            if len(legal) == 1:
                counts["forced"] += 1
            else:
                counts["by choice"] += 1
                others = {decode(action)[0] for action in legal if action != PASS}
                counts["by choice, only attacks else"] += others == {"attack"}
                force = state.forces[step.seat]
                own = any(state.card_force[card] == force for card in state.hands[step.seat])
                counts["by choice, jammed hand"] += not own and DRAW not in legal
        state.apply_step(step)
    return counts


def ending(reason: str) -> str:
    if reason.startswith("dead position"):
        return "dead position"
    if reason.startswith("turn cap"):
        return "cap"
    return "zone taken"


def measure(bots: str, seats: int, games: int) -> Tally:
    tally = Tally(bots, seats, first_by_seat=[0] * seats)
    for deal in range(games):
        players = [BOTS[bots](deal * seats + seat) for seat in range(seats)]
        state = play_local_game(GAME, players, deal=1_000_000 + deal)
        assert isinstance(state, StratoSphereState)
        tally.add(state)
    return tally


def first_round(text: str) -> tuple[int, tuple[int, ...]]:
    """--first-round SEATS:MOVES,MOVES,...: an experiment's first round for one seat count."""
    try:
        seats, moves = text.split(":")
        counts = tuple(int(n) for n in moves.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not SEATS:MOVES,... (4:1,2,3,3)") from None
    if int(seats) not in rules.FIRST_ROUND_MOVES or len(counts) != int(seats):
        raise argparse.ArgumentTypeError(f"{text!r}: give one move count per seat, 2 or 4 seats")
    if not all(1 <= n <= rules.MOVES_PER_TURN + 3 for n in counts):
        raise argparse.ArgumentTypeError(f"{text!r}: move counts go from 1 to 6")
    return int(seats), counts


def komi(text: str) -> tuple[int, float]:
    """--komi SEATS:K: an experiment's komi, K nodes per seat position, for one seat count."""
    try:
        seats, per_seat = text.split(":")
        return int(seats), float(per_seat)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not SEATS:NODES (4:0.5)") from None


def with_komi(komis: dict[int, float]) -> None:
    """EXPERIMENT: games ending by nodes counted are scored with seat s's count + K * s."""
    plain = StratoSphereState.result

    def result(state: StratoSphereState) -> Result:
        per_seat = komis.get(state.num_seats, 0.0)
        if not per_seat or state.winner is not None or not state.over_reason:
            return plain(state)
        control = state.control()
        standing = [control.count(s) + per_seat * s for s in range(state.num_seats)]
        return ranked(standing, state.over_reason)

    StratoSphereState.result = result  # type: ignore[method-assign,assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seats", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--bots", nargs="+", default=["strategy", "random"], choices=list(BOTS))
    parser.add_argument(
        "--first-round",
        type=first_round,
        action="append",
        default=[],
        metavar="SEATS:MOVES,...",
        help="EXPERIMENT, not a rule: play that seat count's first round with these move counts",
    )
    parser.add_argument(
        "--komi",
        type=komi,
        action="append",
        default=[],
        metavar="SEATS:NODES",
        help="EXPERIMENT, not a rule: at the cap or a dead position seat s counts NODES * s more",
    )
    args = parser.parse_args()
    experiment: dict[str, object] = {
        f"first round, {seats} seats": list(moves) for seats, moves in args.first_round
    }
    experiment |= {f"komi per seat position, {seats} seats": k for seats, k in args.komi}
    for seats, moves in args.first_round:
        rules.FIRST_ROUND_MOVES[seats] = moves  # this process only
    if args.komi:
        with_komi(dict(args.komi))
    rows = []
    for bots in args.bots:
        for seats in args.seats:
            start = time.perf_counter()
            row = measure(bots, seats, args.games).summary()
            row["seconds"] = round(time.perf_counter() - start, 1)
            if experiment:
                row["experiment"] = experiment
            rows.append(row)
            print(json.dumps(row))
    load = os.getloadavg()[0]
    print(f"load average {load:.2f}")
    RESULTS.mkdir(exist_ok=True)
    name = "strato_sphere_experiment.json" if experiment else "strato_sphere_balance.json"
    out = RESULTS / name
    out.write_text(json.dumps({"load": load, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
