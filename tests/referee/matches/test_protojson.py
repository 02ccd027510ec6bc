"""referee.matches.protojson gives exactly what json_format.MessageToDict gives, on every kind of
message the referee turns into JSON: the events of whole games of every game, and the wire's other
messages with their 64-bit integers, doubles, enums and nested lists."""

from __future__ import annotations

import random

import pytest
from arena.v1 import referee_pb2 as pb
from arena_games import GAMES
from arena_games.playout import random_policy, sample_chance
from google.protobuf import json_format, struct_pb2

from referee.matches import protojson
from referee.matches.protojson import message_dict


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_event_and_observation_of_random_games(name: str) -> None:
    game = GAMES[name]
    compared = 0
    for seed in range(6):
        for seats in game.seat_counts:
            state = game.new_state(None, seats)
            rng, policy = random.Random(seed), random_policy(random.Random(seed + 1))
            while not state.is_over():
                if state.is_chance():
                    events = state.apply_chance(sample_chance(state.chance_outcomes(), rng))
                else:
                    seat = state.to_move()[0]
                    events = state.apply(seat, policy(state, seat, state.legal_actions(seat)))
                for message in [e.message for e in events] + [state.observation(None)]:
                    assert message_dict(message) == json_format.MessageToDict(message)
                    compared += 1
    assert compared > 100


def test_64_bit_integers_doubles_enums_and_lists() -> None:
    end = pb.MatchEnd(
        match_id="m-1",
        result=pb.MatchResult(
            seats=[
                pb.SeatResult(seat=0, rank=0, score=1.0),
                pb.SeatResult(seat=1, rank=1, score=float("nan"), forfeit_cause="timeout"),
                pb.SeatResult(seat=2, rank=1, score=float("-inf")),
            ],
            reason="won",
        ),
    )
    decision = pb.Decision(match_id="m-1", decision_id=2**63 + 5, index=0)
    for message in (end, decision, pb.PlayRequest(decision=decision), pb.Event()):
        assert message_dict(message) == json_format.MessageToDict(message)
    assert message_dict(decision)["decisionId"] == str(2**63 + 5)
    assert message_dict(decision)["index"] == 0  # a oneof member set to its default is kept


def test_well_known_types_go_to_json_format() -> None:
    value = struct_pb2.Struct()
    value.update({"a": [1, "b", None]})
    assert message_dict(value) == json_format.MessageToDict(value) == {"a": [1.0, "b", None]}


def test_remembered_parts_are_bounded_and_still_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """Submessages are remembered by their bytes, a bounded number per field: past the bound
    the memory starts over, and every dict is still json_format's."""
    monkeypatch.setattr(protojson, "MEMO_LIMIT", 3)
    state = GAMES["opposing-force"].new_state(None, 2)
    rng, policy = random.Random(4), random_policy(random.Random(5))
    messages = []
    while not state.is_over() and len(messages) < 200:
        if state.is_chance():
            events = state.apply_chance(sample_chance(state.chance_outcomes(), rng))
        else:
            seat = state.to_move()[0]
            events = state.apply(seat, policy(state, seat, state.legal_actions(seat)))
        messages += [e.message for e in events]
    for memo in _memos():
        memo.clear()  # earlier tests filled them under the usual bound
    for message in messages + messages:  # the second pass meets parts seen before
        assert message_dict(message) == json_format.MessageToDict(message)
    assert any(_memos()) and all(len(memo) <= 3 for memo in _memos())


def _memos() -> list[dict[bytes, object]]:
    """Every field's remembered parts (the closures of referee.matches.protojson._memoized)."""
    converters = [
        convert
        for plan in protojson._plans.values()
        if plan is not None
        for _, convert, _ in plan.values()
    ]
    return [
        cell.cell_contents
        for c in converters
        if hasattr(c, "__code__")
        for name, cell in zip(c.__code__.co_freevars, c.__closure__ or (), strict=True)
        if name == "memo"
    ]
