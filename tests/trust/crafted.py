"""Crafted replays, each made from a real one by one change an attacker could make, with what
the unguarded reading path (json.loads, the records' types, the engine) does with it: the
control each test holds the guard against."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from arena_games import replay_file as replay
from arena_games.match_settings import Misbehaviour

Json = dict[str, Any]
DEEP = 100_000  # levels of JSON nesting: past any recursion limit
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\x9b31m"
"""A window title (OSC 0), a clear screen (CSI 2J), a clipboard write (OSC 52) and a C1 CSI."""


@dataclass(frozen=True)
class Crafted:
    """One crafted replay: how it is made from the real one's records, and the control: what
    the unguarded path does with the file (raises, or takes it whole)."""

    make: Callable[[list[Json], Path], None]
    unguarded: Callable[[Path], object]


def _lines(records: list[Json]) -> list[str]:
    return [json.dumps(record) for record in records]


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _first(records: list[Json], kind: str) -> int:
    return next(i for i, r in enumerate(records) if r["type"] == kind)


def _changed(kind: str, **fields: Any) -> Callable[[list[Json], Path], None]:
    """The first record of kind with fields set."""

    def make(records: list[Json], path: Path) -> None:
        records = [dict(r) for r in records]
        records[_first(records, kind)].update(fields)
        _write(path, _lines(records))

    return make


def _dropped(kind: str, field: str) -> Callable[[list[Json], Path], None]:
    def make(records: list[Json], path: Path) -> None:
        records = [dict(r) for r in records]
        records[_first(records, kind)].pop(field)
        _write(path, _lines(records))

    return make


def _raw(kind: str, field: str, text: str) -> Callable[[list[Json], Path], None]:
    """The first record of kind with field's JSON replaced by text as it is (JSON json.dumps
    cannot write: 100,000 levels, a number of 5,000 digits)."""

    def make(records: list[Json], path: Path) -> None:
        records = [dict(r) for r in records]
        at = _first(records, kind)
        records[at][field] = "@@"
        lines = _lines(records)
        lines[at] = lines[at].replace('"@@"', text)
        _write(path, lines)

    return make


def _inserted(at: int, record: Json) -> Callable[[list[Json], Path], None]:
    def make(records: list[Json], path: Path) -> None:
        _write(path, _lines([*records[:at], record, *records[at:]]))

    return make


def _appended(record: Json) -> Callable[[list[Json], Path], None]:
    def make(records: list[Json], path: Path) -> None:
        _write(path, _lines([*records, record]))

    return make


def _line(path: Path, kind: str) -> str:
    """The line of the file holding the first record of kind (found by its text)."""
    return next(line for line in path.read_text().splitlines() if f'"type": "{kind}"' in line)


def _loads(kind: str) -> Callable[[Path], object]:
    return lambda path: json.loads(_line(path, kind))


def _parsed(kind: str) -> Callable[[Path], object]:
    """json.loads takes the line: only the records' types, or the checks across records,
    refuse it."""

    def parse(path: Path) -> object:
        value = json.loads(_line(path, kind))
        assert isinstance(value, dict)
        return value

    return parse


def _encoded(path: Path) -> object:
    """What printing the file's decoded strings to a UTF-8 stream does."""
    decision = json.loads(_line(path, "decision"))
    return str(decision["label"]).encode("utf-8")


def _as_json(kind: str) -> Callable[[Path], object]:
    """The record as the page's JSON model would carry it (a browser's JSON has no inf)."""
    return lambda path: json.dumps(json.loads(_line(path, kind)), allow_nan=False)


def _whole(path: Path) -> object:
    """The unguarded read takes the file whole, whatever its length."""
    text = path.read_text(encoding="utf-8")
    assert len(text) > replay.MAX_FILE_BYTES or max(map(len, text.splitlines())) > (
        replay.MAX_LINE_BYTES
    )
    raise OverflowError(f"read {len(text)} characters")


def _cause(path: Path) -> object:
    forfeit = json.loads(_line(path, "forfeit"))
    return Misbehaviour(forfeit["cause"])  # what verify did with it


def _blocks(path: Path) -> object:
    """A plain read of a FIFO waits for a writer for ever: shown by a reader thread still
    blocked after a second, then released by opening the FIFO for writing."""
    reader = threading.Thread(target=path.read_bytes, daemon=True)
    reader.start()
    reader.join(1.0)
    blocked = reader.is_alive()
    os.close(os.open(path, os.O_WRONLY))
    reader.join(5.0)
    assert blocked
    raise TimeoutError("a plain read of the FIFO blocked")


def _decoded(path: Path) -> object:
    return path.read_bytes().decode("utf-8")


def _fifo(records: list[Json], path: Path) -> None:
    os.mkfifo(path)


def _long_line(records: list[Json], path: Path) -> None:
    lines = _lines(records)
    lines[1] = lines[1][:-1] + " " * (replay.MAX_LINE_BYTES + 1) + "}"
    _write(path, lines)


def _long_file(records: list[Json], path: Path) -> None:
    lines = _lines(records)
    event = lines[_first(records, "event")]
    copies = replay.MAX_FILE_BYTES // len(event) + 1
    _write(path, [lines[0], *[event] * copies, *lines[1:]])


def _not_utf8(records: list[Json], path: Path) -> None:
    path.write_bytes("\n".join(_lines(records)).encode().replace(b"local-1", b"local-\xff"))


