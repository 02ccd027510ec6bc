"""A seat's replay file holds only what that seat knew: the viewer's oracle (each seat has seen
the cards of its observations, of the events sent to it and of its own decisions, frame by
frame) held against every frame of the file, and no card the seat never saw anywhere in it; no
deal key, salt or SPEC. The control: the referee's file, unfiltered, holds cards the seat
never saw, and its deal key, from which every card follows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from arena_games import replay_file as replay

from referee.replays.seat_file import seat_records, seat_text
from tests.referee.replays.viewer.match_replays import CASES
from tests.referee.replays.viewer.test_page_secrecy import (
    ALL_LABELS,
    LABEL,
    _card_labels,
    seen_after_each_frame,
)

pytestmark = pytest.mark.timeout(300)


def labels(text: str) -> set[str]:
    """Every card in a piece of the file: as a label, or as the wire's {"rank", "suit"}."""
    found = set(LABEL.findall(text))
    for line in text.splitlines():
        found |= _card_labels(json.loads(line))
    return found


def never_seen_in(text: str, never: set[str]) -> list[str]:
    return sorted(c for c in never if re.search(rf"(?<![A-Za-z0-9]){c}(?![A-Za-z0-9])", text))


def holds_only_what_was_seen(path: Path, seat: int, text: str) -> list[set[str]]:
    """Assert that each frame of the seat's file holds only cards the seat had seen by then;
    what it had seen after each frame."""
    seen = seen_after_each_frame(path, str(seat))
    # One frame of the file per frame of the oracle, each closed by its observation.
    frames: list[list[str]] = [[]]
    for line in text.splitlines()[1:]:
        frames[-1].append(line)
        if json.loads(line)["type"] == "observation":
            frames.append([])
    assert len(frames) - 1 == len(seen), path
    for number, (lines, known) in enumerate(zip(frames, seen, strict=False)):
        shown = labels("\n".join(lines))
        assert shown <= known, f"{path} seat {seat}, frame {number}: {shown - known}"
    return seen


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_seat_file_holds_only_the_cards_its_seat_has_seen(
    case: str, replays: dict[str, Path]
) -> None:
    path = replays[case]
    raw = path.read_text()
    header = replay.read(path)[0]
    assert isinstance(header, replay.Header)
    raw_leaks = []
    for seat in range(len(header.seats)):
        text = seat_text(path, seat)
        seen = holds_only_what_was_seen(path, seat, text)
        never = ALL_LABELS - seen[-1]
        assert not never_seen_in(text, never), (case, seat)
        assert header.deal_key not in text and header.deal_salt not in text
        assert '"spec"' not in text and '"chance"' not in text and "queued_ms" not in text
        # The control: the unfiltered file holds the key that deals every card, and cards
        # some seat never saw.
        assert header.deal_key in raw
        raw_leaks += never_seen_in(raw, never)
    assert raw_leaks, case


def test_a_seat_file_has_its_own_choices_and_only_the_times_of_the_others(
    replays: dict[str, Path],
) -> None:
    path = replays["opposing-force"]
    everything = replay.read(path)
    mine = [r for r in everything if isinstance(r, replay.DecisionRecord) and r.seat == 1]
    theirs = [r for r in everything if isinstance(r, replay.DecisionRecord) and r.seat == 0]
    records = [r.model_dump() for r in seat_records(path, 1)]
    assert records[0]["type"] == "seat_header" and records[0]["seat"] == 1
    decisions = [r for r in records if r["type"] == "decision"]
    assert [(d["step"], d["label"]) for d in decisions if d["seat"] == 1] == [
        (r.step, r.label) for r in mine
    ]
    others = [d for d in decisions if d["seat"] == 0]
    assert len(others) == len(theirs) > 0
    assert all(set(d) == {"type", "step", "seat", "time_ms"} for d in others)
    assert records[-1]["type"] == "result"
    with pytest.raises(ValueError, match="has seats 0 to 1"):
        seat_records(path, 2)
