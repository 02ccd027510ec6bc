"""`arena replay show`: a seat's own draw is one line in its view (and the referee's), not a
private "seat 0 draws 5h" and then the public "seat 0 draws a card"; the public view keeps
every public line, and a seat's view drops none it does not repeat."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from referee.replays import walk

ARENA = (sys.executable, "-m", "tournaments.cli.arena_app")


def shown(path: Path, viewer: str) -> list[dict[str, Any]]:
    """The steps `arena replay show --json` prints for the viewer, through the real command."""
    done = subprocess.run(
        [*ARENA, "replay", "show", str(path), "--as", viewer, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    steps: list[dict[str, Any]] = json.loads(done.stdout)["steps"]
    return steps


def events(steps: list[dict[str, Any]], public: bool) -> list[dict[str, Any]]:
    return [s for s in steps if s["kind"] == "event" and (s["audience"] is None) == public]


@pytest.mark.timeout(300)
def test_a_seats_own_draw_is_one_line(replays: dict[str, Path]) -> None:
    path = replays["opposing-force"]
    seat, referee = (shown(path, viewer) for viewer in ("0", "referee"))
    for steps in (seat, referee):
        assert "seat 0 draws a card" not in [s["text"].split(None, 1)[1] for s in steps]
    public = [s["text"] for s in shown(path, "public")]
    mine = [s["text"] for s in seat if " seat 0 draws " in s["text"]]
    assert len(mine) == sum(t.endswith("seat 0 draws a card") for t in public) > 5
    assert any(s["text"].endswith("seat 1 draws a card") for s in seat), "not seat 0's to read"


def test_without_the_echo_guard_a_draw_is_two_lines(
    replays: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: with public echoes kept, seat 0 reads each of its draws twice."""
    monkeypatch.setattr(walk, "_public_echoes", lambda records, viewer: set())
    lines = [
        s.text.split(None, 1)[1] for s in walk.view(replays["opposing-force"], "0", None).steps
    ]
    assert "seat 0 draws a card" in lines


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", ["capture-the-commander", "officers-battle", "orc-pit-fighting"])
def test_a_seat_loses_no_public_line_it_does_not_read_privately(
    replays: dict[str, Path], case: str
) -> None:
    """Every public line left out of seat 0's view is at a step where seat 0 reads a private
    event; the public view itself keeps all."""
    path = replays[case]
    public = events(shown(path, "public"), public=True)
    seat = shown(path, "0")
    kept = Counter(s["text"] for s in events(seat, public=True))
    private_steps = {s["step"] for s in events(seat, public=False)}
    for line in public:
        if kept[line["text"]]:
            kept[line["text"]] -= 1
        else:
            assert line["step"] in private_steps, line["text"]
