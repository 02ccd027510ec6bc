"""Through a real `arena ladder serve`, real uploads over HTTP and real validation games in
bubblewrap: a version whose first decision of each match sleeps past decision_ms, but within
the time bank, goes live with a warning in its status (the control: one whose first decision
spends the whole bank fails with a timeout); then its rated match's replay records the hash of
its files, in the referee's file and in the replay its author downloads, and in
/api/me/matches (the control: the house bot's seat, not an upload, records none)."""

from __future__ import annotations

import functools
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from arena_games import replay_file as replay

from tests.tournaments.ladder.test_vetting import author, settled, uploads_ladder
from tests.tournaments.ladder.upload_kit import packed, python_bot, upload, version_rows
from tests.tournaments.web.harness import arena
from tests.tournaments.web.ladder_harness import serving
from tests.tournaments.web.test_author_private import ask

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="uploads build and run in bwrap"),
]
DECISION_MS, BANK_MS = 400, 3000


def first_decision_sleeps(seconds: float) -> str:
    return f"""import random
import time
from arena_sdk.bot import Bot


class FirstSlow(Bot):
    name = "first-slow"

    def on_match_start(self, match):
        self.first = True

    def act(self, observation, legal_actions):
        if self.first:
            self.first = False
            time.sleep({seconds})
        return random.randrange(len(legal_actions))
"""


def hash_of(folder: Path, key: str) -> str:
    with sqlite3.connect(f"file:{folder / 'ladder.sqlite'}?mode=ro", uri=True) as db:
        row = db.execute("SELECT content_hash FROM versions WHERE key = ?", (key,)).fetchone()
    return str(row[0])


def open_match(url: str, token: str) -> dict[str, Any] | None:
    """A finished match of the author's whose deal has ended (its replay open to them)."""
    status, listed, _ = ask(url, "/api/me/matches?limit=1000", token)
    assert status == 200, listed
    return next((m for m in listed["matches"] if m["held"] is None), None)


def test_a_slow_decision_within_the_bank_goes_live_and_its_replays_name_its_files(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ladder"
    folder.mkdir()
    uploads_ladder(folder)
    path = folder / "ladder.toml"
    text = path.read_text().replace("bots_per_author = 1", "bots_per_author = 2")
    text = text.replace("decision_ms = 1000", f"decision_ms = {DECISION_MS}")
    path.write_text(text.replace("time_bank_ms = 5000", f"time_bank_ms = {BANK_MS}"))
    token = author(folder, "erin")
    slow_s, spent_s = 2.5 * DECISION_MS / 1000, (DECISION_MS + BANK_MS) / 1000 + 2.0
    with serving(folder) as served:
        for name, seconds in (("slowpoke", slow_s), ("spender", spent_s)):
            bot = python_bot(tmp_path / name, first_decision_sleeps(seconds))
            code, body = upload(served.url, token, name, packed(bot))
            assert code == 202, body
        for key in ("slowpoke@1", "spender@1"):
            served.wait_for(f"{key} settled", functools.partial(settled, folder, key))
        rows = version_rows(folder)
        status, reason = rows["slowpoke@1"]
        assert status == "live", reason
        assert "warning" in reason and "drew on the time bank" in reason, reason
        status, reason = rows["spender@1"]  # the control: its bank spent, it forfeits
        assert status == "failed" and "did not answer in time" in reason, reason

        served.wait_for("a match of slowpoke open to erin", lambda: open_match(served.url, token))
        match = open_match(served.url, token)
        assert match is not None
        digest = hash_of(folder, "slowpoke@1")
        assert len(digest) == 64
        assert match["files"] == [digest], match
        [seat] = match["mine"]
        code, _, downloaded = ask(served.url, f"/api/me/matches/{match['match_id']}/replay", token)
        assert code == 200
        seat_header = json.loads(downloaded.splitlines()[0])
        assert seat_header["seat"] == seat and seat_header["content_hash"] == digest
    played = folder / "replays" / f"{match['match_id']}.jsonl"
    header = replay.read(played)[0]
    assert isinstance(header, replay.Header)
    hashes = {s.name: s.content_hash for s in header.seats}
    assert hashes == {"slowpoke@1": digest, "house-random@1": ""}, hashes
    checked = arena("replay", "verify", played)
    assert checked.returncode == 0, checked.stderr
    assert f"seat {seat}: {digest}" in arena("replay", "show", played).stdout
