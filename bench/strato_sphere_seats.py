"""Why four seats of Strato-Sphere stay skewed: what decides the games between four copies of
the strategy bot, on the same seeded deals as bench.strato_sphere_balance. Replays each game and
counts: each seat's share of decided games, by ending; in which order seats took their forces;
whether each seat's first reveal kept its node or handed it to another seat; the mean nodes
held by seat at turns 4..200; whether the cap's winner already led alone at turns 8, 40, 200;
attacks by the defender's place after the attacker; which seat took which zone.

Run: .venv/bin/python -m bench.strato_sphere_seats [--games N]
     [--first-round 4:1,2,3,3] [--komi 4:0.5] [--forces-at-deal]
EXPERIMENTS, NOT RULES: --first-round and --komi as in bench.strato_sphere_balance;
--forces-at-deal gives seat s the s-th suit before the first move (the seed has a seat's first
reveal decide it). Each patches the engine in this process only. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter, defaultdict
from typing import Any

from arena_games import get_game
from arena_games.local_play import play_local_game
from arena_games.strato_sphere import StratoSphereState, rules
from arena_games.strato_sphere.state import StratoSphereOptions

from bench.strato_sphere_balance import ending, first_round, komi, with_komi
from example_bots.strato_sphere_bot import StratoSphereBot

GAME = get_game("strato-sphere")
SEATS = 4
SNAPSHOTS = (4, 8, 20, 40, 200)
LEADS = (8, 40, 200)


class Probe:
    """The counts over a set of four-seat games."""

    def __init__(self) -> None:
        self.games = 0
        self.wins: defaultdict[str, Counter[int]] = defaultdict(Counter)
        self.force_order: defaultdict[int, Counter[int]] = defaultdict(Counter)
        self.first_reveal: defaultdict[int, Counter[str]] = defaultdict(Counter)
        self.nodes = {turn: [0] * SEATS for turn in SNAPSHOTS}
        self.cap_leader: Counter[str] = Counter()
        self.attacks: Counter[int] = Counter()
        self.zones: Counter[str] = Counter()

    def add(self, final: StratoSphereState) -> None:
        self.games += 1
        result = final.result()
        kind = ending(result.reason)
        leads = self._replay(final)
        firsts = [seat for seat, rank in enumerate(result.ranks) if rank == 0]
        if len(firsts) != 1:
            return
        winner = firsts[0]
        self.wins[kind][winner] += 1
        if kind == "zone taken":
            taken = [z for z in range(SEATS) if z != winner and _holds(final, winner, z)]
            self.zones[f"{winner}>{taken[0]}"] += 1
        else:
            for turn in LEADS:
                self.cap_leader[
                    f"turn {turn}: {'led' if leads.get(turn) == winner else 'not'}"
                ] += 1

    def _replay(self, final: StratoSphereState) -> dict[int, int | None]:
        """Steps the game again; the seat leading alone at each of LEADS (None: a tie)."""
        state = GAME.new_state(final.options, SEATS)
        assert isinstance(state, StratoSphereState)
        order: list[int] = []
        revealed: set[int] = set()
        leads: dict[int, int | None] = {}
        for step in final.history:
            if step.seat >= 0:
                self._decision(state, step.seat, step.action, revealed)
            turns = state.turns
            state.apply_step(step)
            order += [s for s in range(SEATS) if state.forces[s] and s not in order]
            if state.turns != turns and state.turns in SNAPSHOTS:
                counts = [state.control().count(s) for s in range(SEATS)]
                self.nodes[state.turns] = [
                    a + b for a, b in zip(self.nodes[state.turns], counts, strict=True)
                ]
                top = [s for s in range(SEATS) if counts[s] == max(counts)]
                leads[state.turns] = top[0] if len(top) == 1 else None
        for place, seat in enumerate(order):
            self.force_order[seat][place] += 1
        return leads

    def _decision(self, state: StratoSphereState, seat: int, action: int, seen: set[int]) -> None:
        kind, a, b = rules.decode(action)
        if kind == "attack":
            defender = state.controller(b)
            assert defender is not None
            self.attacks[(defender - seat) % SEATS] += 1
        if kind == "reveal" and seat not in seen:
            seen.add(seat)
            after = state.clone()
            after.apply(seat, action)
            owner = after.controller(a)
            self.first_reveal[seat]["kept" if owner == seat else "other"] += 1

    def summary(self) -> dict[str, Any]:
        decided = sum(sum(c.values()) for c in self.wins.values())
        by_seat = [sum(c[s] for c in self.wins.values()) for s in range(SEATS)]
        return {
            "games": self.games,
            "decided": decided,
            "share": [round(n / decided, 3) if decided else None for n in by_seat],
            "wins_by_ending": {k: [c[s] for s in range(SEATS)] for k, c in self.wins.items()},
            "force_taken_nth_by_seat": {
                s: [self.force_order[s][n] for n in range(SEATS)] for s in range(SEATS)
            },
            "first_reveal_by_seat": {s: dict(self.first_reveal[s]) for s in range(SEATS)},
            "mean_nodes_by_seat_at_turn": {
                t: [round(n / self.games, 2) for n in v] for t, v in self.nodes.items()
            },
            "cap_winner_led_alone_at": dict(sorted(self.cap_leader.items())),
            "attacks_by_defender_after_attacker": dict(sorted(self.attacks.items())),
            "zone_taken_winner_zone": dict(sorted(self.zones.items())),
        }


def _holds(state: StratoSphereState, seat: int, zone: int) -> bool:
    return all(state.controller(node) == seat for node in rules.zone_nodes(zone))


def forces_at_deal() -> None:
    """EXPERIMENT: seat s holds the s-th suit from the start; no reveal assigns one."""
    plain = StratoSphereState.__init__

    def dealt_forces(state: StratoSphereState, options: StratoSphereOptions, seats: int) -> None:
        plain(state, options, seats)
        state.forces = list(rules.forces_in_play(seats))

    StratoSphereState.__init__ = dealt_forces  # type: ignore[method-assign,assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=150)
    parser.add_argument("--first-round", type=first_round, help="EXPERIMENT, not a rule")
    parser.add_argument("--komi", type=komi, help="EXPERIMENT, not a rule")
    parser.add_argument("--forces-at-deal", action="store_true", help="EXPERIMENT, not a rule")
    args = parser.parse_args()
    experiment: dict[str, object] = {}
    if args.first_round:
        seats, moves = args.first_round
        rules.FIRST_ROUND_MOVES[seats] = moves
        experiment["first round"] = list(moves)
    if args.komi:
        with_komi(dict([args.komi]))
        experiment["komi per seat position"] = args.komi[1]
    if args.forces_at_deal:
        forces_at_deal()
        experiment["forces at the deal"] = True
    start = time.perf_counter()
    probe = Probe()
    for deal in range(args.games):
        bots = [StratoSphereBot() for _ in range(SEATS)]
        final = play_local_game(GAME, bots, deal=1_000_000 + deal)
        assert isinstance(final, StratoSphereState)
        probe.add(final)
    row = probe.summary()
    row["seconds"] = round(time.perf_counter() - start, 1)
    row["load"] = round(os.getloadavg()[0], 2)
    if experiment:
        row["experiment"] = experiment
    print(json.dumps(row))


if __name__ == "__main__":
    main()
