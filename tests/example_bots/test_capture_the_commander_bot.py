"""The Capture the Commander strategy bot: legal everywhere, fast, deterministic, heads for the
enemy commander, and beats the random bot in at least 75% of 400 seeded two-player games."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, cast

from arena.v1 import referee_pb2 as pb
from arena_games import cards, get_game
from arena_games.base import GameOptions, GameState
from arena_games.capture_the_commander import (
    COMMANDER,
    CaptureTheCommanderState,
    attack_action,
    decode,
    flip_action,
    fully_uncovered,
)
from arena_games.legal_actions import legal_action_messages
from arena_games.local_play import play_local
from arena_sdk.bot import unwrap

from example_bots.capture_the_commander_bot import CaptureTheCommanderBot, Table
from example_bots.random_bot import RandomBot
from referee.bots.launcher import examples

GAMES = 400
MIN_WIN_RATE = 0.75
# Timed in the CPU time of the deciding thread: other tests on the machine's cores (the suite
# runs on parallel workers) do not make the bot's decisions slower.
MAX_MS_PER_DECISION = 10.0
GAME = get_game("capture-the-commander")


class TimedBot(CaptureTheCommanderBot):
    """The strategy bot, checking each answer and timing itself."""

    def __init__(self) -> None:
        self.decisions = 0
        self.seconds = 0.0

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        started = time.thread_time()
        choice = super().act(observation, legal_actions)
        self.seconds += time.thread_time() - started
        self.decisions += 1
        assert isinstance(choice, int) and 0 <= choice < len(legal_actions)
        return choice


def test_registered_as_an_example() -> None:
    assert (
        examples()["capture-the-commander"]
        == "example_bots.capture_the_commander_bot:CaptureTheCommanderBot"
    )
    assert CaptureTheCommanderBot.name == "capture-the-commander-strategy"


def test_plays_every_seat_count_and_option() -> None:
    configs: list[tuple[int, dict[str, object]]] = [
        (3, {}),
        (4, {"twos_beat_aces": True}),
        (3, {"one_suit_each": True, "target_score": 10}),
        (4, {"teams": True}),
        (4, {"teams": True, "target_score": 30}),
    ]
    for index, (seats, options) in enumerate(configs):
        bots: list[Any] = [TimedBot() if s % 2 == 0 else RandomBot(s) for s in range(seats)]
        result = play_local(GAME, bots, deal=index, options=options)
        assert len(result.ranks) == seats


def test_deterministic() -> None:
    results = [play_local(GAME, [CaptureTheCommanderBot(), RandomBot(4)], deal=5) for _ in "ab"]
    assert results[0] == results[1]


def decide(state: CaptureTheCommanderState, seat: int) -> int:
    legal = legal_action_messages(cast("GameState[GameOptions]", state), seat)
    index = CaptureTheCommanderBot().act(unwrap(state.observation(seat)), legal)
    return state.legal_actions(seat)[index]


def dealt(layout: dict[tuple[int, int], str]) -> CaptureTheCommanderState:
    state = GAME.new_state({}, 2)
    assert isinstance(state, CaptureTheCommanderState)
    wanted = {where: cards.parse(text) for where, text in layout.items()}
    while state.is_chance():
        outcomes = [c for c, _ in state.chance_outcomes() if c not in wanted.values()]
        state.apply_chance(wanted.get(state.receiver(), outcomes[0]))
    return state


ALL_ACES = {(0, 1): "Ac", (0, 2): "Ad", (0, 3): "Ah", (0, 4): "As"}


def test_uses_its_known_high_cards_on_the_shortest_path() -> None:
    """Seat 0's ace and king have won once and are known: the bot attacks with one of them
    again, at a card whose loss brings seat 1's commander nearer (5 or 6, not 3 or 4)."""
    state = dealt({(0, 2): "Ac", (1, 2): "5d", (1, 1): "3h", (0, 1): "Kd"})
    state.apply(0, attack_action(2, 1, 2))
    state.apply(1, attack_action(1, 0, 1))  # 3h loses to Kd
    move = decode(decide(state, 0))
    assert move.kind == "attack" and move.slot in (1, 2) and move.target in (5, 6)


def march_to_slot_12(layout: dict[tuple[int, int], str]) -> CaptureTheCommanderState:
    """Seat 0 removes seat 1's 4, 7 and 10 with its ace in slot 1; seat 1 throws its first
    card at that ace each turn and loses."""
    state = dealt(layout)
    for target in (4, 7, 10):
        state.apply(0, attack_action(1, 1, target))
        state.apply(1, attack_action(fully_uncovered(state.formations[1])[0], 0, 1))
    return state


def test_attacks_an_exposed_commander_with_its_best_card() -> None:
    state = march_to_slot_12(ALL_ACES)
    state.apply(0, attack_action(1, 1, 12))
    state.apply(1, attack_action(fully_uncovered(state.formations[1])[0], 0, 1))
    assert state.to_move() == (0,)
    assert decide(state, 0) == attack_action(1, 1, COMMANDER)


def test_war_flips_avoid_an_unknown_commander() -> None:
    state = march_to_slot_12({(0, 1): "Ac", (0, 2): "Ad", (0, 3): "Ah", (1, 12): "As"})
    state.apply(0, attack_action(1, 1, 12))
    assert state.to_move() == (0, 1)
    assert flip_action(COMMANDER) in state.legal_actions(1)
    observation = unwrap(state.observation(1))
    assert Table(observation).war_flip(COMMANDER, observation.battle) < 0
    assert decide(state, 1) != flip_action(COMMANDER)


def test_beats_random_in_three_games_out_of_four() -> None:
    wins = 0
    timed = TimedBot()
    for game in range(GAMES):
        seat = game % 2
        bots: list[Any] = [RandomBot(10_000 + game)] * 2
        bots[seat] = timed
        result = play_local(GAME, bots, deal=game)
        wins += result.ranks[seat] == 0 and result.ranks[1 - seat] == 1
    assert wins / GAMES >= MIN_WIN_RATE, f"win rate {wins / GAMES:.3f}"
    ms = 1000 * timed.seconds / timed.decisions
    assert ms < MAX_MS_PER_DECISION, f"{ms:.2f} ms per decision"
