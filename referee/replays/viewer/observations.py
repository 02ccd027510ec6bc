"""An observation as the viewer's JSON: the game's own message, every field named as in the
.proto, cards as their two-character labels ('Qh', 'Ts') and enum values as short lower-case
names ('fully_uncovered'). A card appears in no other form, so a search for its label finds
it wherever a page holds it."""

from __future__ import annotations

from functools import cache
from typing import Any

from arena.v1 import cards_pb2
from arena.v1 import referee_pb2 as pb
from arena_games import cards
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

CARD = cards_pb2.Card.DESCRIPTOR.full_name


def observation_json(observation: pb.Observation) -> dict[str, Any]:
    """The game's observation inside the wire's Observation, as a JSON-ready dict."""
    game = observation.WhichOneof("game")
    if game is None:
        return {}
    return message_json(getattr(observation, game))


def event_json(recorded: dict[str, Any]) -> dict[str, Any]:
    """A replay's event (the wire Event as protobuf JSON) as the game's own event message in
    the viewer's JSON, e.g. {"card_played": {"seat": 0, "card": "Qh", "position": 3}}."""
    event = json_format.ParseDict(recorded, pb.Event())
    game = event.WhichOneof("game")
    if game is None:
        return {}
    typed = getattr(event, game)
    kind = typed.WhichOneof("kind")
    if kind is None:
        return {}
    return {kind: message_json(getattr(typed, kind))}


def card_label(card: cards_pb2.Card) -> str:
    return cards.label(cards.from_message(card))


def message_json(message: Message) -> dict[str, Any]:
    """Every field: unset optional fields and unset messages are left out, everything else is
    given with its default, so a renderer need not know proto3's defaults."""
    out: dict[str, Any] = {}
    descriptor: Descriptor = message.DESCRIPTOR  # type: ignore[assignment]  # upb's own class
    for field in descriptor.fields:
        if field.is_repeated:
            out[field.name] = [_value(field, item) for item in getattr(message, field.name)]
        elif not field.has_presence or message.HasField(field.name):
            out[field.name] = _value(field, getattr(message, field.name))
    return out


def _value(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        assert field.message_type is not None
        if field.message_type.full_name == CARD:
            return card_label(value)
        return message_json(value)
    if field.type == FieldDescriptor.TYPE_ENUM:
        assert field.enum_type is not None
        return _enum_names(field.enum_type).get(value, str(value))
    return value


@cache
def _enum_names(enum: EnumDescriptor) -> dict[int, str]:
    """Value number -> its name without the enum's prefix, lower case: OFFICERS_BATTLE_SLOT_WEST
    is 'west'. The prefix is what the UNSPECIFIED value's name has before UNSPECIFIED."""
    prefix = enum.values[0].name.removesuffix("UNSPECIFIED")
    return {value.number: value.name.removeprefix(prefix).lower() for value in enum.values}
