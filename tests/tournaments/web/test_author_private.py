"""What an author sees, and only they: a real `arena ladder serve` where alice's bot prints its
hand to stderr at each decision and bob's holds the deal's second seating at its first decision,
asked over real HTTP (and with `arena author ...`) by alice, bob and carol (an author with no
bot in the match). While the deal is in play, every author route of the match is a 409 and no
answer to anyone (bob's routes, the public's) holds a line of alice's output; once it has
ended, alice reads her bot's output (the control: the probe would have found it), bob reads
only his own, and bob's replay cut to his seat holds none of the cards his seat never saw,
while the referee's file does (the control). Carol, asking for the same match, gets the 404 a
match that does not exist gets (beside the control where its players get 200); no token, a
wrong one, one in the query string or in a cookie: 401, counted as failed token checks."""

from __future__ import annotations

import http.client
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from arena_games import replay_file as replay

from tests.referee.replays.test_seat_file import holds_only_what_was_seen
from tests.referee.replays.viewer.test_page_secrecy import ALL_LABELS, seen_after_each_frame
from tests.tournaments.web.harness import BOTS, arena
from tests.tournaments.web.ladder_harness import count, finished, make_ladder, serving
from tests.tournaments.web.test_guards import bearer, request
from tests.tournaments.web.test_ladder_output_private import CHATTY, MARKER, probe
from tournaments.read_models.ladder_reads import HELD_DEAL

ROUTES = ("replay", "view", "page", "log")


def author(folder: Path, name: str) -> str:
    made = arena("ladder", "author", "add", folder, "--name", name)
    assert made.returncode == 0, made.stderr
    return made.stdout.splitlines()[1].strip()


