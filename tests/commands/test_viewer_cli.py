"""The viewer's commands as a user runs them: `arena replay html`, `arena replay show
--boards` (as text and as --json), and a clear one-line error for bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from referee.replays.viewer import model
from tests.commands.test_replay_and_cli import arena


def test_replay_html_writes_one_self_contained_page(
    replays: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "page.html"
    path = replays["orc-pit-fighting"]
    result = arena("replay", "html", str(path), "--as", "0", "-o", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    html = out.read_text(encoding="utf-8")
    assert '<script id="arena-model" type="application/json">' in html
    assert 'A.games["orc-pit-fighting"]' in html  # the game's renderer is inlined
    assert 'A.games["opposing-force"]' not in html  # and no other game's
    # Nothing to fetch: no external script, style sheet, image or font.
    assert not re.search(r"<(script|img|link)[^>]*\b(src|href)=", html)
    assert "url(" not in html and "@import" not in html


def test_replay_show_boards_prints_the_table_after_every_decision(
    replays: dict[str, Path], tmp_path: Path
) -> None:
    path = replays["opposing-force"]
    result = arena("replay", "show", str(path), "--as", "public", "--boards", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    frames = len(model.load(path, "public")["frames"])
    assert result.stdout.count("Opposing Force  deck") == frames
    assert "holds:" not in result.stdout  # the public sees no hand


def test_replay_show_boards_as_json_holds_the_table_of_every_frame(
    replays: dict[str, Path], tmp_path: Path
) -> None:
    path = replays["opposing-force"]
    shown = arena("replay", "show", str(path), "--as", "1", "--boards", "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    text = arena("replay", "show", str(path), "--as", "1", "--boards", cwd=tmp_path).stdout
    boards = document["boards"]
    assert len(boards) == len(model.load(path, "1")["frames"])
    assert all(b.startswith("Opposing Force  deck") and "seat 1 holds:" in b for b in boards)
    assert boards[-1] == document["table"] and boards[0] != boards[-1]
    # The text is the document's lines: each frame's steps (the last's, then the result), then
    # its table.
    result = document["result"]
    ending = f"result: ranks {result['ranks']}, scores {result['scores']} - {result['reason']}"
    for number, board in enumerate(boards):
        lines = [s["text"] for s in document["steps"] if s["frame"] == number]
        lines += [ending] if number == len(boards) - 1 else []
        assert "\n".join([*lines, "", board, ""]) in text
    unboarded = arena("replay", "show", str(path), "--as", "1", "--json", cwd=tmp_path)
    assert json.loads(unboarded.stdout)["boards"] is None


def test_a_seat_sees_who_decided_and_when_but_not_what_others_chose(
    replays: dict[str, Path], tmp_path: Path
) -> None:
    path = replays["opposing-force"]
    shown = arena("replay", "show", str(path), "--as", "1", "--json", cwd=tmp_path)
    decisions = [s for s in json.loads(shown.stdout)["steps"] if s["kind"] == "decision"]
    mine = [s for s in decisions if s["seat"] == 1]
    others = [s for s in decisions if s["seat"] == 0]
    assert mine and others
    assert all(s["label"] and s["action"] is not None and " chooses " in s["text"] for s in mine)
    assert all(s["label"] is None and s["action"] is None for s in others)
    assert all(s["time_ms"] is not None and " decides in " in s["text"] for s in others)
    text = arena("replay", "show", str(path), "--as", "1", cwd=tmp_path).stdout
    assert [s["text"] for s in decisions] == [
        line for line in text.splitlines() if " decides in " in line or " chooses " in line
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["replay", "html", "missing.jsonl", "-o", "x.html"], "cannot read"),
        (["replay", "html", "REPLAY", "--as", "9", "-o", "x.html"], "--as takes referee"),
        (["replay", "html", "REPLAY", "-o", "no/such/folder/x.html"], "cannot write"),
        (["replay", "step", "REPLAY", "--as", "north"], "--as takes referee"),
        (["replay", "step", "empty.jsonl"], "line 1 is not a replay header"),
    ],
)
def test_bad_input_is_a_clear_error(
    replays: dict[str, Path], tmp_path: Path, args: list[str], message: str
) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    args = [str(replays["opposing-force"]) if a == "REPLAY" else a for a in args]
    result = arena(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2  # one message (wrapped at most once)


@pytest.mark.parametrize("viewer", ["referee", "0", "public"])
def test_replay_show_of_orc_pit_fighting_shows_the_flair_and_pit_cards(
    replays: dict[str, Path], tmp_path: Path, viewer: str
) -> None:
    """Each board names the cards of both Flair piles (none in this match: the engine's tests,
    tests/games/orc_pit_fighting/test_text_board.py, play some) and of the Pit, and the hands
    only of the viewpoint."""
    path = replays["orc-pit-fighting"]
    result = arena("replay", "show", str(path), "--as", viewer, "--boards", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    flair = re.findall(r"flair (\d+): ([^\n]*?)  out:", result.stdout)
    assert flair and all(len(shown.split()) == int(size) or shown == "-" for size, shown in flair)
    assert re.search(r"pit seat \d \(\w+\): (\w\w|##)", result.stdout), "no Pit cards shown"
    holds = set(re.findall(r"seat (\d) holds:", result.stdout))
    assert holds == {"referee": {"0", "1"}, "0": {"0"}, "public": set()}[viewer]
