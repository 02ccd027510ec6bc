"""`arena web` over HTTP, a real server process on 127.0.0.1 serving a real tournament's folder:
the JSON holds the command line's numbers and the database's matches, a match opens in the
replay viewer as the viewpoint allows, and every refusal is one clean line."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.matches.seat_times import SeatTimes
from referee.replays.viewer import model, page
from tests.tournaments.web.harness import arena, cli_tables, get, get_json, web_server

Json = dict[str, Any]


@pytest.fixture(scope="module")
def served(tournament: Path) -> Iterator[str]:
    """One `arena web` of the finished tournament, as the public (the default), for the tests
    that only read."""
    with web_server(tournament) as url:
        yield url


def database_rows(folder: Path) -> list[Json]:
    """The matches as the database holds them, the latest scheduled first: read here with
    plain SQL, apart from the code under test."""
    with sqlite3.connect(f"file:{folder / 'tournament.sqlite'}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT match_id, bots, ranks, forfeits, reason, decisions FROM matches "
            "ORDER BY seq DESC"
        ).fetchall()
    return [
        {
            "match_id": match_id,
            "bots": json.loads(bots),
            "ranks": json.loads(ranks) if ranks else None,
            "forfeits": json.loads(forfeits) if forfeits else [],
            "reason": reason,
            "decisions": decisions,
        }
        for match_id, bots, ranks, forfeits, reason, decisions in rows
    ]


def cli_json(folder: Path) -> Json:
    shown = arena("tournament", "standings", folder, "--json")
    assert shown.returncode == 0, shown.stderr
    document: Json = json.loads(shown.stdout)
    return document


def test_the_json_standings_are_the_command_lines_numbers(tournament: Path, served: str) -> None:
    tables = cli_tables(tournament)
    status, standings = get_json(f"{served}/api/standings")
    assert status == 200
    assert standings == cli_json(tournament)  # the one document, state line and all
    assert (standings["finished"], standings["scheduled"]) == (6, 6)
    assert standings["state"] == "finished" and standings["interval"] is None
    header, *rows = tables["results"]
    assert header == [
        *("#", "bot", "games", "W-D-L", "points", "forfeits", "substituted"),
        *("mu", "sigma", "rating", "time"),
    ]
    assert rows == [
        [
            str(r["place"]),
            r["bot"],
            str(r["games"]),
            f"{r['wins']}-{r['draws']}-{r['losses']}",
            f"{r['points']:g}",
            str(r["forfeits"]),
            str(r["substituted"]),
            f"{r['mu']:.1f}",
            f"{r['sigma']:.1f}",
            f"{r['rating']:.1f}",
            SeatTimes.model_validate(r["time"]).brief(),
        ]
        for r in standings["standings"]
    ]
    assert [r["bot"] for r in standings["standings"]] == ["strategy", "random", "cheat"]
    assert [r["forfeits"] for r in standings["standings"]] == [0, 0, 4]
    _, *elo = tables["Elo (Bradley-Terry)"]
    assert elo == [
        [
            r["bot"],
            f"{r['elo']:+.0f}",
            f"{r['error95']:.0f}",
            str(r["games"]),
            f"{r['score']:.1%}",
            f"{r['los_next']:.1%}" if r["los_next"] is not None else "",
        ]
        for r in standings["elo"]
    ]
    assert standings["elo"][-1]["los_next"] is None
    header, *los = tables["LOS: the likelihood the row is stronger than the column"]
    order = [r["bot"] for r in standings["elo"]]
    assert header == ["", *order]
    assert los == [
        [a, *("-" if a == b else f"{standings['los'][a][b]:.1%}" for b in order)] for a in order
    ]
    header, *cross = tables["crosstable: the row's points against the column"]
    assert header == ["", "strategy", "random", "cheat", "total"]
    for shown, (bot, met) in zip(cross, standings["crosstable"].items(), strict=True):
        cells = [
            "-" if other == bot else f"{met[other]['points']:g}/{met[other]['games']}"
            for other in header[1:-1]
        ]
        points = sum(m["points"] for m in met.values())
        games = sum(m["games"] for m in met.values())
        assert shown == [bot, *cells, f"{points:g}/{games}"]
    assert standings["sprt"] is None


def test_three_seats_show_the_command_lines_intervals(three_seats: Path) -> None:
    """At three seats there is no Elo table but a bootstrap interval of mu: the same as the
    command line's, in the JSON and in the page's results table."""
    tables = cli_tables(three_seats)
    with web_server(three_seats) as url:
        status, standings = get_json(f"{url}/api/standings")
        assert status == 200
        assert standings == cli_json(three_seats)
        status, _, body = get(f"{url}/")
    assert status == 200
    assert standings["elo"] is None and "bootstrap" in standings["interval"]
    header, *rows = tables["results"]
    assert header[-2:] == ["mu 95%", "time"]  # the decisions' times after the interval
    for row, r in zip(rows, standings["standings"], strict=True):
        assert r["mu_low"] <= r["mu"] <= r["mu_high"]
        assert row[1] == r["bot"] and row[-2] == f"{r['mu_low']:.1f} .. {r['mu_high']:.1f}"
        assert f"<td>{row[-2]}</td>" in body
        assert row[-1] == SeatTimes.model_validate(r["time"]).brief() != ""
    assert f"mu 95% = {standings['interval']}" in body


def test_the_match_list_and_its_filters_hold_what_the_database_holds(
    tournament: Path, served: str
) -> None:
    rows = database_rows(tournament)

    def ids(predicate: Any) -> list[str]:
        return [row["match_id"] for row in rows if predicate(row)]

    def won(bot: str, row: Json) -> bool:
        return bot in row["bots"] and row["ranks"][row["bots"].index(bot)] == 0

    expected = {
        "": ids(lambda r: True),
        "bot=cheat": ids(lambda r: "cheat" in r["bots"]),
        "cause=illegal_action": ids(lambda r: r["forfeits"]),
        "cause=any&bot=random": [],
        "bot=cheat&cause=timeout": [],
        "bot=strategy&result=win": ids(lambda r: won("strategy", r)),
        "bot=random&result=loss": ids(lambda r: "random" in r["bots"] and not won("random", r)),
        "result=draw": ids(lambda r: len(set(r["ranks"])) == 1),
        "result=playing": [],
        "bot=&result=&cause=": ids(lambda r: True),  # the form's "any"
    }
    assert len(expected["bot=cheat"]) == 4 and expected["cause=illegal_action"]
    assert expected["bot=strategy&result=win"]
    by_id = {row["match_id"]: row for row in rows}
    url = served
    for query, wanted in expected.items():
        status, listed = get_json(f"{url}/api/matches?{query}")
        assert status == 200, (query, listed)
        assert [m["match_id"] for m in listed["matches"]] == wanted, query
        assert listed["total"] == len(wanted)
    _, page_two = get_json(f"{url}/api/matches?limit=2&offset=1")
    assert [m["match_id"] for m in page_two["matches"]] == expected[""][1:3]
    assert page_two["total"] == 6
    for match_id, row in by_id.items():
        status, shown = get_json(f"{url}/api/matches/{match_id}")
        assert status == 200
        assert [s["bot"] for s in shown["seats"]] == row["bots"]
        assert [s["rank"] for s in shown["seats"]] == row["ranks"]
        assert [[f["seat"], f["cause"], f["detail"]] for f in shown["forfeits"]] == row["forfeits"]
        assert (shown["reason"], shown["decisions"]) == (row["reason"], row["decisions"])
        assert shown["status"] == "finished" and shown["held"] is None
        assert shown["viewer"] == f"/matches/{match_id}"


def test_a_match_opens_in_the_viewer_as_the_public_and_no_other_way(
    tournament: Path, served: str
) -> None:
    replay = tournament / "replays" / "t1-g0.jsonl"
    public = model.load(replay, "public")
    url = served
    status, kind, body = get(f"{url}/matches/t1-g0")
    assert (status, kind) == (200, "text/html; charset=utf-8")
    assert body == page.render(public)  # the very page `arena replay html --as public` writes
    status, data = get_json(f"{url}/api/matches/t1-g0/replay")
    assert status == 200 and data == json.loads(json.dumps(public))
    status, info = get_json(f"{url}/api/tournament")
    assert info["viewpoints"] == ["public"]
    for wanted in ("referee", "0", "1"):
        status, refused = get_json(f"{url}/api/matches/t1-g0/replay?as={wanted}")
        assert status == 403, refused
        assert refused["error"] == (
            "this server shows matches as the public only; `arena web DIR --as referee` "
            f"shows them as {wanted}"
        )
        status, _, body = get(f"{url}/matches/t1-g0?as={wanted}")
        assert status == 403 and "--as referee" in body


def test_as_referee_the_organiser_sees_every_viewpoint(tournament: Path) -> None:
    replay = tournament / "replays" / "t0-g1.jsonl"
    with web_server(tournament, "--as", "referee") as url:
        status, _, body = get(f"{url}/matches/t0-g1")
        assert status == 200 and body == page.render(model.load(replay, "referee"))
        for wanted in ("referee", "public", "0", "1"):
            status, data = get_json(f"{url}/api/matches/t0-g1/replay?as={wanted}")
            assert status == 200 and data["viewer"] == wanted
        status, refused = get_json(f"{url}/api/matches/t0-g1/replay?as=2")
        assert (
            status == 403 and refused["error"] == "no viewpoint '2': one of referee, public, 0, 1"
        )
        _, info = get_json(f"{url}/api/tournament")
        assert info["viewpoints"] == ["referee", "public", "0", "1"]


def test_bad_requests_are_one_line_errors(served: str) -> None:
    cases = {
        "/api/matches/nope": (404, "no match 'nope' in web"),
        "/api/matches/nope/replay": (404, "no match 'nope' in web"),
        "/api/matches?bot=nobody": (400, "no bot 'nobody' in this tournament; its bots: "),
        "/api/matches?result=win": (400, "result=win needs a bot: whose win?"),
        "/api/matches?result=won": (400, "bad request: result: Input should be 'win', 'draw'"),
        "/api/matches?limit=0": (400, "bad request: limit: Input should be greater than"),
        "/api/matches?colour=red": (400, "bad request: colour: Extra inputs are not permitted"),
        "/api/nothing": (404, "Not Found"),
    }
    url = served
    for path, (code, message) in cases.items():
        status, answer = get_json(url + path)
        assert status == code, (path, answer)
        assert list(answer) == ["error"] and answer["error"].startswith(message), answer
        assert "\n" not in answer["error"]
    status, kind, body = get(f"{url}/matches/nope")
    assert (status, kind) == (404, "text/html; charset=utf-8")
    assert '<p id="error">no match &#39;nope&#39; in web</p>' in body
    status, _, body = get(f"{url}/?bot=nobody")
    assert status == 400 and 'id="filter-error">no bot &#39;nobody&#39;' in body


def test_a_missing_replay_and_a_broken_database_are_clean_errors(
    tournament: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(tournament, folder)
    (folder / "replays" / "t0-g0.jsonl").unlink()
    (folder / "replays" / "t0-g1.jsonl").write_text('{"kind": "header"}\n')
    with web_server(folder) as url:
        status, answer = get_json(f"{url}/api/matches/t0-g0/replay")
        assert status == 404
        # No path of the machine in a public answer.
        assert answer["error"] == "match t0-g0: its replay is gone from the tournament's replays"
        status, answer = get_json(f"{url}/api/matches/t0-g1/replay")
        assert status == 500
        assert answer["error"].startswith("match t0-g1: its replay cannot be shown: ")
        assert str(folder) not in answer["error"] and "t0-g1.jsonl" in answer["error"]
        for leftover in folder.glob("tournament.sqlite*"):
            leftover.unlink()
        (folder / "tournament.sqlite").write_text("not a database")
        status, answer = get_json(f"{url}/api/standings")
        assert status == 500
        assert answer["error"] == "tournament.sqlite is not a tournament database: " + (
            "file is not a database"
        )
        status, _, body = get(f"{url}/")
        assert status == 500 and "is not a tournament database" in body


def test_the_schema_documents_every_json_answer(served: str) -> None:
    url = served
    _, schema = get_json(f"{url}/api/openapi.json")
    answers = {
        "/api/tournament": "TournamentInfo",
        "/api/standings": "StandingsReport",
        "/api/matches": "MatchList",
        "/api/matches/{match_id}": "MatchSummary",
    }
    for path, name in answers.items():
        responses = schema["paths"][path]["get"]["responses"]
        ok = responses["200"]["content"]["application/json"]["schema"]
        assert ok == {"$ref": f"#/components/schemas/{name}"}, path
        error = responses["404"]["content"]["application/json"]["schema"]
        assert error == {"$ref": "#/components/schemas/ErrorBody"}
    assert {"/", "/matches/{match_id}", "/api/events", "/api/matches/{match_id}/replay"} <= set(
        schema["paths"]
    )
    results = schema["components"]["schemas"]["Standing"]["properties"]
    assert results["rating"]["description"] == "mu - 3 sigma"
    assert (
        "mu_low" in results
        and "los_next" in schema["components"]["schemas"]["EloStanding"]["properties"]
    )


def test_live_events_start_with_the_progress_and_are_bounded(tournament: Path) -> None:
    with web_server(tournament, "--max-live", "1") as url:
        _, info = get_json(f"{url}/api/tournament")
        first = urllib.request.urlopen(f"{url}/api/events", timeout=30)
        assert first.headers["content-type"].startswith("text/event-stream")
        assert first.readline() == b"event: progress\r\n"
        data = first.readline().decode().removeprefix("data: ")
        assert (
            json.loads(data)
            == info["progress"]
            == {
                "scheduled": 6,
                "finished": 6,
                "state": "finished",
                "runner_alive": False,
            }
        )
        status, refused = get_json(f"{url}/api/events")
        assert status == 503
        assert refused["error"] == (
            "1 pages are following this tournament live already, the most this server allows "
            "(arena web --max-live)"
        )
        first.close()
        # The server frees the place when it sees the connection close.
        deadline = time.monotonic() + 30
        while True:
            try:
                second = urllib.request.urlopen(f"{url}/api/events", timeout=30)
                break
            except urllib.error.HTTPError as error:
                assert error.code == 503 and time.monotonic() < deadline
                time.sleep(0.05)
        assert second.readline() == b"event: progress\r\n"
        second.close()
