"""The replay viewer's page data: a replay re-simulated into one JSON-ready model, a frame per
decision, holding only what the chosen viewpoint may see.

This is the one way in for every page that shows a match (the exported HTML file, the
tournament pages of `arena web`, and later the ladder): `load(path, viewer)` gives the model,
the page's renderers draw it.

A frame holds the log of the decision and what followed it, the clocks, and the observation
of each viewpoint the file may show: a seat's file holds that seat's observations, the
public's the spectators', the referee's every seat's and the spectators' (its page switches
between them) and what nobody at the table knows, which the engine draws for the referee
(`GameState.referee_picture`: the cards face down in a formation, say) under "truth".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena_games import get_game
from arena_games import replay_file as replay
from arena_games.base import GameOptions, GameState
from arena_games.match_settings import MatchSettings
from arena_games.replay_file import Opened, open_replay
from google.protobuf import json_format
from pydantic import BaseModel

from referee.replays.viewer.observations import event_json, observation_json
from referee.replays.walk import (
    PUBLIC,
    REFEREE,
    Frame,
    Viewer,
    frames,
    parse_viewer,
    visible,
)

MODEL_VERSION = 1
Json = dict[str, Any]


def load(path: Path, viewer_text: str) -> Json:
    """The model of the replay at path as viewer_text ('referee', 'public' or a seat number)
    sees it. replay.ReplayError for a file that cannot be read, ValueError for a viewer the
    match has not, GameError for moves that are not legal (a file changed by hand)."""
    opened = open_replay(path)
    return build(opened, parse_viewer(viewer_text, len(opened.header.seats)))


def viewpoint_key(viewer: Viewer) -> str:
    """How a viewpoint is named in the model: 'referee', 'public' or the seat's number."""
    return str(viewer)


def viewpoints(viewer: Viewer, num_seats: int) -> list[str]:
    """The viewpoints a model for viewer holds: the referee's file holds them all."""
    if viewer != REFEREE:
        return [viewpoint_key(viewer)]
    return [REFEREE, *(str(seat) for seat in range(num_seats)), PUBLIC]


def build(opened: Opened, viewer: Viewer) -> Json:
    _check_events(opened)
    header = opened.header
    game = get_game(header.game)
    clocks = _Clocks(header.settings, len(header.seats))
    shown = [_frame(frame, opened.state, viewer, clocks) for frame in frames(opened)]
    result = next((r for r in reversed(opened.records) if isinstance(r, replay.ResultRecord)), None)
    return {
        "version": MODEL_VERSION,
        "game": header.game,
        "title": game.title,
        "rules_version": header.rules_version,
        "match_id": header.match_id,
        "options": header.options,
        "seats": [{"seat": s.seat, "name": s.name} for s in header.seats],
        "settings": {
            "decision_ms": header.settings.decision_ms,
            "time_bank_ms": header.settings.time_bank_ms,
        },
        "viewer": viewpoint_key(viewer),
        "viewpoints": viewpoints(viewer, len(header.seats)),
        "result": None if result is None else _result(result),
        "frames": shown,
    }


def _check_events(opened: Opened) -> None:
    """ReplayError naming the line of an event the viewer cannot show: the file holds it as
    protobuf JSON, which a crafted file may fill with fields the wire has not, or a card no
    deck holds."""
    for index, record in enumerate(opened.records):
        if isinstance(record, replay.EventRecord):
            try:
                event_json(record.event)
            except (json_format.ParseError, LookupError, ValueError, TypeError) as exc:
                said = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
                raise opened.refused(index, f"an event the viewer cannot show ({said})") from None


def _result(record: replay.ResultRecord) -> Json:
    return {
        "ranks": record.ranks,
        "scores": record.scores,
        "reason": record.reason,
        "forfeits": {str(seat): cause for seat, cause in record.forfeits.items()},
    }


def _frame(frame: Frame, state: GameState[GameOptions], viewer: Viewer, clocks: _Clocks) -> Json:
    decision = frame.decision
    if decision is not None:
        # The bank is spent in the match's clock: CPU time under clock = "cpu".
        spent = decision.cpu_ms if decision.cpu_ms is not None else decision.time_ms
        clocks.spend(decision.seat, spent)
    out: Json = {
        "number": frame.number,
        "step": len(state.history),
        "decision": None if decision is None else _decision(decision, viewer),
        "log": [
            _entry(record, frame.chance_labels.get(index, ""), viewer)
            for index, record in enumerate(frame.records)
            if visible(record, viewer)
        ],
        "clocks": clocks.now(),
        "to_move": list(state.to_move()),
        "over": state.is_over(),
        "views": {
            key: observation_json(state.observation(None if key == PUBLIC else int(key)))
            for key in viewpoints(viewer, state.num_seats)
            if key != REFEREE
        },
    }
    # What the referee knows that no seat's observation shows: the engine draws it, if any.
    truth = state.referee_picture() if viewer == REFEREE else None
    if truth is not None:
        out["truth"] = truth
    return out


def _decision(record: replay.DecisionRecord, viewer: Viewer) -> Json:
    """Who decided and how long it took, for everyone; what was chosen, for the referee and
    the seat that chose (the others learn it from the events it caused, if at all)."""
    out: Json = {"seat": record.seat, "time_ms": round(record.time_ms, 1)}
    if viewer in (REFEREE, record.seat):
        out["label"] = record.label
        if record.substituted_for:
            out["substituted_for"] = record.substituted_for
    return out


def _entry(record: BaseModel, chance_label: str, viewer: Viewer) -> Json:
    if isinstance(record, replay.EventRecord):
        return {
            "kind": "event",
            "step": record.step,
            "text": record.text,
            "audience": record.audience,
            "event": event_json(record.event),
        }
    if isinstance(record, replay.ChanceRecord):
        return {"kind": "chance", "step": record.step, "text": chance_label}
    if isinstance(record, replay.DecisionRecord):
        return {"kind": "decision", "step": record.step, **_decision(record, viewer)}
    if isinstance(record, replay.ForfeitRecord):
        text = f"seat {record.seat} forfeits: {record.cause} ({record.detail})"
        return {"kind": "forfeit", "step": record.step, "seat": record.seat, "text": text}
    if isinstance(record, replay.ResultRecord):
        return {"kind": "result", "text": record.reason}
    raise AssertionError(f"no log entry for {type(record).__name__}")


class _Clocks:
    """Each seat's time used so far and its time bank left, as the match counted them: a
    decision draws on the bank only for what it took over the per-decision time."""

    def __init__(self, settings: MatchSettings, num_seats: int) -> None:
        self.decision_ms = settings.decision_ms
        self.used = [0.0] * num_seats
        self.bank = [float(settings.time_bank_ms)] * num_seats

    def spend(self, seat: int, time_ms: float) -> None:
        self.used[seat] += time_ms
        self.bank[seat] = max(0.0, self.bank[seat] - max(0.0, time_ms - self.decision_ms))

    def now(self) -> list[Json]:
        return [
            {"used_ms": round(used, 1), "bank_ms": round(bank)}
            for used, bank in zip(self.used, self.bank, strict=True)
        ]
