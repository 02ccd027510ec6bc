"""Replay files: one JSON Lines file per match, written atomically.

Line 1 is the header; then, in order, every chance outcome, decision, forfeit and event (with
its audience); the last line is the result. `verify` re-simulates from the deal's key and the
decisions and must reproduce every chance outcome, event and the result.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, TypeAdapter, ValidationError

from arena_games import get_game
from arena_games.base import Event, GameError, GameOptions, GameState
from arena_games.match_settings import MatchSettings, Misbehaviour

FORMAT_VERSION = 2

# Bounds on what is read, far beyond any real replay (measured over two matches of each game
# between the example bots: the largest file 218 KB, an Officers' Battle match; the longest
# line 839 bytes; the deepest record 7 levels), so that a crafted file costs a reader no more
# than that much memory and time.
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 1024 * 1024
MAX_DEPTH = 32  # levels of JSON nesting


class _Record(BaseModel):
    # No NaN or infinity: a replay's numbers must come back out as JSON a browser can read.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class SeatInfo(_Record):
    seat: NonNegativeInt
    name: str
    spec: str = ""
    # An uploaded version's files' SHA-256 (the name it is stored under, docs/contest.md);
    # empty for any other bot, and in the replays written before it was recorded.
    content_hash: str = Field(default="", pattern=r"^([0-9a-f]{64})?$")


class Header(_Record):
    type: Literal["header"] = "header"
    format: int = FORMAT_VERSION
    match_id: str
    game: str
    rules_version: str
    options: dict[str, Any]
    seats: list[SeatInfo]
    # The deal's key and the salt of its commitment, in hex: the match's chance came from the
    # key alone (arena_games.deals). The commitment is what every seat's MatchStart carried.
    deal_key: str
    deal_salt: str
    deal_commitment: str
    settings: MatchSettings = MatchSettings()
    started_at: str = ""


class ChanceRecord(_Record):
    type: Literal["chance"] = "chance"
    step: NonNegativeInt
    outcome: NonNegativeInt


class DecisionRecord(_Record):
    type: Literal["decision"] = "decision"
    step: NonNegativeInt
    seat: NonNegativeInt
    action: int
    label: str
    time_ms: float = 0.0  # the seat's time: from when the request left to when the answer came in
    # How long the decision waited in the referee, not the seat's time: the request before it
    # was sent, and the answer before the match took it.
    queued_ms: float = 0.0
    # The CPU time of the seat's process tree over time_ms, under the CPU clock (clock = "cpu");
    # left out of the file otherwise, so wall-clock replays read as before.
    cpu_ms: float | None = Field(default=None, exclude_if=lambda value: value is None)
    # Set when the referee chose this action because the seat misbehaved.
    substituted_for: str | None = None


class ForfeitRecord(_Record):
    type: Literal["forfeit"] = "forfeit"
    step: NonNegativeInt
    seat: NonNegativeInt
    cause: str  # a Misbehaviour's value
    detail: str


class EventRecord(_Record):
    type: Literal["event"] = "event"
    step: NonNegativeInt
    audience: list[NonNegativeInt] | None  # None: public
    text: str
    event: dict[str, Any]  # the wire Event as protobuf JSON


class ResultRecord(_Record):
    type: Literal["result"] = "result"
    ranks: list[int]
    scores: list[float]
    reason: str
    forfeits: dict[NonNegativeInt, list[str]] = {}  # seat -> [cause, detail]


Record = Annotated[
    Header | ChanceRecord | DecisionRecord | ForfeitRecord | EventRecord | ResultRecord,
    Field(discriminator="type"),
]
_RECORD = TypeAdapter(Record)


class ReplayError(Exception):
    """A replay file that cannot be read: names the file and line."""


class ReplayWriteError(ReplayError):
    """A replay that could not be written (a full disk, a folder that is not one): names the
    file and why. The match's result does not depend on it."""


