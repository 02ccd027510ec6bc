"""Showing a replay as the referee, as one seat, or as a spectator, up to any step.

A replay is re-simulated from its records (`frames`): each frame is one decision with the
chance steps and events that followed it, and the state then. The text view here, the HTML
viewer and the terminal stepper (referee.replays.viewer) all read a replay through `frames`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from arena_games import replay_file as replay
from arena_games.base import GameError, GameOptions, GameState
from arena_games.replay_file import Opened, open_replay
from pydantic import BaseModel, ConfigDict, Field

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


class _Shown(BaseModel):
    model_config = ConfigDict(extra="forbid")


StepKind = Literal["chance", "decision", "event", "forfeit"]


class ShownStep(_Shown):
    step: int = Field(description="the game's step the line belongs to")
    frame: int = Field(description="0 before the first decision, N from the Nth decision on")
    kind: StepKind
    text: str = Field(description="the line as the text view prints it")
    seat: int | None = Field(description="who decided or forfeited")
    action: int | None = Field(
        description="a decision's action index (null to a seat that did not decide), a chance "
        "outcome's index"
    )
    label: str | None = Field(description="the action's or chance outcome's label, as action")
    time_ms: float | None = Field(description="the seat's time for a decision")
    substituted_for: str | None = Field(
        description="set when the referee chose for the seat (seen as action is)"
    )
    audience: list[int] | None = Field(description="an event's seats; null for a public one")


class ShownResult(_Shown):
    ranks: list[int]
    scores: list[float]
    reason: str


class ReplayView(_Shown):
    file: str
    game: str
    match_id: str
    seats: list[str] = Field(description="the bots' names, seat 0 first")
    content_hashes: list[str] = Field(
        description="each seat's uploaded version's files' SHA-256, seat 0 first; '' for a bot "
        "that is not an upload (and in replays from before it was recorded)"
    )
    deal_commitment: str
    shown_as: str = Field(description="referee, public, or seat N")
    steps: list[ShownStep] = Field(description="what the viewer may see, in order")
    result: ShownResult | None = Field(description="null when cut off before the end (--step)")
    table: str = Field(description="the table as the viewer sees it then, as text")
    boards: list[str] | None = Field(
        description="with --boards: the table at the end of each frame, frame 0 first; else null"
    )


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
    outcomes and decisions) are applied, their events included. A ReplayError names the line
    whose move is not legal (a file changed by hand)."""
    state = opened.state
    frame = Frame(0)
    for index, record in enumerate(opened.records):
        if isinstance(record, replay.EventRecord):
            pass
        elif until is not None and len(state.history) >= until:
            break
        elif isinstance(record, replay.DecisionRecord):
            yield frame
            frame = Frame(frame.number + 1)
            try:
                state.apply(record.seat, record.action)
            except GameError as exc:
                raise opened.refused(index, exc) from None
        elif isinstance(record, replay.ChanceRecord):
            try:
                state.apply_chance(record.outcome)
            except GameError as exc:
                raise opened.refused(index, exc) from None
            # Labelled once applied: the engine has then checked that the outcome is one of its.
            frame.chance_labels[len(frame.records)] = state.chance_label(record.outcome)
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


def shown_steps(frame: Frame, viewer: Viewer) -> list[ShownStep]:
    """The frame's steps as the viewer may read them (its result apart: `shown_result`); a
    public event that only repeats, with less, a private one the viewer also reads is left out
    (a seat's own draw is one line, not "draws 5h" and then "draws a card")."""
    echoes = _public_echoes(frame.records, viewer)
    steps = [
        _step(record, frame, index, viewer)
        for index, record in enumerate(frame.records)
        if visible(record, viewer) and index not in echoes
    ]
    return [s for s in steps if s is not None]


# The wire Event's envelope: what remains is the game's own message, the event itself.
_ENVELOPE = frozenset(("matchId", "step", "text", "audience", "public"))


def _public_echoes(records: list[BaseModel], viewer: Viewer) -> set[int]:
    """Indices of the public events each of which tells the viewer nothing beyond one private
    event of the same step it reads too: the same kind of event, every field it sets set alike
    in the private one. Each private event excuses one public event at most. The public view
    reads no private event, so it keeps every line."""
    if viewer == PUBLIC:
        return set()
    private: list[replay.EventRecord] = []
    echoes: set[int] = set()
    for index, record in enumerate(records):
        if not isinstance(record, replay.EventRecord) or not visible(record, viewer):
            continue
        if record.audience is not None:
            private.append(record)
            continue
        twin = next((p for p in private if _repeats(record, p)), None)
        if twin is not None:
            private.remove(twin)
            echoes.add(index)
    return echoes


def _repeats(public: replay.EventRecord, secret: replay.EventRecord) -> bool:
    if public.step != secret.step:
        return False
    told = {k: v for k, v in public.event.items() if k not in _ENVELOPE}
    known = {k: v for k, v in secret.event.items() if k not in _ENVELOPE}
    return told.keys() == known.keys() and _within(told, known)


def _within(told: object, known: object) -> bool:
    """Whether told says nothing known does not: a dict's fields a subset, alike."""
    if isinstance(told, dict) and isinstance(known, dict):
        return all(k in known and _within(v, known[k]) for k, v in told.items())
    return told == known


