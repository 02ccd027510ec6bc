"""A page exported for a seat or for the public holds nothing that viewpoint may not see.

The oracle re-simulates each replay on its own: after each decision (with the chance steps
that follow it), a viewpoint has seen every card in its observation so far, in the events
sent to it and in its own decisions. Every card label in a frame's data must be among those,
and a card the viewpoint never saw appears nowhere in the file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from arena_games import cards, get_game
from arena_games import replay_file as replay
from google.protobuf import json_format

from referee.replays.viewer import model, page
from tests.referee.replays.viewer.match_replays import CASES

LABEL = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][cdhs])(?![A-Za-z0-9])")
ALL_LABELS = {cards.label(card) for card in cards.DECK}
SUITS = ["SUIT_CLUBS", "SUIT_DIAMONDS", "SUIT_HEARTS", "SUIT_SPADES"]


def embedded_model(html: str) -> dict[str, Any]:
    found = re.search(r'<script id="arena-model" type="application/json">(.*?)</script>', html)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def _card_labels(value: object) -> set[str]:
    """Every card in a protobuf JSON dict ({"rank": 12, "suit": "SUIT_HEARTS"})."""
    if isinstance(value, list):
        return set().union(*(_card_labels(item) for item in value)) if value else set()
    if not isinstance(value, dict):
        return set()
    if set(value) == {"rank", "suit"}:
        return {cards.label(cards.make(int(value["rank"]), SUITS.index(value["suit"])))}
    return set().union(*(_card_labels(item) for item in value.values())) if value else set()


def seen_after_each_frame(path: Path, viewer: str) -> list[set[str]]:
    """What the viewer has seen by the end of each frame (a decision and what followed it)."""
    records = replay.read(path)
    header = records[0]
    assert isinstance(header, replay.Header)
    state = get_game(header.game).new_state(header.options, len(header.seats))
    seat = None if viewer == "public" else int(viewer)
    seen: set[str] = set()
    frames: list[set[str]] = []

    def close_frame() -> None:
        observed = json_format.MessageToDict(state.observation(seat))
        seen.update(_card_labels(observed))
        frames.append(set(seen))

    for record in records[1:]:
        if isinstance(record, replay.DecisionRecord):
            close_frame()
            state.apply(record.seat, record.action)
            if record.seat == seat:
                seen.update(LABEL.findall(record.label))
        elif isinstance(record, replay.ChanceRecord):
            state.apply_chance(record.outcome)
        elif isinstance(record, replay.EventRecord) and (
            record.audience is None or (seat is not None and seat in record.audience)
        ):
            seen.update(_card_labels(record.event) | set(LABEL.findall(record.text)))
    close_frame()
    return frames


def _viewers(path: Path) -> list[str]:
    header = replay.read(path)[0]
    assert isinstance(header, replay.Header)
    return [*(str(seat) for seat in range(len(header.seats))), "public"]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_page_holds_only_the_cards_its_viewpoint_has_seen(
    case: str, replays: dict[str, Path], tmp_path: Path
) -> None:
    path = replays[case]
    referee_data = embedded_model(page.render(model.load(path, "referee")))
    for viewer in _viewers(path):
        out = tmp_path / f"{viewer}.html"
        out.write_text(page.render(model.load(path, viewer)), encoding="utf-8")
        html = out.read_text(encoding="utf-8")
        data = embedded_model(html)
        seen = seen_after_each_frame(path, viewer)
        assert len(data["frames"]) == len(seen)
        # Cards are in the page as labels only: no other form of a card to search for.
        assert not _card_labels(data)
        for number, (frame, known) in enumerate(zip(data["frames"], seen, strict=True)):
            shown = set(LABEL.findall(json.dumps(frame)))
            assert shown <= known, f"{case} as {viewer}, frame {number}: {shown - known}"
        never = ALL_LABELS - seen[-1]
        leaked = sorted(c for c in never if re.search(rf"(?<![A-Za-z0-9]){c}(?![A-Za-z0-9])", html))
        assert not leaked, f"{case} as {viewer}: never seen, yet in the file: {leaked}"
        # The check has teeth: the referee's page, holding every viewpoint, shows cards that
        # this one had not seen by then.
        assert any(
            set(LABEL.findall(json.dumps(frame))) - known
            for frame, known in zip(referee_data["frames"], seen, strict=True)
        ), (case, viewer)


@pytest.mark.parametrize("case", ["capture-the-commander", "opposing-force"])
def test_a_seat_page_holds_its_own_view_and_decisions_only(
    case: str, replays: dict[str, Path]
) -> None:
    data = model.load(replays[case], "1")
    assert data["viewpoints"] == ["1"]
    for frame in data["frames"]:
        assert set(frame["views"]) == {"1"}
        assert "truth" not in frame
        for entry in frame["log"]:
            assert entry["kind"] != "chance"
            if entry["kind"] == "decision":
                assert ("label" in entry) == (entry["seat"] == 1)
            if entry["kind"] == "event":
                assert entry["audience"] is None or 1 in entry["audience"]


def test_the_referee_page_holds_every_viewpoint_and_the_face_down_cards(
    replays: dict[str, Path],
) -> None:
    data = model.load(replays["capture-the-commander"], "referee")
    assert data["viewpoints"] == ["referee", "0", "1", "public"]
    first = data["frames"][0]
    assert set(first["views"]) == {"0", "1", "public"}
    # Nobody at the table knows a card of the formations after the deal; the referee does.
    for view in first["views"].values():
        assert not LABEL.findall(json.dumps(view["formations"]))
    assert all(len(cards_) == 13 and all(cards_) for cards_ in first["truth"]["formations"])
