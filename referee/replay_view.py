"""Showing a replay as the referee, as one seat, or as a spectator, up to any step."""

from __future__ import annotations

from pathlib import Path

from referee import replay
from referee.games import get_game
from referee.games.base import GameOptions, GameState

REFEREE = "referee"
PUBLIC = "public"


def parse_viewer(text: str, num_seats: int) -> str | int:
    """'referee', 'public' or a seat number; ValueError otherwise."""
    if text in (REFEREE, PUBLIC):
        return text
    if text.isdigit() and int(text) < num_seats:
        return int(text)
    raise ValueError(f"--as takes referee, public or a seat 0..{num_seats - 1}, not {text!r}")


def show(path: Path, viewer_text: str, step: int | None) -> str:
    """The log of what the viewer may see up to step (every step when None), then the table as
    the viewer sees it then."""
    records = replay.read(path)
    header = records[0]
    assert isinstance(header, replay.Header)
    viewer = parse_viewer(viewer_text, len(header.seats))
    state = get_game(header.game).new_state(header.options, len(header.seats))
    names = ", ".join(f"seat {s.seat}: {s.name}" for s in header.seats)
    lines = [
        f"{header.game} match {header.match_id} - {names}",
        f"deal commitment {header.deal_commitment}",
        f"shown as: {viewer if isinstance(viewer, str) else f'seat {viewer}'}",
    ]
    for record in records[1:]:
        if (
            step is not None
            and len(state.history) >= step
            and not isinstance(record, replay.EventRecord)
        ):
            break
        lines.extend(_line(record, state, viewer))
    lines.append("")
    lines.append(_table(state, viewer))
    return "\n".join(lines)


def _line(record: object, state: GameState[GameOptions], viewer: str | int) -> list[str]:
    if isinstance(record, replay.ChanceRecord):
        state.apply_chance(record.outcome)
        label = state.chance_label(record.outcome)
        return [f"{record.step:5d}  chance: {label}"] if viewer == REFEREE else []
    if isinstance(record, replay.DecisionRecord):
        state.apply(record.seat, record.action)
        if viewer != REFEREE:
            return []
        by = f" (played by the referee: {record.substituted_for})" if record.substituted_for else ""
        return [
            f"{record.step:5d}  seat {record.seat} chooses {record.label} "
            f"in {record.time_ms:.1f} ms{by}"
        ]
    if isinstance(record, replay.EventRecord):
        visible = (
            viewer == REFEREE
            or record.audience is None
            or (isinstance(viewer, int) and viewer in record.audience)
        )
        return [f"{record.step:5d}    {record.text}"] if visible else []
    if isinstance(record, replay.ForfeitRecord):
        return [f"{record.step:5d}  seat {record.seat} forfeits: {record.cause} ({record.detail})"]
    if isinstance(record, replay.ResultRecord):
        return [f"result: ranks {record.ranks}, scores {record.scores} - {record.reason}"]
    return []


def _table(state: GameState[GameOptions], viewer: str | int) -> str:
    if isinstance(viewer, int):
        return state.render(viewer)
    if viewer == PUBLIC:
        return state.render(None)
    return "\n".join(state.render(seat) for seat in range(state.num_seats))
