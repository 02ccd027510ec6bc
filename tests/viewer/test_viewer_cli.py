"""The viewer's commands as a user runs them: `arena replay html`, `arena replay show
--boards`, and a clear one-line error for bad input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee.viewer import model
from tests.referee.test_replay_and_cli import arena


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