def write(path: Path, records: list[BaseModel]) -> Path:
    """Write records as JSON Lines to path, or, when a file is there already, to the first free
    path.N.jsonl beside it; return the path written. The file appears whole (written beside it,
    then linked into place, so a reader never sees half a replay) and never replaces one that
    is there: an earlier run's replays in the same folder are kept."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except FileExistsError:  # mkdir's word for a file where the folder should be
        raise ReplayWriteError(f"cannot write {path}: {path.parent} is not a folder") from None
    except OSError as exc:
        raise ReplayWriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for record in records:
                out.write(record.model_dump_json(exclude_none=False))
                out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        return _link_new(Path(tmp), path)
    except OSError as exc:
        raise ReplayWriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        Path(tmp).unlink(missing_ok=True)


def _link_new(tmp: Path, path: Path) -> Path:
    """Give tmp the first name among path, path.2.jsonl, path.3.jsonl, ... that no file has: a
    link fails on a name that exists, where a rename would replace it."""
    number = 1
    while True:
        target = path if number == 1 else path.with_suffix(f".{number}{path.suffix}")
        try:
            _link_or_claim(tmp, target)
            return target
        except FileExistsError:
            number += 1


def _link_or_claim(tmp: Path, target: Path) -> None:
    """Link tmp to target, which must not exist. Where the filesystem has no hard links, claim
    the name with an exclusive create, then rename over what was just created: a reader may
    see the file empty for a moment, never another run's replay replaced."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS):
            raise
        os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        os.replace(tmp, target)


def read(path: Path) -> list[BaseModel]:
    """Every record of a replay; ReplayError names the file, the first bad line and what is
    wrong with it. The file is read within MAX_FILE_BYTES, each line within MAX_LINE_BYTES and
    MAX_DEPTH, and each record checked against the header's seats: a crafted file is refused
    in one line, never with a traceback from deep in a reader."""
    return [record for _, record in numbered(path)]


def numbered(path: Path) -> list[tuple[int, BaseModel]]:
    """read(path), each record with the number of its line in the file."""
    numbered = list(_parse(path, _lines(path, _bounded(path))))
    if not numbered or not isinstance(numbered[0][1], Header):
        raise ReplayError(f"{path}: line 1 is not a replay header")
    header = numbered[0][1]
    if header.format != FORMAT_VERSION:
        raise ReplayError(f"{path}: replay format {header.format} is not {FORMAT_VERSION}")
    _check_seats(path, header, numbered)
    return numbered


def _bounded(path: Path) -> bytes:
    """The file's bytes, refusing what is not a regular file (a FIFO would block, /dev/zero
    never end) and anything longer than MAX_FILE_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ReplayError(f"{path}: cannot read: not a regular file")
        try:
            data = file.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise ReplayError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ReplayError(f"{path}: longer than {MAX_FILE_BYTES // 2**20} MiB: not a replay")
    return data


def _lines(path: Path, data: bytes) -> Iterator[tuple[int, str]]:
    """The file's non-blank lines with their numbers. Split on newlines only, as written:
    str.splitlines would also split a line at a U+2028 inside a string."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if len(raw) > MAX_LINE_BYTES:
            raise ReplayError(
                f"{path}:{number}: longer than {MAX_LINE_BYTES // 1024} KiB: not a replay record"
            )
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ReplayError(f"{path}:{number}: not UTF-8 (byte {exc.start + 1})") from None
        if line.strip():
            yield number, line


def _parse(path: Path, lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, BaseModel]]:
    for number, line in lines:
        try:
            value = json.loads(line, parse_constant=_no_constant)
            _check_shape(value)
            record: BaseModel = _RECORD.validate_python(value)
        except RecursionError:
            raise ReplayError(f"{path}:{number}: nested deeper than {MAX_DEPTH} levels") from None
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path}:{number}: not JSON: {exc.msg}") from None
        except _Unreadable as exc:
            raise ReplayError(f"{path}:{number}: {exc}") from None
        except ValidationError as exc:
            raise ReplayError(f"{path}:{number}: bad record ({_problem(exc)})") from None
        except ValueError:  # json's own refusal of an integer too long to convert
            raise ReplayError(f"{path}:{number}: a number of thousands of digits") from None
        yield number, record


class _Unreadable(ValueError):
    """JSON that no record may hold."""


def _no_constant(name: str) -> None:
    raise _Unreadable(f"{name} is not a number: JSON has no such constant")


def _check_shape(value: object) -> None:
    """_Unreadable (or RecursionError) for JSON nested deeper than MAX_DEPTH, or holding a
    string that is not Unicode text (a lone surrogate, which no output can encode)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise _Unreadable("a string holds a lone surrogate (\\ud800-\\udfff)") from None
        elif isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise RecursionError
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def _problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    if first["type"] == "union_tag_not_found":
        return "it has no 'type' field"
    # An unknown type has no field path either.
    return _cut(f"{where}: {first['msg']}" if where else first["msg"])


def _cut(text: str, most: int = 200) -> str:
    """A message that quotes the file, cut to one screen line's worth."""
    return text if len(text) <= most else text[:most] + "..."


