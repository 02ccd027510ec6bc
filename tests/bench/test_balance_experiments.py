"""bench.strato_sphere_balance's experiments are patches of this process, not rules: the komi
re-scores only a game ended by nodes counted (control: the engine's own result, the same board),
and is undone with the patch; a bad experiment argument is refused in one line."""

from __future__ import annotations

import argparse

import pytest
from arena_games import get_game
from arena_games.strato_sphere import StratoSphereState
from arena_games.strato_sphere.rules import CLUBS, DIAMONDS, HEARTS, SPADES

from bench import strato_sphere_balance as balance


def capped(winner: int | None = None) -> StratoSphereState:
    """Four seats at the cap: seat 0 holds two nodes, seat 3 one (the 2 of each seat's suit)."""
    state = get_game("strato-sphere").new_state(None, 4)
    assert isinstance(state, StratoSphereState)
    state.forces = [CLUBS, DIAMONDS, HEARTS, SPADES]
    state.face_up[0], state.face_up[1], state.face_up[9] = 0, 52, 39
    state.over_reason = "turn cap of 600 reached; nodes controlled 2-0-0-1"
    state.winner = winner
    return state


def test_komi_rescores_the_cap_and_nothing_else(monkeypatch: pytest.MonkeyPatch) -> None:
    assert capped().result().ranks == (0, 2, 2, 1)  # control: the rules' result
    monkeypatch.setattr(StratoSphereState, "result", StratoSphereState.result)
    balance.with_komi({4: 0.5})
    # 2 + 0 against 1 + 1.5: seat 3 ranks first, seat 0 second.
    assert capped().result().ranks == (1, 3, 2, 0)
    assert capped(winner=0).result().ranks[0] == 0  # a zone taken is not re-scored


@pytest.mark.parametrize(
    ("parse", "text", "said"),
    [
        (balance.first_round, "4:1,2,3", "give one move count per seat"),
        (balance.first_round, "4:1,2,3,9", "move counts go from 1 to 6"),
        (balance.first_round, "x", "is not SEATS:MOVES"),
        (balance.komi, "half", "is not SEATS:NODES"),
    ],
)
def test_a_bad_experiment_is_refused_in_one_line(parse: object, text: str, said: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=said):
        parse(text)  # type: ignore[operator]
