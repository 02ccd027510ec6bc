"""Showing a replay as the referee, as one seat, or as a spectator, up to any step."""

from __future__ import annotations

from pathlib import Path

from referee import replay
from referee.games import get_game
from referee.games.base import GameOptions, GameState
from referee.reports import ReplayView, ShownResult, ShownStep, StepKind

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
    return text(view(path, viewer_text, step))


def view(path: Path, viewer_text: str, step: int | None) -> ReplayView:
    """What the viewer may see of the replay up to step (every step when None)."""
    records = replay.read(path)
    header = records[0]
    assert isinstance(header, replay.Header)
    viewer = parse_viewer(viewer_text, len(header.seats))
    state = get_game(header.game).new_state(header.options, len(header.seats))
    steps: list[ShownStep] = []
    result = None
    for record in records[1:]:
        if (
            step is not None
            and len(state.history) >= step
            and not isinstance(record, replay.EventRecord)
        ):
            break
        if isinstance(record, replay.ResultRecord):
            result = ShownResult(ranks=record.ranks, scores=record.scores, reason=record.reason)
        shown = _step(record, state, viewer)
        if shown is not None:
            steps.append(shown)
    return ReplayView(
        file=str(path),
        game=header.game,
        match_id=header.match_id,
        seats=[s.name for s in sorted(header.seats, key=lambda s: s.seat)],
        deal_commitment=header.deal_commitment,
        shown_as=viewer if isinstance(viewer, str) else f"seat {viewer}",
        steps=steps,
        result=result,
        table=_table(state, viewer),
    )


def text(shown: ReplayView) -> str:
    """The view as the text `arena replay show` prints."""
    names = ", ".join(f"seat {seat}: {name}" for seat, name in enumerate(shown.seats))
    lines = [
        f"{shown.game} match {shown.match_id} - {names}",
        f"deal commitment {shown.deal_commitment}",
        f"shown as: {shown.shown_as}",
    ]
    lines += [s.text for s in shown.steps]
    if shown.result is not None:
        result = shown.result
        lines.append(f"result: ranks {result.ranks}, scores {result.scores} - {result.reason}")
    return "\n".join([*lines, "", shown.table])


def _step(record: object, state: GameState[GameOptions], viewer: str | int) -> ShownStep | None:
    """Applies the record to the state; what the viewer sees of it, if anything."""
    if isinstance(record, replay.ChanceRecord):
        state.apply_chance(record.outcome)
        label = state.chance_label(record.outcome)
        if viewer != REFEREE:
            return None
        return _shown(record.step, "chance", f"chance: {label}", action=record.outcome, label=label)
    if isinstance(record, replay.DecisionRecord):
        state.apply(record.seat, record.action)
        if viewer != REFEREE:
            return None
        by = f" (played by the referee: {record.substituted_for})" if record.substituted_for else ""
        return _shown(
            record.step,
            "decision",
            f"seat {record.seat} chooses {record.label} in {record.time_ms:.1f} ms{by}",
            seat=record.seat,
            action=record.action,
            label=record.label,
            time_ms=record.time_ms,
            substituted_for=record.substituted_for,
        )
    if isinstance(record, replay.EventRecord):
        visible = (
            viewer == REFEREE
            or record.audience is None
            or (isinstance(viewer, int) and viewer in record.audience)
        )
        if not visible:
            return None
        return _shown(record.step, "event", f"  {record.text}", audience=record.audience)
    if isinstance(record, replay.ForfeitRecord):
        words = f"seat {record.seat} forfeits: {record.cause} ({record.detail})"
        return _shown(record.step, "forfeit", words, seat=record.seat)
    return None


def _shown(step: int, kind: StepKind, words: str, **fields: object) -> ShownStep:
    """A step; its text is the line the text view prints, step number first."""
    empty: dict[str, object] = dict.fromkeys(
        ("seat", "action", "label", "time_ms", "substituted_for", "audience")
    )
    return ShownStep.model_validate(
        {"step": step, "kind": kind, "text": f"{step:5d}  {words}"} | empty | fields
    )


def _table(state: GameState[GameOptions], viewer: str | int) -> str:
    if isinstance(viewer, int):
        return state.render(viewer)
    if viewer == PUBLIC:
        return state.render(None)
    return "\n".join(state.render(seat) for seat in range(state.num_seats))