DEEP_ARRAY = "[" * DEEP + "]" * DEEP
DEEP_OBJECT = '{"a":' * DEEP + "{}" + "}" * DEEP
RESULT_FORFEIT = {"9": ["crash", "x"]}

CORPUS: dict[str, Crafted] = {
    # Too deep: json.loads raises RecursionError.
    "deep_header": Crafted(
        lambda records, path: _write(path, [DEEP_ARRAY, *_lines(records)[1:]]),
        lambda path: json.loads(path.read_text().splitlines()[0]),
    ),
    "deep_options": Crafted(_raw("header", "options", DEEP_OBJECT), _loads("header")),
    "deep_event": Crafted(_raw("event", "event", DEEP_OBJECT), _loads("event")),
    # Too long: the unguarded read takes it all, or blocks for ever.
    "long_line": Crafted(_long_line, _whole),
    "long_file": Crafted(_long_file, _whole),
    "fifo": Crafted(_fifo, _blocks),
    # Numbers no record holds: json.loads' own ValueError; a number no browser's JSON reads.
    "huge_number": Crafted(_raw("decision", "action", "9" * 5000), _loads("decision")),
    "infinite_time": Crafted(_raw("decision", "time_ms", "Infinity"), _as_json("decision")),
    "nan_score": Crafted(_raw("result", "scores", "[NaN, 1.0]"), _as_json("result")),
    # Text no output can encode, or no text at all.
    "lone_surrogate": Crafted(_raw("decision", "label", '"\\ud800"'), _encoded),
    "not_utf8": Crafted(_not_utf8, _decoded),
    # Wrong types and missing fields: json.loads takes them, the records' types refuse them.
    "string_action": Crafted(_changed("decision", action="x"), _parsed("decision")),
    "string_step": Crafted(_changed("chance", step="first"), _parsed("chance")),
    "list_seat": Crafted(_changed("decision", seat=[0]), _parsed("decision")),
    "missing_label": Crafted(_dropped("decision", "label"), _parsed("decision")),
    "missing_seats": Crafted(_dropped("header", "seats"), _parsed("header")),
    "no_type": Crafted(_dropped("chance", "type"), _parsed("chance")),
    "unknown_type": Crafted(_changed("chance", type=ESCAPES), _parsed("chance")),
    # Negative numbers: json.loads and the records' old types took them (Python reads a[-1] as
    # the last seat).
    "negative_seat": Crafted(_changed("decision", seat=-1), _parsed("decision")),
    "negative_outcome": Crafted(_changed("chance", outcome=-1), _parsed("chance")),
    "negative_step": Crafted(_changed("event", step=-3), _parsed("event")),
    "negative_audience": Crafted(_changed("event", audience=[-1]), _parsed("event")),
    # Seats the match has not: each record is well typed, only the check across records sees.
    "seat_out_of_range": Crafted(_changed("decision", seat=7), _parsed("decision")),
    "audience_out_of_range": Crafted(_changed("event", audience=[9]), _parsed("event")),
    "header_seat_numbers": Crafted(
        _changed("header", seats=[{"seat": 5, "name": "a"}, {"seat": 9, "name": "b"}]),
        _parsed("header"),
    ),
    "header_no_seats": Crafted(_changed("header", seats=[]), _parsed("header")),
    "result_ranks_short": Crafted(_changed("result", ranks=[0]), _parsed("result")),
    "result_forfeit_seat": Crafted(_changed("result", forfeits=RESULT_FORFEIT), _parsed("result")),
    "forfeit_seat": Crafted(
        _inserted(2, {"type": "forfeit", "step": 0, "seat": 9, "cause": "crash", "detail": ""}),
        _parsed("forfeit"),
    ),
    "forfeit_cause": Crafted(
        _inserted(2, {"type": "forfeit", "step": 0, "seat": 1, "cause": "bogus", "detail": ""}),
        _cause,
    ),
    "record_after_result": Crafted(
        _appended({"type": "chance", "step": 999, "outcome": 1}), _parsed("chance")
    ),
}

# What the unguarded path does with each: raises this; the others it takes (json.loads gives a
# record), and only the records' types or the checks across records refuse them.
UNGUARDED: dict[str, type[BaseException] | None] = {
    "deep_header": RecursionError,
    "deep_options": RecursionError,
    "deep_event": RecursionError,
    "long_line": OverflowError,
    "long_file": OverflowError,
    "fifo": TimeoutError,
    "huge_number": ValueError,
    "infinite_time": ValueError,
    "nan_score": ValueError,
    "lone_surrogate": UnicodeEncodeError,
    "not_utf8": UnicodeDecodeError,
    "forfeit_cause": ValueError,
}


def check_unguarded(name: str, path: Path) -> None:
    """The control: the unguarded path raises what UNGUARDED says, or takes the file."""
    expected = UNGUARDED.get(name)
    if expected is None:
        CORPUS[name].unguarded(path)
    else:
        with pytest.raises(expected):
            CORPUS[name].unguarded(path)


def craft(name: str, source: Path, folder: Path) -> Path:
    """The crafted replay name, made from the real replay source, in folder."""
    records = [json.loads(line) for line in source.read_text().splitlines()]
    path = folder / f"{name}.jsonl"
    CORPUS[name].make(records, path)
    return path