def _check_seats(path: Path, header: Header, numbered: list[tuple[int, BaseModel]]) -> None:
    """Every seat a record names is one of the header's, numbered 0..n-1 once each; one
    header, and at most one result, the last record."""
    seats = len(header.seats)
    if not seats:
        raise ReplayError(f"{path}:1: the header names no seats")
    if sorted(s.seat for s in header.seats) != list(range(seats)):
        raise ReplayError(f"{path}:1: the seats are not numbered 0 to {seats - 1} once each")
    last = numbered[-1][0]
    for number, record in numbered[1:]:
        problem = _seat_problem(record, seats)
        if isinstance(record, Header):
            problem = "a second header"
        elif isinstance(record, ResultRecord) and number != last:
            problem = "a record after the result"
        if problem:
            raise ReplayError(f"{path}:{number}: {problem}")


def _seat_problem(record: BaseModel, seats: int) -> str | None:
    """What in a record names a seat the match has not, or has the wrong number of seats."""
    named: list[int] = []
    causes = {m.value for m in Misbehaviour}
    if isinstance(record, ForfeitRecord) and record.cause not in causes:
        return f"forfeit cause {_cut(record.cause)!r} is none of {', '.join(sorted(causes))}"
    if isinstance(record, DecisionRecord | ForfeitRecord):
        named = [record.seat]
    elif isinstance(record, EventRecord):
        named = record.audience or []
    elif isinstance(record, ResultRecord):
        if not len(record.ranks) == len(record.scores) == seats:
            return f"the result's ranks and scores are not one per seat ({seats} seats)"
        if any(len(said) != 2 or said[0] not in causes for said in record.forfeits.values()):
            return "a forfeit in the result is not [cause, detail] with a known cause"
        named = list(record.forfeits)
    wrong = [seat for seat in named if seat >= seats]
    return f"seat {wrong[0]}, in a match of {seats} seats" if wrong else None


def check_rules(path: Path, header: Header) -> None:
    """A replay re-simulates only under the rules it was played by: one written under another
    version of the game's rules is refused, naming both versions."""
    try:
        game = get_game(header.game)
    except GameError as exc:
        raise ReplayError(f"{path}: {exc}") from None
    if header.rules_version != game.rules_version:
        raise ReplayError(
            f"{path}: played under {header.game} rules {header.rules_version}; this arena "
            f"plays {game.rules_version} and cannot re-simulate the older rules"
        )


@dataclass
class Opened:
    """A replay read and checked, with a fresh state to re-simulate it on."""

    path: Path
    header: Header
    records: list[BaseModel]  # after the header
    state: GameState[GameOptions]
    lines: list[int]  # the file's line of each record

    def refused(self, index: int, problem: Exception | str) -> ReplayError:
        """The error for a record (by its index in records) that the game or a reader refuses."""
        return ReplayError(f"{self.path}:{self.lines[index]}: {problem}")


def open_replay(path: Path) -> Opened:
    """Read a replay and make the state its game starts from; ReplayError when the file
    cannot be read, or was played under other rules than this arena's or options it refuses."""
    records = numbered(path)
    header = records[0][1]
    assert isinstance(header, Header)
    check_rules(path, header)
    try:
        state = get_game(header.game).new_state(header.options, len(header.seats))
    except GameError as exc:
        raise ReplayError(f"{path}:1: {exc}") from None
    lines = [number for number, _ in records[1:]]
    return Opened(path, header, [record for _, record in records[1:]], state, lines)


def steps(opened: Opened) -> Iterator[tuple[ChanceRecord | DecisionRecord, list[Event]]]:
    """Apply the replay's chance outcomes and decisions in order to opened.state, giving each
    with the events it caused; read opened.state between steps. A ReplayError names the line
    whose move is not legal (a file changed by hand)."""
    state = opened.state
    for index, record in enumerate(opened.records):
        try:
            if isinstance(record, ChanceRecord):
                events = state.apply_chance(record.outcome)
            elif isinstance(record, DecisionRecord):
                events = state.apply(record.seat, record.action)
            else:
                continue
        except GameError as exc:
            raise opened.refused(index, exc) from None
        yield record, events
