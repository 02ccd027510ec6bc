"""The referee builds each action's label and typed message once per game and reuses them
(referee/matches/decisions.py); that is only right if both depend on the action id alone.
Checked here over random playouts of every game at every seat count."""

from __future__ import annotations

import random

import pytest
from arena.v1 import referee_pb2 as pb
from arena_games import GAMES
from arena_games.legal_actions import legal_action_messages, resolve_decision
from arena_games.playout import sample_chance

CASES = [(name, seats) for name, game in GAMES.items() for seats in game.seat_counts]


@pytest.mark.parametrize(("name", "seats"), CASES)
def test_labels_and_messages_depend_on_the_action_alone(name: str, seats: int) -> None:
    game = GAMES[name]
    seen: dict[int, tuple[str, bytes]] = {}
    for seed in range(4):
        rng = random.Random(seed)
        state = game.new_state(None, seats)
        while not state.is_over():
            if state.is_chance():
                state.apply_chance(sample_chance(state.chance_outcomes(), rng))
                continue
            seat = state.to_move()[0]
            legal = state.legal_actions(seat)
            messages = legal_action_messages(state, seat)
            for index, (action, message) in enumerate(zip(legal, messages, strict=True)):
                fresh = (state.action_label(action), state.action_message(action))
                assert (message.index, message.label, message.action) == (index, *fresh)
                wire = fresh[1].SerializeToString(deterministic=True)
                assert seen.setdefault(action, (fresh[0], wire)) == (fresh[0], wire)
            choice = rng.randrange(len(legal))
            typed = pb.Decision(action=messages[choice].action)
            assert resolve_decision(state, seat, typed) == legal[choice]
            state.apply(seat, legal[choice])
