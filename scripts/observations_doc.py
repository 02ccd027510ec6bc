"""Writes docs/observations.md: what a seat is sent for each game, from the .proto files' own
comments (read through protoc's descriptors, with their source info) and a real request of each
game's engine, encoded as the referee encodes it.

Usage: python scripts/observations_doc.py [--check]. With --check it writes nothing and fails
(exit 1) when docs/observations.md differs from what it would write, or when a field has no
description. tests/scripts/test_observations_doc.py runs both checks.

A field's description is its own comment in the .proto; a field of a message type with no
comment of its own is described by its type's comment (a oneof of actions or events names its
kinds by their messages). A field with neither is undocumented, which fails the check."""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import grpc_tools
from arena.v1 import referee_pb2 as pb
from arena_games import GAMES
from arena_games.base import GameOptions, GameState
from arena_games.deals import DealKey
from arena_games.playout import sample_chance
from google.protobuf import descriptor_pb2, json_format
from grpc_tools import protoc

from referee.matches.decisions import encode_request

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto"
DOC = ROOT / "docs" / "observations.md"
PACKAGE = "arena.v1"

# The messages of referee.proto that carry a decision to a seat and its answer back.
ENVELOPE = ("DecisionRequest", "LegalAction", "Observation", "Action", "Event", "Decision")
# Each game's wire field (Observation, Action and Event name it the same) and its messages.
GAME_FIELDS = (
    "opposing_force",
    "capture_the_commander",
    "officers_battle",
    "orc_pit_fighting",
    "strato_sphere",
)
EXAMPLE_DECISIONS = 6  # the worked example is the request of the seat's this-many-th decision
EXAMPLE_LEGAL = 4  # legal actions shown of the example (the rest are counted)

_SCALARS = {
    descriptor_pb2.FieldDescriptorProto.TYPE_BOOL: "bool",
    descriptor_pb2.FieldDescriptorProto.TYPE_UINT32: "uint32",
    descriptor_pb2.FieldDescriptorProto.TYPE_UINT64: "uint64",
    descriptor_pb2.FieldDescriptorProto.TYPE_INT32: "int32",
    descriptor_pb2.FieldDescriptorProto.TYPE_INT64: "int64",
    descriptor_pb2.FieldDescriptorProto.TYPE_STRING: "string",
    descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE: "double",
    descriptor_pb2.FieldDescriptorProto.TYPE_FLOAT: "float",
    descriptor_pb2.FieldDescriptorProto.TYPE_BYTES: "bytes",
}


@dataclass(frozen=True)
class Field:
    name: str
    number: int
    type: str  # a scalar's name, or a message's or enum's short name
    repeated: bool
    optional: bool
    oneof: str | None
    comment: str


@dataclass(frozen=True)
class Message:
    name: str
    file: str
    comment: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Enum:
    name: str
    file: str
    comment: str
    values: tuple[tuple[str, int, str], ...]  # (name, number, comment)


@dataclass(frozen=True)
class Protos:
    messages: dict[str, Message]
    enums: dict[str, Enum]


def descriptor_set() -> descriptor_pb2.FileDescriptorSet:
    """The .proto files as protoc reads them, comments included."""
    well_known = Path(grpc_tools.__file__).parent / "_proto"
    files = sorted(str(p.relative_to(PROTO)) for p in (PROTO / "arena" / "v1").glob("*.proto"))
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "set.pb"
        code = protoc.main(
            [
                "protoc",
                f"-I{PROTO}",
                f"-I{well_known}",
                "--include_source_info",
                f"--descriptor_set_out={out}",
                *files,
            ]
        )
        if code != 0:
            raise SystemExit(f"protoc could not read {PROTO}: exit code {code}")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def _comment(location: descriptor_pb2.SourceCodeInfo.Location | None) -> str:
    if location is None:
        return ""
    text = location.leading_comments.strip() or location.trailing_comments.strip()
    return " ".join(line.strip() for line in text.splitlines())


def read_protos() -> Protos:
    messages: dict[str, Message] = {}
    enums: dict[str, Enum] = {}
    for file in descriptor_set().file:
        if file.package != PACKAGE:
            continue
        at = {tuple(loc.path): loc for loc in file.source_code_info.location}
        name = file.name.rsplit("/", 1)[-1]
        for i, message in enumerate(file.message_type):
            fields = tuple(
                Field(
                    f.name,
                    f.number,
                    _type_name(f),
                    f.label == descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
                    f.proto3_optional,
                    None
                    if not f.HasField("oneof_index") or f.proto3_optional
                    else message.oneof_decl[f.oneof_index].name,
                    _comment(at.get((4, i, 2, j))),
                )
                for j, f in enumerate(message.field)
            )
            messages[message.name] = Message(message.name, name, _comment(at.get((4, i))), fields)
        for i, enum in enumerate(file.enum_type):
            values = tuple(
                (v.name, v.number, _comment(at.get((5, i, 2, j)))) for j, v in enumerate(enum.value)
            )
            enums[enum.name] = Enum(enum.name, name, _comment(at.get((5, i))), values)
    return Protos(messages, enums)


