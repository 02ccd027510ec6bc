"""Protobuf messages as proto3 JSON dicts, the same as json_format.MessageToDict gives, faster.

Every event of every match goes into its replay as JSON. json_format walks each field through
several layers of generic code and was a fifth of the referee's time per decision; this walks
only the fields that are set, with a plan per field built once. Messages with maps, 32-bit floats or
well-known types (Struct, Any, Timestamp, ...) go to json_format itself.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

_Convert = Callable[[Any], Any]

_STRINGIFIED = {
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_FIXED64,
    FieldDescriptor.TYPE_SFIXED64,
}

# Per message type: (field name -> (JSON name, converter, repeated)), or None for json_format.
_plans: dict[Descriptor, dict[str, tuple[str, _Convert, bool]] | None] = {}


def message_dict(message: Message) -> dict[str, Any]:
    """json_format.MessageToDict(message), with its default arguments."""
    plan = _plan(message.DESCRIPTOR)  # type: ignore[arg-type]  # upb's own Descriptor class
    if plan is None:
        return json_format.MessageToDict(message)
    out: dict[str, Any] = {}
    for field, value in message.ListFields():
        name, convert, repeated = plan[field.name]
        out[name] = [convert(item) for item in value] if repeated else convert(value)
    return out


def _plan(descriptor: Descriptor) -> dict[str, tuple[str, _Convert, bool]] | None:
    if descriptor in _plans:
        return _plans[descriptor]
    _plans[descriptor] = None  # a message that contains itself resolves to json_format
    fields = {}
    for field in descriptor.fields:
        convert = _converter(field)
        if convert is None:
            return None
        fields[field.name] = (field.json_name, convert, field.is_repeated)
    _plans[descriptor] = fields
    return fields


def _converter(field: FieldDescriptor) -> _Convert | None:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        nested = field.message_type
        assert nested is not None
        if nested.GetOptions().map_entry or nested.full_name.startswith("google.protobuf."):
            return None
        if _plan(nested) is None:
            return None
        return _memoized()
    if field.type == FieldDescriptor.TYPE_ENUM:
        assert field.enum_type is not None
        names = {value.number: value.name for value in field.enum_type.values}
        return lambda number: names.get(number, number)
    if field.type in _STRINGIFIED:
        return str
    if field.type == FieldDescriptor.TYPE_DOUBLE:
        return _double
    if field.type == FieldDescriptor.TYPE_FLOAT:
        return None  # json_format rounds these to the shortest float that reads back the same
    if field.type == FieldDescriptor.TYPE_BYTES:
        return lambda raw: base64.b64encode(raw).decode("utf-8")
    return _same


MEMO_LIMIT = 4096
"""Submessages of one field whose dicts are remembered, by their bytes, before starting over."""


def _memoized() -> _Convert:
    """message_dict for one submessage field, remembered by the submessage's bytes: a game's
    events repeat the same few hundred parts (a card, a card drawn by a seat), and a submessage
    serializes in C many times faster than it converts. The dicts are shared between the
    messages that hold the same part: read-only, as replay records are."""
    memo: dict[bytes, dict[str, Any]] = {}

    def convert(message: Message) -> dict[str, Any]:
        data = message.SerializeToString(deterministic=True)
        found = memo.get(data)
        if found is None:
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            found = memo[data] = message_dict(message)
        return found

    return convert


def _same(value: Any) -> Any:
    return value


def _double(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value
