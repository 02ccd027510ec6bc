"""A final's results released when the organiser says, over HTTP: a real tournament with an
entrants.json (two authors, their tokens hashed as the ladder keeps them, and a house bot) is
played by `arena tournament run`, then served by two real `arena web` processes on 127.0.0.1 for
the whole module: the public server and the operator's (`--as referee`). `arena tournament
release` moves the release hidden -> participants -> public while they run; at each step the
operator, author A, author B and a visitor ask the same routes. The public step is every
guard's control: the same requests, the same servers, and the data comes."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from tests.tournaments.web.harness import arena, web_server
from tournaments.ladder.authors import hashed
from tournaments.ladder.config_file import write_new_ladder
from tournaments.ladder.database import LadderStore
from tournaments.read_models.release_views import HIDDEN, WrongToken
from tournaments.read_models.tournament_reads import TournamentFolder
from tournaments.web import release_guard, webserver
from tournaments.web.bearer import well_formed
from tournaments.web.release_guard import asker
from tournaments.web.tournament_app import create_app, operator_only
from tournaments.web.webserver import BackgroundServer, serve_ladder

TOKEN_A = "ann-8QmVbJ3x1nq0W2yTzR5c"
TOKEN_B = "bob-Lk2pX9vD4sF7hG1jQ0wE"
CONFIG = """
name = "final"
game = "opposing-force"
[[bots]]
name = "alpha"
spec = "example:opposing-force"
[[bots]]
name = "beta"
spec = "example:random"
[[bots]]
name = "house"
spec = "example:random"
[format]
kind = "round-robin"
games_per_pairing = 2
[contest]
release = "hidden"
entrants = "entrants.json"
"""
MATCHES = 6  # 3 pairings, 2 seatings each


def entrant(bot: str, author: str, token: str, seed: int) -> dict[str, Any]:
    return {
        "bot": bot,
        "author": author,
        "token_sha256": hashed(token),
        "version": f"{bot}-v1",
        "seed": seed,
        "rating": 10.0 - seed,
    }


ENTRANTS = {
    "ladder": "spring",
    "frozen_at": "2026-11-28T10:00:00+00:00",
    "entrants": [entrant("alpha", "ann", TOKEN_A, 1), entrant("beta", "bob", TOKEN_B, 2)],
}


@pytest.fixture(scope="module")
def final(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("final")
    (where / "entrants.json").write_text(json.dumps(ENTRANTS))
    (where / "final.toml").write_text(CONFIG)
    ran = arena("tournament", "run", where / "final.toml", "--out", where / "out", "--no-progress")
    assert ran.returncode == 0, ran.stderr
    return where / "out"


@pytest.fixture(scope="module")
def servers(final: Path) -> Iterator[tuple[str, str]]:
    """(the public server, the operator's), both running for the whole module."""
    with web_server(final) as public, web_server(final, "--as", "referee") as operator:
        yield public, operator


def ask(url: str, token: str | None = None) -> tuple[int, Any, dict[str, str]]:
    """(status, body: JSON under /api/, else text, headers) of a GET. Over the server's request
    rate (40 a second from one address, which this test's volleys can reach on an idle machine)
    it waits as Retry-After says and asks again, as a browser's user would: that limit is not
    what these tests judge. A 429 for failed token checks is returned as it is."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    request = urllib.request.Request(url, headers=headers)
    for _ in range(10):
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                status, body, got = answer.status, answer.read().decode(), dict(answer.headers)
        except urllib.error.HTTPError as error:
            status, body, got = error.code, error.read().decode(), dict(error.headers)
        if status != 429 or "too many requests" not in body:
            break
        time.sleep(int(got.get("retry-after", "1")))
    is_json = got.get("content-type", "").startswith("application/json")
    return status, json.loads(body) if is_json else body, got


def release(folder: Path, to: str, why: str = "") -> None:
    """`arena tournament release`: the tests of this module set the release they need first,
    in whatever order they run."""
    done = arena("tournament", "release", folder, "--to", to, "--why", why)
    assert done.returncode == 0, done.stderr
    assert f"are {to} now" in done.stdout or f"were {to} already" in done.stdout


def audit(folder: Path) -> list[dict[str, Any]]:
    logged = arena("tournament", "audit", folder, "--json")
    assert logged.returncode == 0, logged.stderr
    entries: list[dict[str, Any]] = json.loads(logged.stdout)["entries"]
    return entries


def all_matches(url: str, token: str | None = None) -> list[dict[str, Any]]:
    status, body, _ = ask(f"{url}/api/matches", token)
    assert status == 200, body
    found: list[dict[str, Any]] = body["matches"]
    return found


def bots_of(match: dict[str, Any]) -> list[str]:
    return [seat["bot"] for seat in match["seats"]]


RESULT_ROUTES = ("/api/standings", "/api/matches", "/api/matches/{m}", "/api/matches/{m}/replay")


def test_each_release_shows_each_asker_what_it_should(
    final: Path, servers: tuple[str, str]
) -> None:
    public, operator = servers
    release(final, "hidden", "as the file says, should another test have moved it")
    before = len(audit(final))
    everything = all_matches(operator)  # the operator sees all, whatever the release
    assert len(everything) == MATCHES and all(m["viewer"] for m in everything)
    by_bots = {tuple(sorted(bots_of(m))): m["match_id"] for m in everything}
    ab = by_bots[("alpha", "beta")]
    a_house, b_house = by_bots[("alpha", "house")], by_bots[("beta", "house")]

    # hidden: the visitor and both authors see what the tournament is, and no result.
    for token in (None, TOKEN_A, TOKEN_B):
        status, info, _ = ask(f"{public}/api/tournament", token)
        assert status == 200 and info["release"] == "hidden"
        assert info["progress"]["finished"] == MATCHES and info["format"] == "round-robin"
        for route in RESULT_ROUTES:
            status, body, _ = ask(public + route.format(m=ab), token)
            assert (status, body) == (403, {"error": HIDDEN}), route
        status, page, _ = ask(f"{public}/", token)
        assert status == 200 and HIDDEN in page
        main = page.split("<main>")[1]
        assert 'id="match-list"' not in main and 'id="standings"' not in main
        assert not any(bot in main for bot in ("alpha", "beta", "house"))
        status, page, _ = ask(f"{public}/matches/{ab}", token)
        assert status == 403 and HIDDEN in page
    status, standings, _ = ask(f"{operator}/api/standings")
    assert status == 200 and len(standings["standings"]) == 3
    operator_view = ask(f"{operator}/api/matches/{ab}/replay?as=0")
    assert operator_view[0] == 200

    # participants: each author their own bots' rows and matches; the visitor nothing.
    release(final, "participants", "the authors check their results")
    for route in RESULT_ROUTES:
        status, body, _ = ask(public + route.format(m=ab))
        assert (status, body) == (403, {"error": HIDDEN}), route
    for token, mine, other, theirs in (
        (TOKEN_A, "alpha", "beta", b_house),
        (TOKEN_B, "beta", "alpha", a_house),
    ):
        status, standings, headers = ask(f"{public}/api/standings", token)
        assert status == 200 and [r["bot"] for r in standings["standings"]] == [mine]
        assert headers["cache-control"] == "no-store"
        assert standings["bracket"] is None and set(standings["crosstable"] or {}) <= {mine}
        listed = all_matches(public, token)
        assert len(listed) == 4 and all(mine in bots_of(m) for m in listed)
        # Another's match is one that does not exist, in the same words.
        status, body, _ = ask(f"{public}/api/matches/{theirs}", token)
        assert status == 404 and body == {"error": f"no match {theirs!r} in final"}
        status, _, _ = ask(f"{public}/api/matches/{theirs}/replay", token)
        assert status == 404
        # Their own seat's view of the match with the other author, not the other's seat.
        match = next(m for m in listed if m["match_id"] == ab)
        seat, other_seat = (bots_of(match).index(b) for b in (mine, other))
        status, view, _ = ask(f"{public}/api/matches/{ab}/replay", token)
        assert status == 200 and view["viewer"] == str(seat), view
        status, _, headers = ask(f"{public}/matches/{ab}", token)  # the viewer's page of it
        assert status == 200 and headers["cache-control"] == "no-store"
        for wanted in (str(other_seat), "referee"):
            status, body, _ = ask(f"{public}/api/matches/{ab}/replay?as={wanted}", token)
            assert status == 403 and "your seat" in body["error"], body
        # Control: the operator reads that other seat's view of the very same match.
        status, view, _ = ask(f"{operator}/api/matches/{ab}/replay?as={other_seat}")
        assert status == 200 and view["viewer"] == str(other_seat)

    # A token that is no entrant's is refused, never taken for a visitor's.
    status, body, _ = ask(f"{public}/api/standings", "not-an-entrants-token")
    assert status == 401 and "no entrant's" in body["error"]

    # public: the same requests, the same servers, no restart, and the data comes (control).
    release(final, "public", "the final is over")
    for token in (None, TOKEN_A):
        for route in RESULT_ROUTES:
            status, body, _ = ask(public + route.format(m=ab), token)
            assert status == 200, (route, body)
        status, standings, _ = ask(f"{public}/api/standings", token)
        assert [r["bot"] for r in standings["standings"]] == [
            r["bot"] for r in ask(f"{operator}/api/standings")[1]["standings"]
        ]
        assert len(all_matches(public, token)) == MATCHES
        status, page, _ = ask(f"{public}/", token)
        assert status == 200 and HIDDEN not in page and 'id="match-list"' in page
    # Public is the spectators' view: a seat's stays the operator's.
    assert ask(f"{public}/api/matches/{ab}/replay?as=0", TOKEN_A)[0] == 403

    # The audit log holds each release, who made it and why.
    entries = audit(final)[before:]
    assert [(e["who"], e["action"], e["why"], e["detail"]) for e in entries] == [
        (
            "operator",
            "released",
            "the authors check their results",
            {"from": "hidden", "to": "participants"},
        ),
        ("operator", "released", "the final is over", {"from": "participants", "to": "public"}),
    ]
    shown = arena("tournament", "audit", final)
    assert shown.returncode == 0 and "the final is over" in shown.stdout


def test_the_live_updates_carry_the_counts_alone(final: Path, servers: tuple[str, str]) -> None:
    """Whatever the release, the event stream tells a page only how far the tournament has got:
    the counts the hidden page shows too."""
    public, _ = servers
    request = urllib.request.Request(f"{public}/api/events")
    while True:  # past the request rate the other tests' volleys may reach: wait, as ask() does
        try:
            stream = urllib.request.urlopen(request, timeout=15)
            break
        except urllib.error.HTTPError as error:
            assert error.code == 429, error
            time.sleep(int(error.headers.get("retry-after", "1")))
    with stream:
        for raw in stream:
            line = raw.decode().strip()
            if line.startswith("data:"):
                event = json.loads(line.removeprefix("data:"))
                break
    assert set(event) == {"scheduled", "finished", "state", "runner_alive"}
    assert (event["scheduled"], event["finished"]) == (MATCHES, MATCHES)


def test_the_audit_log_refuses_an_edit_through_sqlite(
    final: Path, servers: tuple[str, str], tmp_path: Path
) -> None:
    release(final, "participants", "for the record")
    release(final, "public", "and back")
    database = final / "tournament.sqlite"
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT COUNT(*) FROM audit").fetchone()[0] >= 2
        for statement in ("UPDATE audit SET why = 'nothing happened'", "DELETE FROM audit"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                db.execute(statement)
    # Control: a copy of the same file, its guards dropped, takes the edit.
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(database, copy)
    with sqlite3.connect(copy) as db:
        db.execute("DROP TRIGGER audit_never_updated")
        db.execute("UPDATE audit SET why = 'nothing happened'")
        assert {why for (why,) in db.execute("SELECT why FROM audit")} == {"nothing happened"}


def test_wrong_tokens_are_rate_limited_per_address(final: Path) -> None:
    """A server of its own: the limit counts this client's failures, and no other test's."""
    release(final, "participants")
    with web_server(final) as public:
        # Control: under the limit, the right token reads its own standings.
        assert ask(f"{public}/api/standings", TOKEN_A)[0] == 200
        wrong = [ask(f"{public}/api/standings", f"guess-{n}")[0] for n in range(9)]
        status, body, _ = ask(f"{public}/api/standings", "caf\u00e9")  # not ASCII: counted too
        assert wrong == [401] * 9 and status == 401 and "malformed" in body["error"]
        # Over it, even the right token waits, and a visitor's request still passes.
        status, body, headers = ask(f"{public}/api/standings", TOKEN_A)
        assert status == 429 and "failed token checks" in body["error"]
        assert int(headers["retry-after"]) >= 1
        assert ask(f"{public}/api/tournament")[0] == 200


# Headers that are no author's token: malformed (not ASCII, a control character) or wrong.
BAD_HEADERS = ("caf\u00e9", "tab\tinside", "not-an-entrants-token")


@contextmanager
def in_process(app: FastAPI) -> Iterator[str]:
    """A real uvicorn server of app on 127.0.0.1 in this process (so a test can patch it)."""
    server = BackgroundServer(*webserver._server(app, "127.0.0.1", 0))
    try:
        yield server.address.rstrip("/")
    finally:
        server.stop()


def bad_header_answers(url: str) -> list[tuple[int, str | None]]:
    """(status, WWW-Authenticate) of a GET of url with each bad header."""
    answers = [ask(url, token) for token in BAD_HEADERS]
    return [(status, headers.get("www-authenticate")) for status, _, headers in answers]


def test_a_bad_header_is_the_same_401_on_a_result_and_on_a_ladder_route(
    final: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The release guard checks the token with the ladder's one bearer check: a result route
    of a final and an author route of a ladder answer each bad header alike."""
    release(final, "participants")
    write_new_ladder(tmp_path, "opposing-force", 2, "127.0.0.1:0")
    LadderStore.create(tmp_path).close()
    ladder = serve_ladder(tmp_path, "127.0.0.1:0")
    try:
        on_ladder = bad_header_answers(ladder.address + "api/me")
    finally:
        ladder.stop()
    assert on_ladder == [(401, "Bearer")] * len(BAD_HEADERS)
    with in_process(create_app(TournamentFolder(final))) as public:
        assert bad_header_answers(f"{public}/api/standings") == on_ladder

    # Control: the guard's own check of old (a malformed token a WrongToken, its 403) answers
    # otherwise for the same headers.
    def own_check(request: Any, failed: Any, credentials: Any, which: str) -> str:
        if not well_formed(credentials.credentials):
            raise WrongToken("the author token is malformed: tokens are printable ASCII")
        return str(credentials.credentials)

    monkeypatch.setattr(release_guard, "bearer_token", own_check)
    monkeypatch.setattr(release_guard, "unauthorized", lambda message: WrongToken(message))
    with in_process(create_app(TournamentFolder(final))) as public:
        assert bad_header_answers(f"{public}/api/standings") == [(403, None)] * len(BAD_HEADERS)


# The routes that show no result whatever the release: the live counts and the browser's icon.
NO_RESULTS = {"/api/events", "/favicon.ico"}


def _asks_who(dependant: Dependant) -> bool:
    # The release guard, or stricter: the operator's alone (the audit log: test_final_audit.py).
    guards = (asker, operator_only)
    return any(d.call in guards or _asks_who(d) for d in dependant.dependencies)


def unguarded(app: FastAPI) -> set[str]:
    """The app's routes that answer without asking who asks (release_guard.asker)."""
    routes = [r for r in app.routes if isinstance(r, APIRoute) and r.path not in NO_RESULTS]
    return {r.path for r in routes if not _asks_who(r.dependant)}


def test_every_route_that_can_show_a_result_asks_who_asks(final: Path) -> None:
    """So a route added later (a bracket, an export) cannot forget the release."""
    app = create_app(TournamentFolder(final))
    assert unguarded(app) == set()
    # Control: a route added without the guard is found.
    app.get("/api/bracket")(lambda: {"final": "alpha beat beta"})
    assert unguarded(app) == {"/api/bracket"}
