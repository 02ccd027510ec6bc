"""A replay file cut to one seat: what that seat knew of its match, and nothing it did not.

The referee's replay (arena_games.replay_file) holds the deal's key, every chance outcome and
every seat's choices: from it anyone computes every hidden card. A seat's file is JSON Lines
too, written from a re-simulation of that replay (walk.frames), and holds exactly:

- line 1, `seat_header`: the match, game, rules, options, settings and start, the seats' names,
  the deal's commitment (every seat's MatchStart carried it) and which seat this file is for.
  Not the deal's key nor its salt (the key gives every card), nor any seat's SPEC;
- per frame (a decision and what followed it, frame 0 the table before the first decision):
  the records walk.visible lets the seat see, in the replay's order and shapes: events whose
  audience is public or holds the seat; the seat's own decisions whole (action, label, time,
  substitution; not the referee's queueing time); another seat's decisions as who decided, at
  which step, in how long (no action, no label: a seat learns another's choice only from the
  events it caused); forfeits, as the replay has them (public, as on the viewer's public
  page). No chance outcome. Then `observation`: the seat's observation at the frame's end, as
  the viewer shows it (cards as labels);
- last, the result, as the replay has it (public too).

These are the viewer's rules for a seat (walk.visible, viewer/model.py), so a seat's file and
its page show the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from arena_games import replay_file as replay
from arena_games.match_settings import MatchSettings
from arena_games.replay_file import open_replay
from pydantic import BaseModel, ConfigDict, NonNegativeInt

from referee.replays.viewer.observations import observation_json
from referee.replays.walk import frames, visible

SEAT_FORMAT = 1


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SeatName(_Record):
    seat: NonNegativeInt
    name: str


class SeatHeader(_Record):
    type: Literal["seat_header"] = "seat_header"
    format: int = SEAT_FORMAT
    seat: NonNegativeInt  # whose file this is
    match_id: str
    game: str
    rules_version: str
    options: dict[str, Any]
    seats: list[SeatName]
    deal_commitment: str
    settings: MatchSettings
    started_at: str
    # This seat's uploaded version's files' hash ('' for another bot): the other seats' are
    # not the author's to see (a hash confirms a guess of their files).
    content_hash: str = ""


class OwnDecision(_Record):
    type: Literal["decision"] = "decision"
    step: NonNegativeInt
    seat: NonNegativeInt
    action: int
    label: str
    time_ms: float
    substituted_for: str | None


class OtherDecision(_Record):
    type: Literal["decision"] = "decision"
    step: NonNegativeInt
    seat: NonNegativeInt
    time_ms: float


class SeatObservation(_Record):
    type: Literal["observation"] = "observation"
    frame: NonNegativeInt
    step: NonNegativeInt  # the game's steps applied by then
    observation: dict[str, Any]


def seat_records(path: Path, seat: int) -> list[BaseModel]:
    """The seat's file as records. replay.ReplayError for a file that cannot be read or
    re-simulated; ValueError for a seat the match has not."""
    opened = open_replay(path)
    header = opened.header
    if not 0 <= seat < len(header.seats):
        raise ValueError(f"match {header.match_id} has seats 0 to {len(header.seats) - 1}")
    out: list[BaseModel] = [
        SeatHeader(
            seat=seat,
            match_id=header.match_id,
            game=header.game,
            rules_version=header.rules_version,
            options=header.options,
            seats=[SeatName(seat=s.seat, name=s.name) for s in header.seats],
            deal_commitment=header.deal_commitment,
            settings=header.settings,
            started_at=header.started_at,
            content_hash=next((s.content_hash for s in header.seats if s.seat == seat), ""),
        )
    ]
    result: list[BaseModel] = []
    for frame in frames(opened):
        for record in frame.records:
            if isinstance(record, replay.ResultRecord):
                result = [record]  # after the last observation: the file's last line
            elif visible(record, seat):
                out.append(_seat_record(record, seat))
        state = opened.state
        observed = observation_json(state.observation(seat))
        out.append(
            SeatObservation(frame=frame.number, step=len(state.history), observation=observed)
        )
    return out + result


def seat_text(path: Path, seat: int) -> str:
    """The seat's file, as JSON Lines."""
    return "".join(record.model_dump_json() + "\n" for record in seat_records(path, seat))


def _seat_record(record: BaseModel, seat: int) -> BaseModel:
    if isinstance(record, replay.DecisionRecord):
        if record.seat != seat:
            return OtherDecision(step=record.step, seat=record.seat, time_ms=record.time_ms)
        return OwnDecision(
            step=record.step,
            seat=seat,
            action=record.action,
            label=record.label,
            time_ms=record.time_ms,
            substituted_for=record.substituted_for,
        )
    if isinstance(record, replay.ForfeitRecord | replay.EventRecord):
        return record  # an event visible is public, or the seat is in its audience
    raise AssertionError(f"{type(record).__name__} is in no seat's file")
