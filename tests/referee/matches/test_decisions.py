"""A decision request is joined from bytes encoded once per part (referee/matches/decisions.py): it
must be the very request that building it field by field gives, in every game."""

from __future__ import annotations

import random

import pytest
from arena.v1 import referee_pb2 as pb
from arena_games import GAMES, get_game
from arena_games.base import GameOptions, GameState
from arena_games.legal_actions import legal_action_messages
from arena_games.protowire import field_tag, framed

from referee.matches.decisions import EncodedRequest, encode_request


def _by_fields(
    state: GameState[GameOptions], header: pb.DecisionRequest, events: list[pb.Event]
) -> pb.DecisionRequest:
    request = pb.DecisionRequest()
    request.CopyFrom(header)
    request.observation.CopyFrom(state.observation(header.seat))
    request.events.extend(events)
    for index, action in enumerate(state.legal_actions(header.seat)):
        request.legal_actions.add(
            index=index, label=state.action_label(action), action=state.action_message(action)
        )
    return request


@pytest.mark.parametrize("game_name", sorted(GAMES))
def test_an_encoded_request_is_the_request_built_field_by_field(game_name: str) -> None:
    game = get_game(game_name)
    rng = random.Random(5)
    checked = 0
    for deal in range(4):
        state = game.new_state(None, game.seat_counts[-1])
        events: list[pb.Event] = []
        while not state.is_over():
            if state.is_chance():
                outcomes = state.chance_outcomes()
                events += [e.message for e in state.apply_chance(rng.choice(outcomes)[0])]
                continue
            seat = state.to_move()[0]
            header = pb.DecisionRequest(
                match_id=f"m-{deal}", decision_id=checked + 1, seat=seat, deadline_ms=900
            )
            seen = events[-6:]
            encoded = encode_request(state, header, [e.SerializeToString() for e in seen])
            expected = _by_fields(state, header, seen)
            assert encoded.message() == expected
            assert encoded.legal_count == len(expected.legal_actions)
            assert (encoded.match_id, encoded.decision_id) == (f"m-{deal}", checked + 1)
            assert legal_action_messages(state, seat) == list(expected.legal_actions)
            checked += 1
            legal = state.legal_actions(seat)
            events += [e.message for e in state.apply(seat, rng.choice(legal))]
    assert checked > 20


def test_a_request_built_as_a_message_encodes_the_same() -> None:
    request = pb.DecisionRequest(match_id="m", decision_id=3, seat=1)
    request.legal_actions.add(index=0, label="pass")
    encoded = EncodedRequest.of(request)
    assert encoded.message() == request
    assert (encoded.match_id, encoded.decision_id, encoded.legal_count) == ("m", 3, 1)


@pytest.mark.parametrize("size", [1, 127, 128, 1023, 1024, 16_383, 16_384, 300_000])
def test_a_framed_field_is_what_protobuf_writes(size: int) -> None:
    text = "x" * size
    assert (
        framed(field_tag(pb.Event, "text"), text.encode())
        == pb.Event(text=text).SerializeToString()
    )