def _type_name(field: descriptor_pb2.FieldDescriptorProto) -> str:
    if field.type_name:
        return field.type_name.rsplit(".", 1)[-1]
    return _SCALARS[field.type]


def description(protos: Protos, field: Field) -> str:
    """The field's own comment, else its message type's; empty when it has neither."""
    if field.comment:
        return field.comment
    message = protos.messages.get(field.type)
    return message.comment if message is not None else ""


def game_messages(protos: Protos, game_field: str) -> list[str]:
    """The messages of one game's file, the observation first, then the action, then the event,
    each followed by the messages it holds (once each, in the order first met)."""
    observation = next(
        f.type for f in protos.messages["Observation"].fields if f.name == game_field
    )
    action = next(f.type for f in protos.messages["Action"].fields if f.name == game_field)
    event = next(f.type for f in protos.messages["Event"].fields if f.name == game_field)
    file = protos.messages[observation].file
    order: list[str] = []
    for top in (observation, action, event):
        _collect(protos, top, file, order)
    order += [
        m for m, message in protos.messages.items() if message.file == file and m not in order
    ]
    return order


def _collect(protos: Protos, name: str, file: str, order: list[str]) -> None:
    message = protos.messages.get(name)
    if message is None or message.file != file or name in order:
        return
    order.append(name)
    for field in message.fields:
        _collect(protos, field.type, file, order)


def documented_messages(protos: Protos) -> list[str]:
    """Every message the document describes: the envelope, cards, and each game's."""
    names = [*ENVELOPE, "Card"]
    for game_field in GAME_FIELDS:
        names += game_messages(protos, game_field)
    return names


def undocumented(protos: Protos) -> list[str]:
    """Message.field for every documented field with no description."""
    return [
        f"{name}.{field.name}"
        for name in documented_messages(protos)
        for field in protos.messages[name].fields
        if not description(protos, field)
    ]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _type_cell(protos: Protos, field: Field) -> str:
    kind = field.type
    if field.type in protos.messages or field.type in protos.enums:
        kind = f"[{field.type}](#{field.type.lower()})"
    if field.repeated:
        return f"repeated {kind}"
    if field.optional:
        return f"optional {kind}"
    return kind


def message_section(protos: Protos, name: str) -> list[str]:
    message = protos.messages[name]
    lines = [f"### {name}", ""]
    if message.comment:
        lines += [message.comment, ""]
    if not message.fields:
        return [*lines, "No fields: the kind of action or event is the whole message.", ""]
    lines += ["| field | number | type | what it means |", "|---|---|---|---|"]
    for field in message.fields:
        named = f"`{field.name}`" + (f" (oneof `{field.oneof}`)" if field.oneof else "")
        lines.append(
            f"| {named} | {field.number} | {_type_cell(protos, field)} | "
            f"{_cell(description(protos, field))} |"
        )
    return [*lines, ""]


def enum_section(protos: Protos, name: str) -> list[str]:
    enum = protos.enums[name]
    lines = [f"### {name}", ""]
    if enum.comment:
        lines += [enum.comment, ""]
    lines += ["| value | number | what it means |", "|---|---|---|"]
    lines += [f"| `{v}` | {n} | {_cell(c)} |" for v, n, c in enum.values]
    return lines


def example_request(game_field: str) -> tuple[pb.DecisionRequest, int]:
    """A real request of the game: its engine on practice deal 1 at the smallest seat count,
    every seat taking its first legal action, until seat 0 is asked its EXAMPLE_DECISIONS-th
    decision, with the events it may see since its previous one; encoded by the referee's own
    encode_request. Also how many legal actions it offers."""
    game = GAMES[game_field.replace("_", "-")]
    seats = game.seat_counts[0]
    state: GameState[GameOptions] = game.new_state(None, seats)
    rng = DealKey.practice(1).chance()
    match_id = f"{game.name}-example-0001"
    unsent: list[bytes] = []  # the events seat 0 may see since its last request
    asked = decided = 0
    while not state.is_over():
        if state.is_chance():
            events = state.apply_chance(sample_chance(state.chance_outcomes(), rng))
        else:
            seat = state.to_move()[0]
            if seat == 0:
                asked += 1
                if asked == EXAMPLE_DECISIONS:
                    break
                unsent = []
            events = state.apply(seat, state.legal_actions(seat)[0])
            decided += 1
        for event in events:
            if event.visible_to(0):
                message = event.message
                message.match_id = match_id
                unsent.append(message.SerializeToString())
    header = pb.DecisionRequest(
        match_id=match_id,
        decision_id=decided + 1,
        seat=0,
        deadline_ms=1000,
        time_bank_ms=5000,
        decision_number=decided,
    )
    request = encode_request(state, header, unsent).message()
    return request, len(request.legal_actions)


