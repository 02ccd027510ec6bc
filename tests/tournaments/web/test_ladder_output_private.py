"""A bot's output is never public: a real `arena ladder serve` with a bot that prints its hand
(and a terminal escape) to stderr at each decision, and an HTTP client that reads every public
page and JSON route while it plays. None of them holds a line of its output, a path of the
ladder's folder or a SPEC; a match whose deal is in play shows no ranks and no forfeits. The
control: the operator's route shows that very output once the deal has ended (so the probe
would have found it had it been public), and refuses it while the deal is in play."""

from __future__ import annotations

import json
import re
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.tournaments.web.harness import BOTS, arena, get, get_json
from tests.tournaments.web.ladder_harness import finished, make_ladder, serving
from tournaments.read_models.ladder_reads import HELD_DEAL

CHATTY = BOTS / "chatty_bot.py"
MARKER = "CHATTY-7f3a"
PUBLIC = [
    "/",
    "/bots/chatty",
    "/bots/gated",
    "/api/ladder",
    "/api/leaderboard?retired=true",
    "/api/matches?limit=1000",
    "/api/matches?version=chatty@1",
    "/api/bots/chatty",
    "/api/bots/gated",
    "/api/openapi.json",
    "/matches/t0-g0",
    "/matches/t0-g1",
    "/api/matches/t0-g0/replay",
    "/api/matches/t0-g1/replay",
]


def output(url: str, match_id: str, token: str | None, seat: int | None = None) -> Any:
    """(status, JSON body) of the operator's route."""
    query = "" if seat is None else f"?seat={seat}"
    request = urllib.request.Request(f"{url}/api/matches/{match_id}/output{query}")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def probe(url: str, secrets: list[str]) -> int:
    """Read every public route once; none may hold any of secrets. How many were read."""
    for route in PUBLIC:
        status, _, body = get(url + route)
        while status == 429:  # the ladder's per-address request limit: read on after it
            time.sleep(0.25)
            status, _, body = get(url + route)
        assert status in (200, 409), (route, status, body)
        found = [secret for secret in secrets if secret in body]
        assert not found, (route, found)
    return len(PUBLIC)


def held_shows_nothing(url: str) -> None:
    """Every match listed whose deal is in play: no ranks, forfeits or reason."""
    for route in ("/api/matches?limit=1000", "/api/bots/chatty", "/api/bots/gated"):
        status, body = get_json(url + route)
        while status == 429:  # the per-address request limit, as probe() reads on after it
            time.sleep(0.25)
            status, body = get_json(url + route)
        assert status == 200, (route, status, body)
        listed = body if isinstance(body, list) else body["recent_matches"]
        for match in listed:
            if match["held"] == HELD_DEAL:
                assert match["reason"] is None, match
                assert all(s["rank"] is None and s["forfeit"] is None for s in match["seats"])
        if isinstance(body, dict):
            held = {m["match_id"] for m in listed if m["held"] == HELD_DEAL}
            assert not held & {f["match_id"] for f in body["forfeits"]}


@pytest.mark.timeout(300)
def test_no_public_route_shows_a_playing_bots_output_and_the_operator_gets_it_after_the_deal(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "gate"
    folder = tmp_path / "ladder"
    gated = f"cmd:{sys.executable} {BOTS / 'gated_bot.py'} {gate} t0-g1"
    # Tier none: the gated bot waits for a file in pytest's own (0700) folder.
    tokens = make_ladder(
        folder,
        {"chatty": str(CHATTY), "gated": gated},
        concurrency=1,
        decision_ms=120000,
        tier="none",
    )
    secrets = [MARKER, "hand:", str(folder), "chatty_bot.py", "gated_bot.py", "cmd:", "\x1b"]
    secrets += ["logs/", ".jsonl", sys.executable]
    with serving(folder) as served:
        url = served.url
        reads = 0
        try:
            while finished(folder) < 1:  # t0-g0 in play: the bot prints its hand meanwhile
                reads += probe(url, secrets)
            # t0-g0 is over, t0-g1 (its deal's other seating) held at gated's first decision.
            logs = {p.parent.name: p for p in (folder / "logs").glob("t0-g*/*-chatty@1.log")}
            written = logs["t0-g0"].read_text()
            hands = re.findall(rf"{MARKER} t0-g0 hand: (.+)", written)
            assert hands and "\x1b]0;owned\x07" in written  # on disk, as the bot wrote it
            whole = [hand for hand in hands if hand.count(" ") >= 2]  # 3 cards or more
            assert whole
            for _ in range(3):
                reads += probe(url, secrets + whole)
                held_shows_nothing(url)
            # Nor the leaderboard: no rating has moved for a deal in play.
            _, board = get_json(url + "/api/leaderboard")
            assert [(row["matches"], row["mu"]) for row in board] == [(0, 25.0)] * 2, board
            for match_id, why in (("t0-g0", HELD_DEAL), ("t0-g1", "still being played")):
                status, body = output(url, match_id, tokens["operator"])
                assert status == 409 and why in body["error"], body
                assert MARKER not in json.dumps(body)
            said = arena("ladder", "output", folder, "t0-g0")
            assert said.returncode == 2 and HELD_DEAL in said.stderr
            assert MARKER not in said.stdout + said.stderr
        finally:
            gate.touch()
        served.wait_for("t0-g1 finished", lambda: finished(folder) >= 2)
        after = [MARKER, str(folder), "chatty_bot.py", "cmd:", "logs/", ".jsonl", "\x1b"]
        reads += probe(url, after)
        _, listed = get_json(url + "/api/matches?limit=1000")
        ended = next(m for m in listed if m["match_id"] == "t0-g0")  # the control: shown now
        assert sorted(s["rank"] for s in ended["seats"]) == [0, 1] and ended["reason"]

        assert output(url, "t0-g0", None)[0] == 401
        assert output(url, "t0-g0", "wrong-token-of-some-length")[0] == 401
        status, shown = output(url, "t0-g0", tokens["operator"])
        assert status == 200, shown
        chatty = next(s for s in shown["seats"] if s["version"] == "chatty@1")
        assert all(f"{MARKER} t0-g0 hand: {hand}" in chatty["output"] for hand in hands)
        assert chatty["bytes"] == len(written.encode())
        status, one = output(url, "t0-g0", tokens["operator"], seat=chatty["seat"])
        assert status == 200 and one["seats"] == [chatty]
        assert output(url, "t0-g0", tokens["operator"], seat=5)[0] == 404

    printed = arena("ladder", "output", folder, "t0-g0")
    assert printed.returncode == 0, printed.stderr
    assert f"{MARKER} t0-g0 hand: {hands[0]}" in printed.stdout
    assert "\\x1b]0;owned\\x07" in printed.stdout and "\x1b" not in printed.stdout
    print(f"{reads} public reads, none with the bot's output")
