"""Game-agnostic invariants that every rules engine must keep, the OpenSpiel way.

Each game's test module drives its engine through these helpers:

- `check_step(state)` after every step of a random game: whose move, legal lists, labels, the
  typed form of every action, chance probabilities, result shape, clone equality and
  independence; `check_step(state, thorough=False)` keeps only the structural part, for
  thousands of games. `check_action_round_trip(state, seat)` calls `action_for` on every
  legal action (quadratic, for a sample of states).
- `check_events(events, num_seats)` on what every step returned: audiences well formed.
- `check_history_round_trip(game, state)`: the history alone rebuilds the state.
- `random_playouts(game, count, seed, ...)`: seeded random games with all of the above, and the
  decision count kept under the game's cap.
- `trajectory_hash` / `check_determinism`: the same seed gives the same game, even with the
  global `random` module disturbed before and during the second run.
- `check_information(game, state, rng, tries)`: what a seat cannot see may be re-dealt
  (`resample`) without changing anything that seat (or a spectator) can see.

No test functions live here; the module is imported by the per-game test modules.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from functools import partial
from itertools import pairwise
from typing import Any, TypeVar

from arena_games.base import CHANCE, Event, GameDefinition, GameOptions, GameState
from arena_games.playout import play_out, random_policy, sample_chance

OptionsT = TypeVar("OptionsT", bound=GameOptions)

PROBABILITY_TOLERANCE = 1e-9


def decisions_made(state: GameState[Any]) -> int:
    """Decisions in the history: every step that is not a chance outcome."""
    return sum(1 for step in state.history if step.seat != CHANCE)


def check_result(state: GameState[Any]) -> None:
    """A finished game's result: one rank and one score per seat, ranks in 0..n-1, a reason."""
    result = state.result()
    n = state.num_seats
    assert len(result.ranks) == n, result
    assert len(result.scores) == n, result
    assert all(0 <= r < n for r in result.ranks), result
    assert min(result.ranks) == 0, result
    assert isinstance(result.reason, str) and result.reason.strip(), result


def check_legal(
    state: GameState[Any],
    seat: int,
    *,
    thorough: bool = True,
    labels: dict[int, str] | None = None,
) -> None:
    """The legal list of a seat that must decide: non-empty, sorted, unique.

    thorough=True adds the labels and typed forms: labels unique and non-empty (and, given
    `labels`, the same label as every earlier sighting of the action); the typed messages of
    the legal actions pairwise distinct, compared by deterministic serialization, and
    `action_for` mapping the first one back. With distinct messages, base `action_for` (the
    first legal action whose message is equal) maps every message back to its action, so this
    checks the round trip for every action in linear time; check_action_round_trip calls
    `action_for` on each action (quadratic) for a sample of states, and always here when the
    game overrides `action_for`."""
    legal = state.legal_actions(seat)
    assert legal, f"seat {seat} must move but has no legal action"
    assert all(a < b for a, b in pairwise(legal)), f"legal list not sorted and unique: {legal}"
    if not thorough:
        return
    seen_labels: set[str] = set()
    forms: set[bytes] = set()
    for action in legal:
        label = state.action_label(action)
        assert isinstance(label, str) and label.strip(), f"empty label for {action}"
        assert label not in seen_labels, f"label {label!r} used twice"
        seen_labels.add(label)
        if labels is not None:
            assert labels.setdefault(action, label) == label, (
                f"action {action} labelled {label!r}, earlier {labels[action]!r}"
            )
        forms.add(state.action_message(action).SerializeToString(deterministic=True))
    assert len(forms) == len(legal), "two legal actions share one typed message"
    if type(state).action_for is not GameState.action_for:
        check_action_round_trip(state, seat)  # the argument above holds for base only
        return
    assert state.action_for(state.action_message(legal[0]), seat) == legal[0], (
        f"action {legal[0]} ({state.action_label(legal[0])}) does not map back"
    )


def check_action_round_trip(state: GameState[Any], seat: int) -> None:
    """action_for(action_message(a), seat) == a for every legal action, called one by one
    (quadratic: use on a sample of states)."""
    for action in state.legal_actions(seat):
        assert state.action_for(state.action_message(action), seat) == action, (
            f"action {action} ({state.action_label(action)}) does not map back"
        )


def check_chance(state: GameState[Any]) -> None:
    """Chance outcomes: non-empty, unique, positive, summing to 1."""
    outcomes = state.chance_outcomes()
    assert outcomes, "chance step with no outcome"
    ids = [o for o, _ in outcomes]
    assert len(ids) == len(set(ids)), f"repeated chance outcomes: {ids}"
    assert all(p > 0 for _, p in outcomes), outcomes
    total = sum(p for _, p in outcomes)
    assert abs(total - 1.0) <= PROBABILITY_TOLERANCE, f"chance probabilities sum to {total}"