def example_section(game_field: str, title: str) -> list[str]:
    request, legal = example_request(game_field)
    del request.legal_actions[EXAMPLE_LEGAL:]
    text = json_format.MessageToJson(request, indent=2, preserving_proto_field_name=True)
    shown = (
        f"the first {EXAMPLE_LEGAL} of its {legal} legal actions"
        if legal > EXAMPLE_LEGAL
        else f"all {legal} legal actions"
    )
    return [
        "### A real request",
        "",
        f"The `DecisionRequest` seat 0 of a {title} match is sent at its decision "
        f"{EXAMPLE_DECISIONS} (practice deal 1, every seat taking its first legal action; the "
        f"events since its previous decision; {shown}), as JSON with the .proto's field names "
        "(`json_format.MessageToJson(request, preserving_proto_field_name=True)`; a 64-bit "
        "number such as `decision_id` is a string in JSON):",
        "",
        "```json",
        text,
        "```",
        "",
    ]


INTRO = """# What a seat is sent: observations, legal actions and events

<!-- Written by scripts/observations_doc.py from proto/arena/v1/*.proto and the engines: edit
the .proto comments or the script, then run `make docs`. A test fails when this file differs
from what the script writes, or when a field has no description. -->

Every game's messages, field by field, in the words of the .proto files' comments. How to
connect, answer and keep your session is docs/protocol.md; this page is what the messages hold.

**Reading a request.** A `DecisionRequest` holds an `Observation` (one field set, named after
the game: `request.observation.opposing_force`), the `legal_actions` (each with its `index`, a
short `label` and the typed `Action`, whose game field holds a oneof named `kind`), and the
`events` this seat may see since its last message. Answer with a `Decision` holding the
`index` of your choice (or the same typed `action`). In Python, `arena_sdk.bot.unwrap` gives
the game's own observation, and `action.opposing_force.WhichOneof("kind")` says which kind an
action is (`"play"`, `"claim"`, ...); in C++ `action.opposing_force().kind_case()`; in JSON the
kind is the one key present. A field at its default (0, false, empty) is not sent: in JSON it is
absent (the first legal action's `index` 0 below), and your library reads it as the default. A
field in a oneof is sent even at its default (`Decision.index = 0` is), and an `optional` field
tells unset from 0 (`seat` is unset for a spectator).

**Cards.** A card is a `Card {rank, suit}`: the rank is 2..10, J = 11, Q = 12, K = 13,
**A = 14**; the suit is an enum (below). A game keeps a card it may not show you out of the
message (a hidden card is never sent as a placeholder): hands of other seats come as counts.
"""


def document() -> str:
    protos = read_protos()
    lines = [INTRO, "## Cards", ""]
    lines += message_section(protos, "Card")
    lines += [*enum_section(protos, "Suit"), ""]
    lines += ["## The envelope", ""]
    for name in ENVELOPE:
        lines += message_section(protos, name)
    for game_field in GAME_FIELDS:
        game = GAMES[game_field.replace("_", "-")]
        lines += [f"## {game.title} (`{game.name}`)", ""]
        lines += [
            f"Seat counts: {', '.join(str(n) for n in game.seat_counts)}. In the envelope: "
            f"`Observation.{game_field}`, `Action.{game_field}`, `Event.{game_field}`.",
            "",
        ]
        names = game_messages(protos, game_field)
        for name in names:
            lines += message_section(protos, name)
        file = protos.messages[names[0]].file
        for enum in (e for e, found in protos.enums.items() if found.file == file):
            lines += [*enum_section(protos, enum), ""]
        lines += example_section(game_field, game.title)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    missing = undocumented(read_protos())
    if missing:
        print(
            f"{len(missing)} fields have no description: add a comment above each in its "
            ".proto file: " + ", ".join(missing),
            file=sys.stderr,
        )
        return 1
    text = document()
    if check:
        if not DOC.is_file() or DOC.read_text(encoding="utf-8") != text:
            print(f"{DOC} is out of date: run `make docs`", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {os.path.relpath(DOC)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
