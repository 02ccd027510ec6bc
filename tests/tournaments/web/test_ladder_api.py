"""The live ladder's HTTP API, served by a real `arena ladder serve` with real bot processes:
reads that hold the database's numbers, a match's replay held back while its deal is in play,
operator actions that need the operator token (401 without one or with a wrong one, one line
of JSON either way) and take effect on the running ladder, a remote bot registered with the
ladder token that then plays, and tokens that never show in a log or a page."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc

from referee.bots.launcher import parse_spec
from tests.tournaments.web.harness import BOTS, arena, get, get_json
from tests.tournaments.web.ladder_harness import count, finished, make_ladder, seated, serving
from tournaments.read_models.ladder_reads import HELD_DEAL


def post(
    url: str, body: object = None, token: str | None = None, scheme: str = "Bearer"
) -> tuple[int, Any, dict[str, str]]:
    """(status, JSON body, headers) of a POST, errors included."""
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"{scheme} {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read()), dict(answer.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)


def points_against(folder: Path, version: str, other: str) -> tuple[float, int]:
    """The version's points and meetings against the other, from the database (plain SQL)."""
    with sqlite3.connect(f"file:{folder / 'ladder.sqlite'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT bots, ranks FROM matches WHERE status = 'finished'").fetchall()
    points, meetings = 0.0, 0
    for bots_json, ranks_json in rows:
        bots, ranks = json.loads(bots_json), json.loads(ranks_json)
        if version in bots and other in bots:
            mine, theirs = ranks[bots.index(version)], ranks[bots.index(other)]
            points += 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
            meetings += 1
    return points, meetings


@pytest.mark.timeout(240)
def test_reads_and_a_replay_held_while_its_deal_is_in_play(tmp_path: Path) -> None:
    """The gated bot holds t0-g1 (the other seating of t0-g0's deal) at its first decision
    until the test creates the gate: t0-g0 is finished and its replay may not open yet."""
    gate = tmp_path / "gate"
    folder = tmp_path / "ladder"
    gated = f"cmd:{sys.executable} {BOTS / 'gated_bot.py'} {gate} t0-g1"
    tokens = make_ladder(
        folder,
        {"a": "example:random", "gated": gated},
        concurrency=1,
        decision_ms=120000,
        tier="none",  # the gate is a file the test makes later: no sandbox would show it
    )
    with serving(folder) as served:
        url = served.url
        try:
            served.wait_for("t0-g0 finished", lambda: finished(folder) >= 1)
            status, listed = get_json(url + "/api/matches")
            assert status == 200
            [first] = listed
            assert (first["match_id"], first["held"], first["viewer"]) == ("t0-g0", HELD_DEAL, None)
            assert first["reason"] is None  # how it ended would tell the other seating's cards
            status, kind, body = get(url + "/api/matches/t0-g0/replay")
            assert (status, json.loads(body)) == (409, {"error": f"match t0-g0: {HELD_DEAL}"})
            status, kind, body = get(url + "/matches/t0-g0")
            assert status == 409 and kind.startswith("text/html") and HELD_DEAL in body
            status, kind, body = get(url + "/api/matches/t0-g1/replay")
            assert status == 409 and "still being played" in body
        finally:
            gate.touch()
        served.wait_for("t0-g1 finished", lambda: finished(folder) >= 2)
        status, listed = get_json(url + "/api/matches?limit=1000")
        table = [m for m in listed if m["match_id"].startswith("t0-")]
        assert [m["match_id"] for m in table] == ["t0-g1", "t0-g0"]  # the latest first
        assert all(m["viewer"] == f"/matches/{m['match_id']}" and m["reason"] for m in table)
        status, replay = get_json(url + "/api/matches/t0-g0/replay")
        assert status == 200 and replay["viewer"] == "public"
        status, refused = get_json(url + "/api/matches/t0-g0/replay?as=0")
        assert status == 403 and "public only" in refused["error"]
        status, kind, body = get(url + "/matches/t0-g0")
        assert status == 200 and 'id="table"' in body
        assert get_json(url + "/api/matches/nope/replay") == (
            404,
            {"error": "no match 'nope' on the ladder"},
        )

        served.wait_for("a few more matches", lambda: finished(folder) >= 6)
        for name in ("a", "gated"):  # the ladder holds still, to be read exactly
            assert post(f"{url}/api/bots/{name}/pause", None, tokens["operator"])[0] == 200
        served.wait_for("the last match to end", lambda: not in_flight(folder))
        status, board = get_json(url + "/api/leaderboard?against=a")
        assert status == 200 and {row["bot"] for row in board} == {"a", "gated"}
        assert [row["rank"] for row in board] == [1, 2]
        assert board == sorted(board, key=lambda row: -row["conservative"])
        by_bot = {row["bot"]: row for row in board}
        points, meetings = points_against(folder, "gated@1", "a@1")
        assert meetings == finished(folder) and by_bot["gated"]["meetings_against"] == meetings
        assert by_bot["gated"]["score_against"] == pytest.approx(points / meetings)
        assert by_bot["a"]["score_against"] is None  # a never meets itself
        assert all(r["elo"] is not None and r["elo_error95"] > 0 for r in board)  # two seats
        assert get_json(url + "/api/leaderboard?against=zz") == (
            400,
            {"error": "no bot 'zz' on the ladder"},
        )
        status, bot = get_json(url + "/api/bots/gated")
        assert status == 200 and [v["version"] for v in bot["versions"]] == ["gated@1"]
        assert bot["recent_matches"] and bot["status"] == "paused"
        status, state = get_json(url + "/api/ladder")
        assert state["serving"] and state["seats"] == 2 and state["title"] == "Opposing Force"
        status, schema = get_json(url + "/api/openapi.json")
        assert {
            "/api/leaderboard",
            "/api/bots/{name}/pause",
            "/api/remote-bots",
            "/api/me",
            "/api/me/matches/{match_id}/replay",
            "/api/bots/{name}/history",
            "/api/pairs/{name}/{against}",
        } <= set(schema["paths"])
        schemes = {"operator", "ladder", "invite", "author", "viewer"}  # viewer: history_routes
        assert set(schema["components"]["securitySchemes"]) == schemes


