"""Replay files: one JSON Lines file per match, written atomically.

Line 1 is the header; then, in order, every chance outcome, decision, forfeit and event (with
its audience); the last line is the result. `verify` re-simulates from the deal's key and the
decisions and must reproduce every chance outcome, event and the result.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from referee.settings import MatchSettings

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
    # key alone (referee.deals). The commitment is what every seat's MatchStart carried.
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


def write(path: Path, records: list[BaseModel]) -> Path:
    """Write records as JSON Lines: to a temporary file beside path, then renamed over it, so a
    reader never sees half a replay."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for record in records:
                out.write(record.model_dump_json(exclude_none=False))
                out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


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
            raise ReplayError(f"{path}:{number}: bad record ({where}: {first['msg']})") from None
        yield record
