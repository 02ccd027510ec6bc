"""The standings say how many decisions the referee played for each bot under the random
misbehaviour policy, counted from the matches as they finish (the replays agree), and a
tournament written before the count was kept is upgraded in place when opened."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections import Counter
from pathlib import Path

from arena_games import replay_file

from tests.tournaments.web.harness import BOTS, arena

CONFIG = f"""
name = "subs"
game = "opposing-force"
[[bots]]
spec = "example:random"
[[bots]]
name = "clumsy"
spec = "cmd:{sys.executable} {BOTS / "rawbot.py"} illegal"
[format]
kind = "round-robin"
games_per_pairing = 2
[policies]
illegal_action = "random"
max_strikes = 1000
"""


def standings(folder: Path) -> dict[str, dict[str, object]]:
    done = arena("tournament", "standings", folder, "--json")
    assert done.returncode == 0, done.stderr
    return {row["bot"]: row for row in json.loads(done.stdout)["standings"]}


def played_for(folder: Path) -> Counter[str]:
    """Decisions the replays say the referee played, by bot."""
    counts: Counter[str] = Counter()
    for path in (folder / "replays").glob("*.jsonl"):
        records = replay_file.read(path)
        header = records[0]
        assert isinstance(header, replay_file.Header)
        for record in records:
            if isinstance(record, replay_file.DecisionRecord) and record.substituted_for:
                counts[header.seats[record.seat].name] += 1
    return counts


def test_the_standings_count_the_decisions_played_for_a_bot(tmp_path: Path) -> None:
    config = tmp_path / "subs.toml"
    config.write_text(CONFIG)
    folder = tmp_path / "out"
    ran = arena("tournament", "run", config, "--out", folder, "--no-progress")
    assert ran.returncode == 0, ran.stderr
    rows = standings(folder)
    replays = played_for(folder)
    assert replays["clumsy"] > 0 and replays["random"] == 0
    assert {bot: row["substituted"] for bot, row in rows.items()} == {
        "clumsy": replays["clumsy"],
        "random": 0,
    }
    assert rows["clumsy"]["forfeits"] == 0  # played for, never forfeited
    table = arena("tournament", "standings", folder).stdout
    assert "substituted" in table

    # The same tournament as the previous schema wrote it: no column, version 2.
    database = folder / "tournament.sqlite"
    with sqlite3.connect(database) as db:
        db.execute("ALTER TABLE matches DROP COLUMN substituted")
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    rows = standings(folder)
    assert {row["substituted"] for row in rows.values()} == {0}  # not known for those matches
    with sqlite3.connect(database) as db:
        (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        columns = [row[1] for row in db.execute("PRAGMA table_info(matches)")]
    assert version == "4" and "substituted" in columns  # and on through every later step