def check_clone(state: GameState[Any], *, independent: bool = True) -> None:
    """clone() equals the state; with independent=True, one step applied to the clone leaves
    the original untouched."""
    copy = state.clone()
    before = state.key()
    assert copy.key() == before, "clone differs from the original"
    if not independent or state.is_over():
        return
    if copy.is_chance():
        copy.apply_chance(copy.chance_outcomes()[0][0])
    else:
        seat = copy.to_move()[0]
        copy.apply(seat, copy.legal_actions(seat)[0])
    assert state.key() == before, "applying a step to a clone changed the original"
    assert copy.key() != before, "a step applied to the clone left it equal to the original"


def check_step(
    state: GameState[Any],
    *,
    thorough: bool = True,
    labels: dict[int, str] | None = None,
) -> None:
    """Every invariant a state keeps between steps.

    Always: not a chance step and a decision at once; over means nobody to move and a well
    formed result; not over means something can happen; chance outcomes unique, positive and
    summing to 1; every seat to move has a non-empty, sorted, unique legal list and every other
    seat an empty one. thorough=True adds the labels and typed forms (see check_legal), and
    clone() equal to the state and independent of it."""
    movers = state.to_move()
    chance = state.is_chance()
    assert not (chance and movers), "a chance step and a decision pending at once"
    assert len(set(movers)) == len(movers), f"to_move repeats a seat: {movers}"
    assert all(0 <= s < state.num_seats for s in movers), movers
    if state.is_over():
        assert not movers, "game over but seats still to move"
        assert not chance, "game over but a chance step pending"
        check_result(state)
    else:
        assert chance or movers, "game not over but nothing can happen"
    if chance:
        check_chance(state)
    for seat in range(state.num_seats):
        if seat in movers:
            check_legal(state, seat, thorough=thorough, labels=labels)
        else:
            assert state.legal_actions(seat) == [], f"seat {seat} is not to move but has actions"
    if thorough:
        check_clone(state)


def check_events(events: list[Event], num_seats: int) -> None:
    """Each event's audience: public, or a set of real seats (empty: the referee alone, as for
    cards nobody may see), and the wire message says the same."""
    for event in events:
        message = event.message
        assert message.public == event.public, event
        if event.audience is None:
            assert not list(message.audience), event
        else:
            assert all(0 <= s < num_seats for s in event.audience), event
            assert list(message.audience) == sorted(event.audience), event


def check_history_round_trip(game: GameDefinition[OptionsT], state: GameState[OptionsT]) -> None:
    """A fresh state with every step of the history re-applied equals the state."""
    fresh = game.new_state(state.options, state.num_seats)
    for step in state.history:
        fresh.apply_step(step)
    assert fresh == state, "re-applying the history does not rebuild the state"


def play_one(
    game: GameDefinition[OptionsT],
    chance_rng: random.Random,
    policy_rng: random.Random,
    num_seats: int = 2,
    options: OptionsT | dict[str, object] | None = None,
    after_step: Callable[[GameState[OptionsT], list[Event]], None] | None = None,
    max_steps: int | None = None,
    stop_at: int | None = None,
) -> GameState[OptionsT]:
    """One game: chance from chance_rng, each decision uniformly from the legal list with
    policy_rng (one rng.random() per decision). Seats to move decide one at a time, lowest
    listed first; after_step sees the state and the events of every single step. With stop_at,
    the game stops there when its history is that long."""
    state = game.new_state(options, num_seats)
    limit = max_steps if max_steps is not None else 50 * game.decision_cap + 10_000
    steps = 0
    while not state.is_over() and len(state.history) != stop_at:
        if state.is_chance():
            events = state.apply_chance(sample_chance(state.chance_outcomes(), chance_rng))
        else:
            seat = state.to_move()[0]
            legal = state.legal_actions(seat)
            events = state.apply(seat, legal[int(policy_rng.random() * len(legal))])
        steps += 1
        assert steps <= limit, f"no end after {steps} steps"
        if after_step is not None:
            after_step(state, events)
    return state


def position_at(game: GameDefinition[OptionsT], seed: int, length: int) -> GameState[OptionsT]:
    """A random two-seat game (play_one's) stopped when its history is `length` steps long."""
    state = play_one(game, *game_rngs(seed, 0), stop_at=length)
    assert len(state.history) == length, f"the game ended before {length} steps"
    return state


def game_rngs(seed: int, index: int) -> tuple[random.Random, random.Random]:
    """The chance and policy generators of game `index` of a run seeded with `seed`."""
    return random.Random(f"{seed}:{index}:chance"), random.Random(f"{seed}:{index}:policy")