def shown_result(frame: Frame) -> ShownResult | None:
    """The match's result, when it is in this frame (the last)."""
    for record in frame.records:
        if isinstance(record, replay.ResultRecord):
            return ShownResult(ranks=record.ranks, scores=record.scores, reason=record.reason)
    return None


def log_lines(frame: Frame, viewer: Viewer) -> list[str]:
    """The frame's log as the viewer may read it: its steps, then the result if it is there
    (the result is a replay's last record)."""
    lines = [s.text for s in shown_steps(frame, viewer)]
    result = shown_result(frame)
    return lines if result is None else [*lines, _result_line(result)]


def _step(record: BaseModel, frame: Frame, index: int, viewer: Viewer) -> ShownStep | None:
    """One record the viewer may see, as a step; None for the result."""
    if isinstance(record, replay.ChanceRecord):
        label = frame.chance_labels[index]
        return _shown(
            frame, record.step, "chance", f"chance: {label}", action=record.outcome, label=label
        )
    if isinstance(record, replay.DecisionRecord):
        return _decision(frame, record, viewer)
    if isinstance(record, replay.EventRecord):
        return _shown(frame, record.step, "event", f"  {record.text}", audience=record.audience)
    if isinstance(record, replay.ForfeitRecord):
        words = f"seat {record.seat} forfeits: {record.cause} ({record.detail})"
        return _shown(frame, record.step, "forfeit", words, seat=record.seat)
    return None


def _decision(frame: Frame, record: replay.DecisionRecord, viewer: Viewer) -> ShownStep:
    """The referee and the deciding seat read what was chosen; others only who chose, and
    how long it took (which every seat could time for itself)."""
    time = f"in {record.time_ms:.1f} ms"
    if viewer not in (REFEREE, record.seat):
        words = f"seat {record.seat} decides {time}"
        return _shown(
            frame, record.step, "decision", words, seat=record.seat, time_ms=record.time_ms
        )
    by = f" (played by the referee: {record.substituted_for})" if record.substituted_for else ""
    return _shown(
        frame,
        record.step,
        "decision",
        f"seat {record.seat} chooses {record.label} {time}{by}",
        seat=record.seat,
        action=record.action,
        label=record.label,
        time_ms=record.time_ms,
        substituted_for=record.substituted_for,
    )


def _shown(frame: Frame, step: int, kind: StepKind, words: str, **fields: object) -> ShownStep:
    """A step; its text is the line the text view prints, step number first."""
    empty: dict[str, object] = dict.fromkeys(
        ("seat", "action", "label", "time_ms", "substituted_for", "audience")
    )
    line = f"{step:5d}  {words}"
    return ShownStep.model_validate(
        {"step": step, "frame": frame.number, "kind": kind, "text": line} | empty | fields
    )


def _result_line(result: ShownResult) -> str:
    return f"result: ranks {result.ranks}, scores {result.scores} - {result.reason}"


def table(state: GameState[GameOptions], viewer: Viewer) -> str:
    """The table as the viewer sees it now; the referee sees every seat's view."""
    if isinstance(viewer, int):
        return state.render(viewer)
    if viewer == PUBLIC:
        return state.render(None)
    return "\n".join(state.render(seat) for seat in range(state.num_seats))


def view(path: Path, viewer_text: str, step: int | None, boards: bool = False) -> ReplayView:
    """What the viewer may see of the replay up to step (every step when None): its log, then
    the table then; with boards, the table at the end of every frame too."""
    opened = open_replay(path)
    header = opened.header
    viewer = parse_viewer(viewer_text, len(header.seats))
    steps: list[ShownStep] = []
    result = None
    tables: list[str] = []
    for frame in frames(opened, step):
        steps += shown_steps(frame, viewer)
        result = shown_result(frame) or result
        if boards:
            tables.append(table(opened.state, viewer))
    return ReplayView(
        file=str(path),
        game=header.game,
        match_id=header.match_id,
        seats=[s.name for s in sorted(header.seats, key=lambda s: s.seat)],
        content_hashes=[s.content_hash for s in sorted(header.seats, key=lambda s: s.seat)],
        deal_commitment=header.deal_commitment,
        shown_as=viewer if isinstance(viewer, str) else f"seat {viewer}",
        steps=steps,
        result=result,
        table=table(opened.state, viewer),
        boards=tables if boards else None,
    )


def text(shown: ReplayView) -> str:
    """The view as the text `arena replay show` prints: with boards, each frame's log and then
    its table; without, the whole log and then the last table."""
    names = ", ".join(f"seat {seat}: {name}" for seat, name in enumerate(shown.seats))
    lines = [
        f"{shown.game} match {shown.match_id} - {names}",
        f"deal commitment {shown.deal_commitment}",
        f"shown as: {shown.shown_as}",
    ]
    uploads = [f"seat {s}: {h}" for s, h in enumerate(shown.content_hashes) if h]
    if uploads:
        lines.insert(2, "uploaded files: " + ", ".join(uploads))
    result = [] if shown.result is None else [_result_line(shown.result)]
    if shown.boards is None:
        return "\n".join([*lines, *(s.text for s in shown.steps), *result, "", shown.table])
    last = len(shown.boards) - 1
    for number, board in enumerate(shown.boards):
        lines += [s.text for s in shown.steps if s.frame == number]
        lines += [*(result if number == last else []), "", board, ""]
    return "\n".join(lines)
