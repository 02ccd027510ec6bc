"""Showing a replay as the referee, as one seat, or as a spectator, up to any step.

A replay is re-simulated from its records (`frames`): each frame is one decision with the
chance steps and events that followed it, and the state then. The text view here, the HTML
viewer and the terminal stepper (referee.viewer) all read a replay through `frames`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from referee import replay
from referee.games import get_game
from referee.games.base import GameOptions, GameState

REFEREE = "referee"
PUBLIC = "public"

Viewer = str | int
"""'referee', 'public' or a seat number."""


def parse_viewer(text: str, num_seats: int) -> Viewer:
    """'referee', 'public' or a seat number; ValueError otherwise."""
    if text in (REFEREE, PUBLIC):
        return text
    if text.isdigit() and int(text) < num_seats:
        return int(text)
    raise ValueError(f"--as takes referee, public or a seat 0..{num_seats - 1}, not {text!r}")


@dataclass
class Opened:
    """A replay read and checked, with a fresh state to re-simulate it on."""

    path: Path
    header: replay.Header
    records: list[BaseModel]  # after the header
    state: GameState[GameOptions]


def open_replay(path: Path) -> Opened:
    """Read a replay and make the state its game starts from; replay.ReplayError when the file
    cannot be read or was played under other rules than this arena's."""
    records = replay.read(path)
    header = records[0]
    assert isinstance(header, replay.Header)
    replay.check_rules(path, header)
    state = get_game(header.game).new_state(header.options, len(header.seats))
    return Opened(path, header, records[1:], state)


@dataclass
class Frame:
    """One decision and what followed it up to the next decision (frame 0: what came before
    the first). `state` is the live state at the frame's end: read it before the next frame."""

    number: int
    records: list[BaseModel] = field(default_factory=list)
    # How each chance outcome reads, by its index in records (a card, a die face).
    chance_labels: dict[int, str] = field(default_factory=dict)

    @property
    def decision(self) -> replay.DecisionRecord | None:
        first = self.records[0] if self.records else None
        return first if isinstance(first, replay.DecisionRecord) else None


def frames(opened: Opened, until: int | None = None) -> Iterator[Frame]:
    """Apply the replay's records one by one: frame 0 is the table before the first decision,
    and each decision starts the next frame. With until, stop once that many steps (chance
    outcomes and decisions) are applied, their events included. A GameError means the file's
    moves are not legal (a file changed by hand)."""
    state = opened.state
    frame = Frame(0)
    for record in opened.records:
        if isinstance(record, replay.EventRecord):
            pass
        elif until is not None and len(state.history) >= until:
            break
        elif isinstance(record, replay.DecisionRecord):
            yield frame
            frame = Frame(frame.number + 1)
            state.apply(record.seat, record.action)
        elif isinstance(record, replay.ChanceRecord):
            frame.chance_labels[len(frame.records)] = state.chance_label(record.outcome)
            state.apply_chance(record.outcome)
        frame.records.append(record)
    yield frame


def visible(record: BaseModel, viewer: Viewer) -> bool:
    """Whether the viewer may see a record at all: the referee sees everything; a seat sees
    the events for it, its own decisions and every decision's seat and time; the public sees
    public events only. Chance outcomes are the referee's alone."""
    if viewer == REFEREE:
        return True
    if isinstance(record, replay.EventRecord):
        return record.audience is None or (isinstance(viewer, int) and viewer in record.audience)
    return not isinstance(record, replay.ChanceRecord)


def log_lines(frame: Frame, viewer: Viewer) -> list[str]:
    """The frame's log as the viewer may read it."""
    lines: list[str] = []
    for index, record in enumerate(frame.records):
        if not visible(record, viewer):
            continue
        if isinstance(record, replay.ChanceRecord):
            lines.append(f"{record.step:5d}  chance: {frame.chance_labels[index]}")
        elif isinstance(record, replay.DecisionRecord):
            lines.append(_decision_line(record, viewer))
        elif isinstance(record, replay.EventRecord):
            lines.append(f"{record.step:5d}    {record.text}")
        elif isinstance(record, replay.ForfeitRecord):
            lines.append(
                f"{record.step:5d}  seat {record.seat} forfeits: {record.cause} ({record.detail})"
            )
        elif isinstance(record, replay.ResultRecord):
            lines.append(f"result: ranks {record.ranks}, scores {record.scores} - {record.reason}")
    return lines


def _decision_line(record: replay.DecisionRecord, viewer: Viewer) -> str:
    """The referee and the deciding seat read what was chosen; others only who chose, and
    how long it took (which every seat could time for itself)."""
    if viewer not in (REFEREE, record.seat):
        return f"{record.step:5d}  seat {record.seat} decides in {record.time_ms:.1f} ms"
    by = f" (played by the referee: {record.substituted_for})" if record.substituted_for else ""
    return (
        f"{record.step:5d}  seat {record.seat} chooses {record.label} "
        f"in {record.time_ms:.1f} ms{by}"
    )


def table(state: GameState[GameOptions], viewer: Viewer) -> str:
    """The table as the viewer sees it now; the referee sees every seat's view."""
    if isinstance(viewer, int):
        return state.render(viewer)
    if viewer == PUBLIC:
        return state.render(None)
    return "\n".join(state.render(seat) for seat in range(state.num_seats))


def show(path: Path, viewer_text: str, step: int | None, boards: bool = False) -> str:
    """The log of what the viewer may see up to step (every step when None), then the table as
    the viewer sees it then; with boards, the table after every decision too."""
    opened = open_replay(path)
    header = opened.header
    viewer = parse_viewer(viewer_text, len(header.seats))
    names = ", ".join(f"seat {s.seat}: {s.name}" for s in header.seats)
    lines = [
        f"{header.game} match {header.match_id} - {names}",
        f"deal commitment {header.deal_commitment}",
        f"shown as: {viewer if isinstance(viewer, str) else f'seat {viewer}'}",
    ]
    for frame in frames(opened, step):
        lines.extend(log_lines(frame, viewer))
        if boards:
            lines.extend(["", table(opened.state, viewer), ""])
    if not boards:
        lines.extend(["", table(opened.state, viewer)])
    return "\n".join(lines)
