"""Replay files: one JSON Lines file per match, written atomically.

Line 1 is the header; then, in order, every chance outcome, decision, forfeit and event (with
its audience); the last line is the result. `verify` re-simulates from the deal's key and the
decisions and must reproduce every chance outcome, event and the result.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from arena_games import get_game
from arena_games.base import Event, GameError, GameOptions, GameState
from arena_games.match_settings import MatchSettings

FORMAT_VERSION = 2


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SeatInfo(_Record):
    seat: int
    name: str
    spec: str = ""


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
    step: int
    outcome: int


class DecisionRecord(_Record):
    type: Literal["decision"] = "decision"
    step: int
    seat: int
    action: int
    label: str
    time_ms: float = 0.0  # the seat's time: from when the request left to when the answer came in
    # How long the decision waited in the referee, not the seat's time: the request before it
    # was sent, and the answer before the match took it.
    queued_ms: float = 0.0
    # Set when the referee chose this action because the seat misbehaved.
    substituted_for: str | None = None


class ForfeitRecord(_Record):
    type: Literal["forfeit"] = "forfeit"
    step: int
    seat: int
    cause: str
    detail: str


class EventRecord(_Record):
    type: Literal["event"] = "event"
    step: int
    audience: list[int] | None  # None: public
    text: str
    event: dict[str, Any]  # the wire Event as protobuf JSON


class ResultRecord(_Record):
    type: Literal["result"] = "result"
    ranks: list[int]
    scores: list[float]
    reason: str
    forfeits: dict[int, list[str]] = {}  # seat -> [cause, detail]


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
    """Every record of a replay; ReplayError names the first bad line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ReplayError(f"{path}: cannot read: {exc}") from None
    records: list[BaseModel] = list(_parse(path, lines))
    if not records or not isinstance(records[0], Header):
        raise ReplayError(f"{path}: line 1 is not a replay header")
    if records[0].format != FORMAT_VERSION:
        raise ReplayError(f"{path}: replay format {records[0].format} is not {FORMAT_VERSION}")
    return records


def _parse(path: Path, lines: list[str]) -> Iterator[BaseModel]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record: BaseModel = _RECORD.validate_python(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path}:{number}: not JSON: {exc.msg}") from None
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            if first["type"] == "union_tag_not_found":
                problem = "it has no 'type' field"
            else:  # an unknown type has no field path either
                problem = f"{where}: {first['msg']}" if where else first["msg"]
            raise ReplayError(f"{path}:{number}: bad record ({problem})") from None
        yield record


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


def open_replay(path: Path) -> Opened:
    """Read a replay and make the state its game starts from; ReplayError when the file
    cannot be read or was played under other rules than this arena's."""
    records = read(path)
    header = records[0]
    assert isinstance(header, Header)
    check_rules(path, header)
    state = get_game(header.game).new_state(header.options, len(header.seats))
    return Opened(path, header, records[1:], state)


def steps(opened: Opened) -> Iterator[tuple[ChanceRecord | DecisionRecord, list[Event]]]:
    """Apply the replay's chance outcomes and decisions in order to opened.state, giving each
    with the events it caused; read opened.state between steps. A GameError means the file's
    moves are not legal (a file changed by hand)."""
    state = opened.state
    for record in opened.records:
        if isinstance(record, ChanceRecord):
            yield record, state.apply_chance(record.outcome)
        elif isinstance(record, DecisionRecord):
            yield record, state.apply(record.seat, record.action)
