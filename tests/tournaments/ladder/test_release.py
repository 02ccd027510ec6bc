"""The ladder's pages after the freeze, over real HTTP from a real `arena ladder serve` that
keeps playing after it, as three visitors see them: the operator (the token as the header),
an author (their token, /api/me), and an anonymous visitor. `arena ladder release --to` moves
the ladder between hidden, participants and public while serve runs; each state is checked
against the matches the SQLite file holds on either side of the freeze."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tournaments.ladder.contest_kit import call, new_author, sql
from tests.tournaments.web.harness import arena
from tests.tournaments.web.ladder_harness import Served, make_ladder, serving

pytestmark = pytest.mark.timeout(240)


def frozen_at(folder: Path) -> str:
    return str(sql(folder, "SELECT value FROM meta WHERE key = 'freeze_at'")[0][0])


def after(folder: Path, cutoff: str) -> list[tuple[str, str]]:
    """(match id, seats JSON) of the matches finished after the freeze whose deals have
    ended in every seating (their replays may be shown)."""
    rows = sql(
        folder,
        "SELECT match_id, bots FROM matches m WHERE status = 'finished' AND finished_at > ? "
        "AND NOT EXISTS (SELECT 1 FROM matches o WHERE o.deal = m.deal "
        "AND o.status = 'scheduled')",
        cutoff,
    )
    return [(str(m), str(b)) for m, b in rows]


def listed(served: Served, token: str | None = None) -> dict[str, dict[str, Any]]:
    status, rows = call(f"{served.url}/api/matches?limit=1000", token)
    assert status == 200, rows
    return {row["match_id"]: row for row in rows}


def mine(served: Served, token: str) -> dict[str, dict[str, Any]]:
    status, body = call(f"{served.url}/api/me/matches?limit=1000", token)
    assert status == 200, body
    return {row["match_id"]: row for row in body["matches"]}


def release(folder: Path, to: str) -> None:
    done = arena("ladder", "release", folder, "--to", to, "--why", f"now {to}")
    assert done.returncode == 0, done.stderr


def test_hidden_participants_public_for_the_operator_an_author_and_a_visitor(
    tmp_path: Path,
) -> None:
    tokens = make_ladder(tmp_path, {"house-first": "example:first"}, concurrency=2)
    operator = tokens["operator"]
    alice, bob = new_author(tmp_path, "alice"), new_author(tmp_path, "bob")
    for author in ("alice", "bob"):
        spec = ("--spec", "example:random", "--author", author)
        added = arena("ladder", "add", tmp_path, "--name", f"{author}-r", *spec)
        assert added.returncode == 0, added.stderr
    release(tmp_path, "hidden")  # before the freeze it changes nothing: all is public
    with serving(tmp_path) as served:
        served.wait_for("matches before the freeze", lambda: len(listed(served)) >= 6)
        before = set(listed(served))
        assert arena("ladder", "freeze", tmp_path, "--why", "deadline").returncode == 0
        cutoff = frozen_at(tmp_path)
        served.wait_for(
            "ended matches of alice's and of others' after the freeze",
            lambda: (
                any("alice-r" in b for _, b in after(tmp_path, cutoff))
                and any("alice-r" not in b for _, b in after(tmp_path, cutoff))
            ),
        )
        later = after(tmp_path, cutoff)
        hers = {m for m, b in later if "alice-r" in b}
        others = {m for m, b in later if "alice-r" not in b}
        pinned = dict(sql(tmp_path, "SELECT version, mu FROM frozen"))

        state = call(f"{served.url}/api/ladder")[1]
        assert (state["frozen_at"], state["release"]) == (cutoff, "hidden")
        # hidden: the visitor and alice see nothing after the freeze; the operator all.
        seen = listed(served)
        assert not (hers | others) & set(seen), "a match after the freeze was shown"
        assert all(row["finished_at"] <= cutoff for row in seen.values())
        assert before <= set(seen)
        assert (hers | others) <= set(listed(served, operator))  # the control
        board = {r["version"]: r["mu"] for r in call(f"{served.url}/api/leaderboard")[1]}
        assert board == {k: v for k, v in pinned.items() if k in board} and board
        now = {r["version"]: r["mu"] for r in call(f"{served.url}/api/leaderboard", operator)[1]}
        assert now != board  # the control: ratings moved after the freeze
        one = sorted(hers)[0]
        status, body = call(f"{served.url}/api/matches/{one}/replay")
        assert status == 409 and "not released" in body["error"], body
        assert call(f"{served.url}/api/matches/{one}/replay", operator)[0] == 200
        assert not hers & set(mine(served, alice))
        assert call(f"{served.url}/api/me/matches/{one}/view", alice)[0] == 409
        assert call(f"{served.url}/api/audit", alice)[0] == 401  # an author is no operator
        html = call(f"{served.url}/")[1]  # the HTML page follows the same rule (not JSON)
        assert isinstance(html, str) and one not in html

        # participants: alice sees her own matches since, nothing of others'; the visitor
        # still nothing.
        release(tmp_path, "participants")
        assert hers <= set(mine(served, alice))
        assert not others & set(mine(served, alice))
        assert call(f"{served.url}/api/me/matches/{one}/view", alice)[0] == 200
        assert all("bob-r" in b for m, b in later if m in mine(served, bob))
        assert not (hers | others) & set(listed(served))
        assert call(f"{served.url}/api/matches/{one}/replay")[0] == 409

        # public: everyone sees all, as before the freeze.
        release(tmp_path, "public")
        assert (hers | others) <= set(listed(served))
        assert call(f"{served.url}/api/matches/{one}/replay")[0] == 200
        board = {r["version"]: r["mu"] for r in call(f"{served.url}/api/leaderboard")[1]}
        assert board != {k: v for k, v in pinned.items() if k in board}
