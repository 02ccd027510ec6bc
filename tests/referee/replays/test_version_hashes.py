"""Each seat's uploaded files' hash in a replay's header: `arena replay verify` takes a replay
with it and one written before it was recorded (no such field), and refuses a header whose
hash is not a SHA-256 (the control: the field is read, not skipped); `arena replay show` prints
it; a seat's own file carries its own seat's hash and none of the others' (the control: the
referee's file holds both)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.replays.seat_file import seat_text
from tests.referee.replays.viewer.match_replays import play
from tests.tournaments.web.harness import arena

pytestmark = pytest.mark.timeout(120)
MINE, THEIRS = "a" * 64, "b" * 64


def with_header(source: Path, target: Path, change: dict[int, str | None]) -> Path:
    """A copy of the replay whose header's seats carry these hashes (None: no field at all,
    as a replay written before the field was)."""
    lines = source.read_text().splitlines()
    header = json.loads(lines[0])
    for seat in header["seats"]:
        digest = change.get(seat["seat"])
        if digest is None:
            seat.pop("content_hash", None)
        else:
            seat["content_hash"] = digest
    target.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return target


def test_replays_with_and_without_hashes_verify_and_a_bad_hash_is_refused(
    tmp_path: Path,
) -> None:
    played = play("opposing-force", ["example:opposing-force", "example:random"], tmp_path)
    header = json.loads(played.read_text().splitlines()[0])
    assert [s["content_hash"] for s in header["seats"]] == ["", ""]  # no upload: nothing known
    old = with_header(played, tmp_path / "old.jsonl", {0: None, 1: None})
    assert "content_hash" not in old.read_text().splitlines()[0]
    hashed = with_header(played, tmp_path / "hashed.jsonl", {0: MINE, 1: THEIRS})
    for path in (old, hashed):
        checked = arena("replay", "verify", path)
        assert checked.returncode == 0, checked.stderr
    bad = with_header(played, tmp_path / "bad.jsonl", {0: "../../etc/passwd", 1: THEIRS})
    refused = arena("replay", "verify", bad)
    assert refused.returncode != 0 and "content_hash" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr

    shown = arena("replay", "show", hashed, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["content_hashes"] == [MINE, THEIRS]
    text = arena("replay", "show", hashed).stdout
    assert f"uploaded files: seat 0: {MINE}, seat 1: {THEIRS}" in text
    assert "uploaded files" not in arena("replay", "show", old).stdout
    assert json.loads(arena("replay", "show", old, "--json").stdout)["content_hashes"] == ["", ""]


def test_a_seat_file_names_its_own_seats_files_and_not_the_others(tmp_path: Path) -> None:
    played = play("opposing-force", ["example:opposing-force", "example:random"], tmp_path)
    hashed = with_header(played, tmp_path / "hashed.jsonl", {0: MINE, 1: THEIRS})
    for seat, own, other in ((0, MINE, THEIRS), (1, THEIRS, MINE)):
        text = seat_text(hashed, seat)
        assert json.loads(text.splitlines()[0])["content_hash"] == own
        assert other not in text
    assert MINE in hashed.read_text() and THEIRS in hashed.read_text()  # the referee's: both
    old = with_header(played, tmp_path / "old.jsonl", {0: None, 1: None})
    assert json.loads(seat_text(old, 0).splitlines()[0])["content_hash"] == ""
