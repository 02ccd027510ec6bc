"""`arena ladder discard` on matches a real serve played: the match and its deal's other seating
leave the ratings (every rating computed again, in the order first made, without them: the
test computes the same from the SQLite file, and first shows its computation matches the
ladder's before the discard, the control), the public API marks them discarded over HTTP, and
--replay has the running serve play the deal again with no restart. Logged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tournaments.ladder.contest_kit import audit, call, said, sql
from tests.tournaments.web.harness import arena
from tests.tournaments.web.ladder_harness import finished, make_ladder, serving
from tournaments.ladder.database import MU, SIGMA
from tournaments.ladder.matchmaker import rate

pytestmark = pytest.mark.timeout(240)


def ratings_without(folder: Path, left_out: set[str]) -> dict[str, tuple[float, float]]:
    """Each version's (mu, sigma) from its rated matches in their order, but those left out."""
    ratings: dict[str, tuple[float, float]] = {}
    rows = sql(
        folder, "SELECT match_id, bots, ranks FROM matches WHERE rated IS NOT NULL ORDER BY rated"
    )
    for match_id, bots, ranks in rows:
        if match_id in left_out:
            continue
        keys = json.loads(bots)
        after = rate([ratings.get(k, (MU, SIGMA)) for k in keys], tuple(json.loads(ranks)))
        ratings.update(zip(keys, after, strict=True))
    return ratings


def stored(folder: Path) -> dict[str, tuple[float, float]]:
    rows = sql(folder, "SELECT key, mu, sigma FROM versions WHERE matches > 0")
    return {str(k): (float(mu), float(s)) for k, mu, s in rows}


def close(a: dict[str, tuple[float, float]], b: dict[str, tuple[float, float]]) -> bool:
    return a.keys() == b.keys() and all(
        abs(a[k][0] - b[k][0]) < 1e-9 and abs(a[k][1] - b[k][1]) < 1e-9 for k in a
    )


def test_a_discarded_deal_leaves_the_ratings_and_its_replay_is_played(tmp_path: Path) -> None:
    make_ladder(
        tmp_path,
        {
            "house-first": "example:first",
            "house-random": "example:random",
            "spare": "example:random",
        },
    )
    with serving(tmp_path) as served:
        served.wait_for("rated matches", lambda: finished(tmp_path) >= 6)
    # The control: the test's computation is the ladder's, before any discard.
    assert close(ratings_without(tmp_path, set()), stored(tmp_path))
    target, deal = sql(tmp_path, "SELECT match_id, deal FROM matches WHERE rated = 1")[0]
    seatings = {m for (m,) in sql(tmp_path, "SELECT match_id FROM matches WHERE deal = ?", deal)}
    assert len(seatings) == 2  # two seats: the deal once per seating
    before = stored(tmp_path)
    done = arena("ladder", "discard", tmp_path, target, "--why", "a bot read the deal")
    assert done.returncode == 0, done.stderr
    after = stored(tmp_path)
    assert close(after, ratings_without(tmp_path, seatings)) and not close(after, before)
    assert sql(tmp_path, "SELECT DISTINCT status FROM matches WHERE deal = ?", deal) == [
        ("discarded",)
    ]
    again = arena("ladder", "discard", tmp_path, target, "--why", "twice")
    assert again.returncode != 0 and "never counted" in again.stderr  # one line, no trace
    assert "Traceback" not in again.stderr

    other, other_deal = sql(tmp_path, "SELECT match_id, deal FROM matches WHERE rated = 1")[0]
    (tmp_path / "serve.out").unlink()  # the harness reads the page's address from it
    with serving(tmp_path) as served:
        status, rows = call(f"{served.url}/api/matches?limit=1000")
        shown = {r["match_id"]: r for r in rows}
        assert shown[target]["held"] == "discarded by the operator: it no longer counts"
        assert shown[target]["viewer"] is None and shown[target]["seats"][0]["rank"] is None
        status, body = call(f"{served.url}/api/matches/{target}/replay")
        assert status == 409 and "discarded by the operator" in body["error"], body
        replayed = arena("ladder", "discard", tmp_path, other, "--why", "a crash", "--replay")
        assert replayed.returncode == 0, replayed.stderr
        new = replayed.stdout.split("its deal again: ")[1].split()[0].rstrip(",")
        assert new.startswith(other.split("~")[0] + "~")
        served.wait_for(  # by the serve that was running: no restart
            "the deal played again",
            lambda: (
                sql(tmp_path, "SELECT status FROM matches WHERE match_id = ?", new)
                == [("finished",)]
            ),
        )
    assert sql(tmp_path, "SELECT deal FROM matches WHERE match_id = ?", new) == [(other_deal,)]
    assert [s for s in said(audit(tmp_path)) if s[1].startswith("match")] == [
        ("operator", "match discarded", target, "a bot read the deal"),
        ("operator", "match discarded", other, "a crash"),
        ("operator", "match replayed", other, "a crash"),
    ]