def random_playouts(
    game: GameDefinition[OptionsT],
    count: int,
    seed: int,
    num_seats: int = 2,
    options: OptionsT | dict[str, object] | None = None,
    per_step: Callable[[GameState[OptionsT]], None] | None = None,
    check_every_step: bool = True,
    *,
    thorough_games: int | None = None,
    round_trip_every: int = 1,
    max_decisions: int | None = None,
) -> list[GameState[OptionsT]]:
    """`count` seeded random games; returns the final states.

    After every step: check_step (when check_every_step), check_events, then per_step(state).
    The first `thorough_games` games (all when None) get the thorough check_step; the rest the
    cheap one (structure only: no labels, typed forms or clones). Labels must stay the same
    for an action across all games. At the end of each game: a well formed result, the
    decisions (history steps that are not chance) at most `max_decisions` (default
    game.decision_cap), and the history round trip (in every thorough game, and in every
    `round_trip_every`-th of the others: it costs as much as the game)."""
    cap = game.decision_cap if max_decisions is None else max_decisions
    labels: dict[int, str] = {}
    finals: list[GameState[OptionsT]] = []
    for index in range(count):
        thorough = thorough_games is None or index < thorough_games

        def after_step(
            state: GameState[OptionsT], events: list[Event], deep: bool = thorough
        ) -> None:
            if check_every_step:
                check_step(state, thorough=deep, labels=labels)
            check_events(events, state.num_seats)
            if per_step is not None:
                per_step(state)

        chance_rng, policy_rng = game_rngs(seed, index)
        final = play_one(game, chance_rng, policy_rng, num_seats, options, after_step)
        check_result(final)
        if thorough or index % round_trip_every == 0:
            check_history_round_trip(game, final)
        assert decisions_made(final) <= cap
        finals.append(final)
    return finals


def trajectory_hash(
    game: GameDefinition[OptionsT],
    seed: int,
    num_seats: int = 2,
    options: OptionsT | dict[str, object] | None = None,
    *,
    disturb: bool = False,
) -> str:
    """SHA-256 of one seeded random game: every step, every event (text, audience, wire form)
    and the result. With disturb=True the global `random` module is re-seeded and drawn from
    after every step (its state is restored afterwards), which must change nothing."""
    digest = hashlib.sha256()
    saved = random.getstate()

    def after_step(state: GameState[OptionsT], events: list[Event]) -> None:
        step = state.history[-1]
        digest.update(f"{step.seat}:{step.action};".encode())
        for event in events:
            audience = "*" if event.audience is None else sorted(event.audience)
            digest.update(f"{audience}|".encode())
            digest.update(event.message.SerializeToString(deterministic=True))
        if disturb:
            random.seed(len(state.history) * 7 + 1)
            random.random()

    try:
        if disturb:
            random.seed(987654321)
            for _ in range(17):
                random.random()
        chance_rng, policy_rng = game_rngs(seed, 0)
        final = play_one(game, chance_rng, policy_rng, num_seats, options, after_step)
    finally:
        random.setstate(saved)
    result = final.result()
    digest.update(f"{result.ranks}{result.scores}{result.reason}".encode())
    return digest.hexdigest()


def check_determinism(
    game: GameDefinition[OptionsT],
    seed: int,
    num_seats: int = 2,
    options: OptionsT | dict[str, object] | None = None,
) -> str:
    """The same seed gives the same trajectory hash, with the global `random` disturbed before
    and during the second run; returns the hash."""
    first = trajectory_hash(game, seed, num_seats, options)
    second = trajectory_hash(game, seed, num_seats, options, disturb=True)
    assert first == second, f"seed {seed}: two runs differ"
    return first


def check_information(
    game: GameDefinition[OptionsT],
    state: GameState[OptionsT],
    rng: random.Random,
    tries: int,
    *,
    replays: bool = True,
) -> None:
    """For every seat and `tries` resamples of what it cannot see: the seat's observation, the
    public observation, whose move it is and the seat's legal actions are unchanged; the
    original is untouched; the resampled state keeps check_step and its own history
    round-trips. replays=False is for an engine whose resample deals a world without a history
    (its chance outcomes are not the match's): the history is empty, and instead of a round
    trip the world plays on by the rules to the end, every step checked."""
    before = state.key()
    public = state.observation(None)
    movers = state.to_move()
    for seat in range(state.num_seats):
        mine = state.observation(seat)
        legal = state.legal_actions(seat)
        for _ in range(tries):
            world = state.resample(seat, rng)
            assert world.observation(seat) == mine, f"resample changed what seat {seat} sees"
            assert world.observation(None) == public, "resample changed the public observation"
            assert world.to_move() == movers
            assert world.is_chance() == state.is_chance()
            assert world.is_over() == state.is_over()
            assert world.legal_actions(seat) == legal, f"resample changed seat {seat}'s actions"
            check_step(world, thorough=False)
            if not replays:
                assert world.history == [], "a dealt world has a history it did not play"
                play_out(world, rng, random_policy(rng), partial(check_step, thorough=False))
                continue
            assert len(world.history) == len(state.history)
            own = [(i, s) for i, s in enumerate(state.history) if s.seat == seat]
            assert all(world.history[i] == s for i, s in own), "seat's own decisions changed"
            check_history_round_trip(game, world)
    assert state.key() == before, "resample changed the original state"
