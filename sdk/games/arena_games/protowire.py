"""Pieces of the protobuf wire format, for messages joined from parts encoded once.

Protobuf defines the concatenation of two encoded messages as their merge: a field appended
to a message's bytes sets it (a repeated one, adds to it). So a message whose parts rarely
change (a decision request's legal actions, an observation's positions) can be sent as the
parts' bytes, each made once by protobuf itself, with only tags and lengths written here.
"""

from __future__ import annotations

from google.protobuf.message import Message

LENGTH_DELIMITED = 2
"""The wire type of a submessage (and of bytes and strings)."""


def varint(value: int) -> bytes:
    """A non-negative int as protobuf writes a length: 7 bits a byte, low bits first."""
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_LENGTHS = tuple(varint(n) for n in range(1 << 10))  # most parts are shorter: made once


def field_tag(message: type[Message], field: str) -> bytes:
    """The tag that starts a length-delimited field of message: taken from the schema, so it
    cannot drift from the .proto."""
    number: int = message.DESCRIPTOR.fields_by_name[field].number
    return varint(number << 3 | LENGTH_DELIMITED)


def framed(tag: bytes, payload: bytes) -> bytes:
    """The field that tag starts, holding payload (a submessage's fields, or a string)."""
    size = len(payload)
    return tag + (_LENGTHS[size] if size < len(_LENGTHS) else varint(size)) + payload