def version_of(url: str, name: str) -> tuple[str, str]:
    status, bot = get_json(f"{url}/api/bots/{name}")
    assert status == 200, bot
    current = next(v["version"] for v in bot["versions"] if v["current"])
    return current, bot["status"]


@pytest.mark.timeout(300)
def test_operator_actions_need_the_token_and_take_effect_on_the_running_ladder(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ladder"
    tokens = make_ladder(folder, {"a": "example:random", "b": "example:first"})
    operator, ladder = tokens["operator"], tokens["ladder"]
    with serving(folder) as served:
        url = served.url
        add = {"name": "c", "spec": "example:random"}
        unauthorized = (
            "the operator token is missing: send it as the header Authorization: Bearer TOKEN"
        )
        status, body, headers = post(url + "/api/bots", add)
        assert (status, body, headers["www-authenticate"]) == (
            401,
            {"error": unauthorized},
            "Bearer",
        )
        assert post(url + "/api/bots", add, operator, scheme="Basic")[:2] == (
            401,
            {"error": unauthorized},
        )
        for wrong in ("nope", ladder, operator + "x"):
            assert post(url + "/api/bots", add, wrong)[:2] == (
                401,
                {"error": "the operator token is wrong"},
            )
        assert seated(folder, "c@1") == 0 and get_json(url + "/api/bots/c")[0] == 404

        # Added over HTTP: it plays (provisional, so at once).
        assert post(url + "/api/bots", add, operator)[:2] == (
            201,
            {"version": "c@1", "remote": None},
        )
        served.wait_for("matches of c", lambda: finished(folder, "c@1") >= 2)
        assert post(url + "/api/bots", add, operator)[:2] == (
            400,
            {"error": "bot 'c' is on the ladder already: `update` gives it a version"},
        )
        status, body, _ = post(url + "/api/bots", {"spec": "example:random"}, operator)
        assert (status, body) == (400, {"error": "bad request: name: Field required"})

        # Paused: no table seats it any more; resumed: it plays again.
        pause = {"reason": "looking at its log"}
        assert post(url + "/api/bots/c/pause", pause, operator)[:2] == (
            200,
            {"name": "c", "status": "paused", "reason": "looking at its log"},
        )
        served.wait_for("c's tables to end", lambda: not in_flight(folder, "c@1"))
        before, since = seated(folder, "c@1"), finished(folder)
        served.wait_for("matches of the others", lambda: finished(folder) >= since + 6)
        assert seated(folder, "c@1") == before
        assert get_json(url + "/api/bots/c")[1]["reason"] == "looking at its log"
        assert post(url + "/api/bots/c/resume", None, operator)[:2] == (
            200,
            {"name": "c", "status": "active", "reason": ""},
        )
        served.wait_for("c back", lambda: seated(folder, "c@1") > before)

        # Updated: the new version plays, the old one's matches stay.
        status, body, _ = post(url + "/api/bots/c/update", {"spec": "example:first"}, operator)
        assert (status, body) == (201, {"version": "c@2"})
        served.wait_for("matches of c@2", lambda: finished(folder, "c@2") >= 2)
        assert version_of(url, "c") == ("c@2", "active")

        # Retired: for good.
        assert post(url + "/api/bots/c/retire", None, operator)[1]["status"] == "retired"
        assert post(url + "/api/bots/c/resume", None, operator)[:2] == (
            400,
            {"error": "bot 'c' is retired: add it under a new name"},
        )
        assert post(url + "/api/bots/zz/pause", None, operator)[:2] == (
            404,
            {"error": "no bot 'zz' on the ladder"},
        )
        board = get_json(url + "/api/leaderboard")[1]
        assert "c" not in {row["bot"] for row in board}
        assert "c" in {row["bot"] for row in get_json(url + "/api/leaderboard?retired=true")[1]}

        remote_bot_registers_and_plays(folder, served.url, operator, ladder, served.wait_for)
        for path in ("/", "/bots/a", "/bots/far", "/api/ladder", "/api/openapi.json"):
            shown = get(url + path)[2]
            assert operator not in shown and ladder not in shown
    for log in (folder / "ladder.log", folder / "serve.out"):
        text = log.read_text()
        assert operator not in text and ladder not in text


def in_flight(folder: Path, version: str | None = None) -> bool:
    """A match scheduled and not finished (of the version, when given)."""
    sql = "SELECT COUNT(*) FROM matches WHERE status = 'scheduled' AND instr(bots, ?) > 0"
    return count(folder, sql, json.dumps(version) if version else "[") > 0


def remote_bot_registers_and_plays(
    folder: Path, url: str, operator: str, ladder: str, wait_for: Any
) -> None:
    assert post(url + "/api/remote-bots", {"name": "far"}, operator)[:2] == (
        401,
        {"error": "the token is neither the ladder's nor a live author's"},
    )
    assert post(url + "/api/remote-bots", {"name": "far"})[1] == {
        "error": "the ladder (or an author's) token is missing: send it as the header "
        "Authorization: Bearer TOKEN"
    }
    status, ticket, _ = post(url + "/api/remote-bots", {"name": "far"}, ladder)
    assert status == 201 and ticket["version"] == "far@1"
    # The answer comes once serve holds the secret's session: a Hello sent the same instant is
    # welcome (without LadderService.refresh it is refused until serve's next tick).
    welcome = asyncio.run(hello_now(ticket["address"], ticket["token"]))
    assert welcome == "welcome", welcome
    env = {**os.environ, "ARENA_ADDRESS": ticket["address"], "ARENA_TOKEN": ticket["token"]}
    argv = parse_spec("example:random").argv

    def start() -> subprocess.Popen[str]:
        pipe = subprocess.PIPE
        return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=pipe, text=True)

    bot = start()  # at once: the answer came only once serve held the secret's session
    try:
        wait_for(
            "the remote bot playing or refused", lambda: plays(folder) or bot.poll() is not None
        )
        assert bot.poll() is None, bot.communicate(timeout=30)[1]
        status, row = get_json(url + "/api/bots/far")
        assert row["remote"] is True and ticket["token"] not in json.dumps(row)
    finally:
        bot.kill()
        bot.communicate(timeout=30)


async def hello_now(address: str, token: str) -> str:
    """The kind of the first answer to a Hello with token, or the status of a refusal."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = referee_pb2_grpc.RefereeServiceStub(channel).Play()  # type: ignore[call-arg]
        try:
            await call.write(pb.PlayRequest(hello=pb.Hello(token=token, bot_name="far")))
            first = await asyncio.wait_for(call.read(), 10)
            assert isinstance(first, pb.PlayResponse)
            return str(first.WhichOneof("message"))
        except grpc.aio.AioRpcError as error:
            return f"refused: {error.code().name} {error.details()}"
        finally:
            call.cancel()


def plays(folder: Path) -> bool:
    return finished(folder, "far@1") >= 2


def test_a_web_address_in_use_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    make_ladder(folder, {})
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        path = folder / "ladder.toml"
        path.write_text(
            path.read_text().replace('127.0.0.1:0"\n\n[tokens]', f'127.0.0.1:{port}"\n\n[tokens]')
        )
        shown = arena("ladder", "serve", folder)
    assert shown.returncode == 2 and "Traceback" not in shown.stderr
    assert shown.stderr.strip() == (
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use (web.address)"
    )
