"""Information Set Monte Carlo Tree Search (single-observer ISMCTS, Cowling, Powley and
Whitehouse 2012) for any game, searching with the arena's own engines in the bot's process.

The bot sees only its own messages. A SeatTracker (arena_games.tracking) keeps them and, at each
request, builds a WorldSampler: every iteration searches one determinization, a world drawn
uniformly from those consistent with what this seat saw. One tree is shared by all of them; its
edges are (seat, engine action), and a node's children are scored by UCB over the iterations in
which they were legal (the "availability" count). Chance is sampled as the engine lists it,
playouts are uniformly random, and a seat's reward comes from its rank (rank_reward). The answer is
the most visited action at the root (ties: the best mean, then at random).

With `split_on_sight` (off by default) the tree also branches after each step on what this
seat saw of it (the cards a battle turns up, a card it draws), so that what it plans next may
depend on it. It costs iterations (the split reads each step's events, which plain search never
builds) and spreads them over more nodes; docs/local-play.md gives what it made of Capture the
Commander (bench.ismcts_strength --searcher observing).

Budget per decision, first that applies: the bot's own `seconds` or `iterations` (set when it is
made, or by ARENA_ISMCTS_SECONDS / ARENA_ISMCTS_ITERATIONS in its environment), else half the
match's time per decision.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import time
from collections.abc import Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_games.base import Event, GameOptions, GameState, WorldSampler
from arena_games.playout import sample_chance
from arena_games.tracking import SeatTracker, rank_reward
from arena_sdk.bot import Bot

EXPLORATION = 0.7  # UCB's constant for rewards in [0, 1]
DECISION_SHARE = 0.5  # of the match's time per decision, when no budget is set
FALLBACK_SECONDS = 0.1  # a match that sends no time control

Edge = tuple[int, int]  # (seat, engine action)


class Node:
    """The statistics of one edge of the tree, from the point of view of the seat that took
    it."""

    __slots__ = ("available", "children", "reward", "seen", "visits")

    def __init__(self) -> None:
        self.children: dict[Edge, Node] = {}
        self.seen: dict[tuple[bytes, ...], Node] = {}  # split_on_sight's: what follows each sight
        self.visits = 0
        self.reward = 0.0
        self.available = 1

    def ucb(self) -> float:
        exploit = self.reward / self.visits
        return exploit + EXPLORATION * math.sqrt(math.log(self.available) / self.visits)


class IsmctsBot(Bot):
    name = "ismcts"

    def __init__(
        self,
        seconds: float | None = None,
        iterations: int | None = None,
        seed: int = 0,
        split_on_sight: bool = False,
    ) -> None:
        self.seconds = seconds if seconds is not None else _env_float("ARENA_ISMCTS_SECONDS")
        self.iterations = (
            iterations if iterations is not None else _env_int("ARENA_ISMCTS_ITERATIONS")
        )
        self.seed = seed
        self.split_on_sight = split_on_sight
        self.tracker = SeatTracker()
        self.rng = random.Random(seed)
        self.decision_s = FALLBACK_SECONDS
        self.searched = 0  # iterations of the last decision, for logs and benchmarks

    def on_match_start(self, match: pb.MatchStart) -> None:
        self.tracker.on_match_start(match)
        deal = match.deal_commitment or match.match_id
        self.rng = random.Random(
            hashlib.sha256(f"{deal}:{match.seat}:{self.seed}".encode()).digest()
        )
        if match.time_control.decision_ms:
            self.decision_s = DECISION_SHARE * match.time_control.decision_ms / 1000

    def on_event(self, event: pb.Event) -> None:
        self.tracker.on_event(event)

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        if len(legal_actions) == 1:
            return 0
        sampler = self.tracker.sampler(observation, legal_actions)
        root = Node()
        choices = self._search(sampler, root)
        # Most visited; a short search leaves many ties, broken by the mean reward, then at
        # random: never by the order of the legal actions (the first is often a pass).
        ranked = [(_standing(root, (sampler.seat, a)), self.rng.random()) for a in choices]
        return ranked.index(max(ranked))

    def _search(self, sampler: WorldSampler[GameOptions], root: Node) -> list[int]:
        """Iterate within the budget; the seat's legal actions as engine ids, in the order of
        the request's indices (the same in every world: the sampler's promise)."""
        world = sampler.sample(self.rng)
        choices = world.legal_actions(sampler.seat)
        limit = self.iterations
        deadline = None if limit else time.perf_counter() + (self.seconds or self.decision_s)
        done = 0
        observer = sampler.seat if self.split_on_sight else None
        while True:
            iterate(root, world, self.rng, observer)
            done += 1
            if (limit and done >= limit) or (deadline and time.perf_counter() >= deadline):
                break
            world = sampler.sample(self.rng)
        self.searched = done
        return choices


def iterate(
    root: Node, world: GameState[GameOptions], rng: random.Random, observer: int | None = None
) -> None:
    """One iteration on one determinization: select and expand down the tree, play out at
    random, and back up each seat's score along the path taken. With an observer the tree
    branches after each step on what that seat saw of it."""
    path = _descend(root, world, rng, observer)
    while not world.is_over():
        _step_at_random(world, rng)
    ranks = world.result().ranks
    rewards = [rank_reward(ranks, seat) for seat in range(len(ranks))]
    for seat, node in path:
        node.visits += 1
        node.reward += rewards[seat]


def _descend(
    root: Node, world: GameState[GameOptions], rng: random.Random, observer: int | None
) -> list[tuple[int, Node]]:
    node, path = root, []
    while not world.is_over():
        if world.is_chance():
            events = world.apply_chance(sample_chance(world.chance_outcomes(), rng))
            node = _after_sight(node, events, observer)
            continue
        # Seats that choose at once are taken one after the other: none sees the others' choice,
        # as the engine hides them until all have chosen.
        for seat in world.to_move():
            edge, expanded = _select(node, seat, world.legal_actions(seat), rng)
            node = node.children[edge]
            path.append((seat, node))
            events = world.apply(seat, edge[1])
            if expanded:
                return path
            node = _after_sight(node, events, observer)
    return path


def _after_sight(node: Node, events: list[Event], observer: int | None) -> Node:
    """Where the tree goes on after a step: the same node, or with an observer, the branch
    for what it saw of the step."""
    if observer is None:
        return node
    sight = tuple(
        e.message.SerializeToString(deterministic=True) for e in events if e.visible_to(observer)
    )
    return node.seen.setdefault(sight, Node())


def _select(node: Node, seat: int, legal: list[int], rng: random.Random) -> tuple[Edge, bool]:
    """The edge to follow, and whether it is new. Every legal edge already in the tree counts
    one more availability; an untried one is expanded first."""
    untried = []
    best, best_score = None, -1.0
    for action in legal:
        child = node.children.get((seat, action))
        if child is None:
            untried.append(action)
            continue
        child.available += 1
        score = child.ucb()
        if score > best_score:
            best, best_score = (seat, action), score
    if untried:
        edge = (seat, rng.choice(untried))
        node.children[edge] = Node()
        return edge, True
    assert best is not None
    return best, False


def _step_at_random(world: GameState[GameOptions], rng: random.Random) -> None:
    if world.is_chance():
        world.apply_chance(sample_chance(world.chance_outcomes(), rng))
        return
    for seat in world.to_move():
        world.apply(seat, rng.choice(world.legal_actions(seat)))


def _standing(root: Node, edge: Edge) -> tuple[int, float]:
    """An action's visits and mean reward at the root (never tried: last)."""
    child = root.children.get(edge)
    return (child.visits, child.reward / child.visits) if child else (-1, 0.0)


def _env_float(name: str) -> float | None:
    value = os.environ.get(name)
    return float(value) if value else None


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    return int(value) if value else None