def where_of(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def ask(url: str, path: str, token: str | None, **headers: str) -> tuple[int, Any, str]:
    """(status, the JSON body (or {"text": body} when not JSON), the body) of a GET with the
    token as Bearer; 429s (the per-address request limit) waited out."""
    sent = {**(bearer(token) if token else {}), **headers}
    while True:
        connection = http.client.HTTPConnection(*where_of(url), timeout=30)
        try:
            connection.request("GET", path, headers=sent)
            answer = connection.getresponse()
            text = answer.read().decode()
            kind = answer.getheader("content-type", "")
        finally:
            connection.close()
        if answer.status != 429 or "failed token" in text:
            break
        time.sleep(0.25)
    if answer.status == 200:
        assert answer.getheader("cache-control") == "no-store", path
    body = json.loads(text) if kind == "application/json" else {"text": text}
    return answer.status, body, text


def seat_of(url: str, token: str, match_id: str) -> int:
    _, listed, _ = ask(url, "/api/me/matches?limit=1000", token)
    found = next(m for m in listed["matches"] if m["match_id"] == match_id)
    [mine] = found["mine"]
    return int(mine)


def quiet(folder: Path) -> bool:
    return count(folder, "SELECT COUNT(*) FROM matches WHERE status = 'scheduled'") == 0


def never_seen_in(text: str, never: set[str]) -> list[str]:
    return sorted(c for c in never if re.search(rf"(?<![A-Za-z0-9]){c}(?![A-Za-z0-9])", text))


@pytest.mark.timeout(300)
def test_an_author_reads_their_own_matches_and_nothing_of_anyone_elses(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    folder = tmp_path / "ladder"
    gated = f"cmd:{sys.executable} {BOTS / 'gated_bot.py'} {gate} t0-g1"
    make_ladder(folder, {}, concurrency=1, decision_ms=120000, tier="none")
    alice, bob, carol = (author(folder, name) for name in ("alice", "bob", "carol"))
    for name, spec, who in (("chatty", str(CHATTY), "alice"), ("gated", gated, "bob")):
        added = arena("ladder", "add", folder, "--name", name, "--spec", spec, "--author", who)
        assert added.returncode == 0, added.stderr
    with serving(folder) as served:
        url = served.url
        try:
            served.wait_for("t0-g0 to end", lambda: finished(folder) >= 1)
            # t0-g1, the deal's other seating, is held at gated's first decision.
            written = next((folder / "logs").glob("t0-g0/*-chatty@1.log")).read_text()
            hands = re.findall(rf"{MARKER} t0-g0 hand: (.+)", written)
            assert hands
            secrets = [MARKER, *(h for h in hands if h.count(" ") >= 2), alice, bob]
            for token in (alice, bob):
                status, listed, _ = ask(url, "/api/me/matches", token)
                assert status == 200, listed
                [match] = listed["matches"]
                assert match["match_id"] == "t0-g0" and match["held"] == HELD_DEAL
                assert match["reason"] is None and all(s["rank"] is None for s in match["seats"])
                for route in ROUTES:
                    for match_id, why in (("t0-g0", HELD_DEAL), ("t0-g1", "still being played")):
                        path = f"/api/me/matches/{match_id}/{route}"
                        status, body, text = ask(url, path, token)
                        assert status == 409 and why in body["error"], (path, body)
                        assert not any(s in text for s in secrets)
                _, me, text = ask(url, "/api/me", token)
                assert me["record"] == [] and not any(s in text for s in secrets[:-2])
            probe(url, secrets)  # nor the public's pages and JSON
        finally:
            gate.touch()
        served.wait_for("t0-g1 to end", lambda: finished(folder) >= 2)
        for name in ("chatty", "gated"):  # the ladder holds still from here
            assert arena("ladder", "pause", folder, "--name", name).returncode == 0
        served.wait_for("the last match to end", lambda: quiet(folder))
        played = finished(folder)

        # The control: alice reads her bot's hand now; bob reads his bot's output only.
        status, mine, _ = ask(url, "/api/me/matches/t0-g0/log", alice)
        assert status == 200 and [s["version"] for s in mine["seats"]] == ["chatty@1"]
        assert all(f"{MARKER} t0-g0 hand: {hand}" in mine["seats"][0]["output"] for hand in hands)
        status, his, text = ask(url, "/api/me/matches/t0-g0/log", bob)
        assert status == 200 and [s["version"] for s in his["seats"]] == ["gated@1"]
        assert MARKER not in text

        # Bob's replay, cut to his seat: none of the cards his seat never saw; the referee's
        # file has them (and the deal's key).
        seat = seat_of(url, bob, "t0-g0")
        raw_path = next((folder / "replays").glob("t0-g0*.jsonl"))
        header = replay.read(raw_path)[0]
        assert isinstance(header, replay.Header)
        never = ALL_LABELS - seen_after_each_frame(raw_path, str(seat))[-1]
        status, _, cut = ask(url, "/api/me/matches/t0-g0/replay", bob)
        assert status == 200 and json.loads(cut.splitlines()[0])["seat"] == seat
        holds_only_what_was_seen(raw_path, seat, cut)
        assert not never_seen_in(cut, never) and header.deal_key not in cut
        assert header.deal_key in raw_path.read_text()
        if never:  # bob's seat may have seen every card by the end
            assert never_seen_in(raw_path.read_text(), never)
        # His view and page are his seat's; alice's seat is not his to ask for.
        status, view, _ = ask(url, "/api/me/matches/t0-g0/view", bob)
        assert status == 200 and view["viewpoints"] == [str(seat)]
        assert not never_seen_in(json.dumps(view), never)
        status, _, shown = ask(url, "/api/me/matches/t0-g0/page", bob)
        assert status == 200 and f"shown as seat {seat}" in shown
        for route in ("replay", "view", "page"):
            path = f"/api/me/matches/t0-g0/{route}?seat={1 - seat}"
            assert ask(url, path, bob)[0] == 404
            assert ask(url, path, alice)[0] == 200  # the control: hers

        # Carol, no bot in it: each route the 404 of a match that does not exist.
        for route in ROUTES:
            status, body, _ = ask(url, f"/api/me/matches/t0-g0/{route}", carol)
            _, nothing, _ = ask(url, f"/api/me/matches/t9-g9/{route}", carol)
            assert status == 404 and body["error"] == nothing["error"].replace("t9-g9", "t0-g0")
        _, listed, _ = ask(url, "/api/me/matches", carol)
        assert listed["total"] == 0
        _, me, _ = ask(url, "/api/me", alice)
        [row] = me["record"]
        assert (row["bot"], row["opponent"], row["opponent_author"]) == ("chatty", "gated", "bob")
        assert row["wins"] + row["draws"] + row["losses"] == played
        assert [(b["name"], [v["version"] for v in b["versions"]]) for b in me["bots"]] == [
            ("chatty", ["chatty@1"])
        ]

        # The token in a header only.
        for path in ("/api/me", "/api/me/matches/t0-g0/log"):
            assert ask(url, path, None)[0] == 401
            assert ask(url, f"{path}?token={alice}", None)[0] == 401
            assert ask(url, path, None, Cookie=f"token={alice}")[0] == 401
            assert ask(url, path, "not-" + alice)[0] == 401
        # The CLI, with the token from a file and from the environment.
        token_file = tmp_path / "alice.token"
        token_file.write_text(alice + "\n")
        said = arena("author", "log", url, "t0-g0", "--token-file", token_file)
        assert said.returncode == 0 and f"{MARKER} t0-g0 hand: {hands[0]}" in said.stdout
        os.environ["ARENA_AUTHOR_TOKEN"] = bob
        try:
            said = arena("author", "matches", url, "--json")
            assert said.returncode == 0 and json.loads(said.stdout)["total"] == played
            said = arena("author", "log", url, "t0-g0")
            assert said.returncode == 0 and MARKER not in said.stdout
            said = arena("author", "replay", url, "t0-g0")
            assert said.returncode == 0 and not never_seen_in(said.stdout, never)
            said = arena("author", "replay", url, "t0-g0", "--seat", str(1 - seat))
            assert said.returncode == 2 and said.stderr.startswith("error: 404: ")
        finally:
            del os.environ["ARENA_AUTHOR_TOKEN"]
        assert "\n" not in arena("author", "status", url).stderr.strip()


@pytest.mark.timeout(60)
def test_wrong_author_tokens_count_toward_the_failed_token_limit(tmp_path: Path) -> None:
    make_ladder(tmp_path / "ladder", {})
    alice = author(tmp_path / "ladder", "alice")
    with serving(tmp_path / "ladder") as served:
        where = where_of(served.url)
        mallory = "127.0.0.2"  # another client
        statuses = [
            request(where, "GET", "/api/me", None, bearer(f"guess-{i}"), source=mallory)[0]
            for i in range(11)
        ]
        assert statuses == [401] * 10 + [429]
        # Even the right token, from that address, until the minute has passed.
        assert request(where, "GET", "/api/me", None, bearer(alice), source=mallory)[0] == 429
        # The control: another address is not held.
        assert request(where, "GET", "/api/me", None, bearer(alice))[0] == 200
