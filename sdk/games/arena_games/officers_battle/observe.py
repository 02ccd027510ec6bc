"""The observation of Officers' Battle, put together as wire bytes: the referee asks for one at
every decision request, and it holds up to a hundred cards.

Copying a protobuf message into another (a constructor, extend, CopyFrom) serializes and parses
it again, so building an observation card by card was most of the referee's cost per decision.
Here every card a field holds is a record of bytes made once at import by protobuf itself (the
card alone in that field, serialized), a message made of cards is those records joined under
its field's tag and length, and one parse of the joined parts builds the observation. The two
caches (a side's counts, the turn) hold bytes, are bounded, and are keyed by every value their
record shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from arena.v1 import officers_battle_pb2 as obpb
from arena.v1 import referee_pb2 as pb
from google.protobuf.message import Message

from arena_games import cards
from arena_games.officers_battle import rules
from arena_games.officers_battle.rules import NONE, POSITIONS
from arena_games.protowire import field_tag, framed

if TYPE_CHECKING:
    from arena_games.officers_battle.state import OfficersBattleState


def _card_records(message: type[Message], field: str) -> tuple[bytes, ...]:
    """Per card id of either deck, the record of that card alone in a field of message."""
    tag = field_tag(message, field)
    return tuple(
        framed(tag, cards.to_message(rules.standard(c)).SerializeToString()) for c in rules.CARD_IDS
    )


_Observation, _Side, _Front = (
    obpb.OfficersBattleObservation,
    obpb.OfficersBattleSide,
    obpb.OfficersBattleFront,
)
HAND = _card_records(_Observation, "hand")
DISCARD_PILE = _card_records(_Observation, "discard_pile")
SUPPORT = _card_records(_Side, "support")
KNOWN_HAND = _card_records(_Side, "known_hand")
OFFICER = _card_records(_Front, "officer")
PILE = _card_records(_Front, "pile")
RETREATED = _card_records(obpb.OfficersBattleRetreat, "officers")
CASUALTY_OFFICER = _card_records(obpb.OfficersBattleCasualty, "officer")
KILLING_CARD = _card_records(obpb.OfficersBattleCasualty, "cards")
FALLEN_OFFICER = _card_records(obpb.OfficersBattleFallen, "officer")
FALLEN_KILLER = _card_records(obpb.OfficersBattleFallen, "card")

SIDE_TAG = field_tag(_Observation, "sides")
FRONT_TAG = field_tag(_Side, "fronts")
RETREAT_TAG = field_tag(_Side, "retreats")
CASUALTY_TAG = field_tag(_Side, "casualty")
FALLEN_TAG = field_tag(_Side, "fallen")
POSITION_RECORDS = tuple(_Front(position=p).SerializeToString() for p in range(POSITIONS))
CASUALTY_POSITIONS = tuple(
    obpb.OfficersBattleCasualty(position=p).SerializeToString() for p in range(POSITIONS)
)


STANDARD_OF = tuple(map(rules.standard, rules.CARD_IDS))
"""The standard card of each card id: the sort key of hands on the wire, looked up in C."""


def _joined(records: tuple[bytes, ...], card_ids: Sequence[int]) -> bytes:
    return b"".join(map(records.__getitem__, card_ids))


@lru_cache(maxsize=4096)
def _side_counts(
    seat: int, officer_deck_size: int, deck_size: int, hand_size: int, living: int
) -> bytes:
    return _Side(
        seat=seat,
        officer_deck_size=officer_deck_size,
        deck_size=deck_size,
        hand_size=hand_size,
        living_officers=living,
    ).SerializeToString()


def _side(state: OfficersBattleState, seat: int) -> bytes:
    hand, secret = state.hand[seat], state.secret[seat]
    officers, piles = state.front[seat], state.piles[seat]
    parts = [
        _side_counts(
            seat,
            len(state.officer_deck[seat]),
            len(state.deck[seat]),
            len(hand),
            state.living(seat),
        )
    ]
    for position in range(POSITIONS):
        officer = officers[position]
        front = POSITION_RECORDS[position] + _joined(PILE, piles[position])
        if officer != NONE:
            front += OFFICER[officer]
        parts.append(framed(FRONT_TAG, front))
    if state.support[seat] != NONE:
        parts.append(SUPPORT[state.support[seat]])
    parts += [framed(RETREAT_TAG, _joined(RETREATED, stack)) for stack in state.retreats[seat]]
    known = [c for c in hand if c not in secret]
    known.sort(key=STANDARD_OF.__getitem__)
    parts.append(_joined(KNOWN_HAND, known))
    casualty = state.casualty[seat]
    if casualty is not None:
        position, officer, killing = casualty
        killed = CASUALTY_POSITIONS[position] + CASUALTY_OFFICER[officer]
        parts.append(framed(CASUALTY_TAG, killed + _joined(KILLING_CARD, killing)))
    for officer, killer in state.fallen[seat]:
        parts.append(framed(FALLEN_TAG, FALLEN_OFFICER[officer] + FALLEN_KILLER[killer]))
    return framed(SIDE_TAG, b"".join(parts))


@lru_cache(maxsize=4096)
def _turn_record(
    played: tuple[int, ...],
    bonus_due: int,
    passed_draw: bool,
    marks: tuple[int, int, int],
    series: tuple[int, int, tuple[int, ...]],
) -> bytes:
    """The turn so far; marks are support_used_at, kill_position and retreated_to, series its
    position, suit and cards (NONE where unset)."""
    turn = obpb.OfficersBattleTurn(
        played_positions=[p for p in range(POSITIONS) if played[p]],
        bonus_cards_due=bonus_due,
        passed_draw=passed_draw,
    )
    support_used_at, kill_position, retreated_to = marks
    if support_used_at != NONE:
        turn.support_used_at = support_used_at
    if kill_position != NONE:
        turn.kill_position = kill_position
    if retreated_to != NONE:
        turn.retreated_to = retreated_to
    position, suit, laid = series
    if position != NONE:
        turn.series.CopyFrom(
            obpb.OfficersBattleSeriesInProgress(
                position=position,
                suit=suit + 1,  # type: ignore[arg-type]
                cards=[cards.to_message(rules.standard(c)) for c in laid],
            )
        )
    return _Observation(turn=turn).SerializeToString()


def _turn(state: OfficersBattleState) -> bytes:
    return _turn_record(
        tuple(state.played),
        state.bonus_due,
        state.passed_draw,
        (state.support_used_at, state.kill_position, state.retreated_to),
        (state.series_position, state.series_suit, tuple(state.series_cards)),
    )


def observation(state: OfficersBattleState, seat: int | None) -> pb.Observation:
    """Both sides, the discard pile and the turn for everybody; the seat's own hand, sorted by
    rank and suit, for a seat."""
    parts = [_side(state, s) for s in range(rules.SEATS)]
    parts += (_joined(DISCARD_PILE, state.discard), _turn(state))
    if seat is not None:
        parts.append(_joined(HAND, sorted(state.hand[seat], key=STANDARD_OF.__getitem__)))
    message = pb.Observation()
    observation = message.officers_battle
    observation.MergeFromString(b"".join(parts))
    observation.current_seat = state.current
    observation.phase = state.phase  # type: ignore[assignment]  # never between phases
    observation.turn_number = state.turn_number
    observation.previous_turn_idle = state.previous_idle
    observation.decisions = state.decisions
    observation.decision_cap = rules.DECISION_CAP
    observation.scores.extend(state.scores())
    if seat is not None:
        observation.seat = seat
    return message
