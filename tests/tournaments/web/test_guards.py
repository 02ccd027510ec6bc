"""The web servers against their clients, each guard beside a control where it is off: bad
tokens are a one-line 401 and a flood of them a 429, registrations are rate-limited per address,
look-alike bot names are refused, a foreign Host header is refused (DNS rebinding), and one
address cannot take every live stream. Real uvicorn servers on 127.0.0.1, asked over real HTTP
(other addresses of 127.0.0.0/8 stand for other clients)."""

from __future__ import annotations

import http.client
import json
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tournaments.ladder import roster
from tournaments.ladder.config_file import write_new_ladder
from tournaments.ladder.database import LadderStore
from tournaments.read_models import ladder_reads
from tournaments.web import bearer as bearer_check
from tournaments.web import ladder_app
from tournaments.web.access import Access
from tournaments.web.gate import HostNames
from tournaments.web.webserver import BackgroundServer, prepare, serve_ladder, split_address

Answer = tuple[int, dict[str, Any], dict[str, str]]


@pytest.fixture
def ladder(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    write_new_ladder(tmp_path, "opposing-force", 2, "127.0.0.1:0")
    LadderStore.create(tmp_path).close()
    tokens = tomllib.loads((tmp_path / "ladder.toml").read_text())["tokens"]
    return tmp_path, tokens


@contextmanager
def ladder_web(folder: Path) -> Iterator[tuple[str, int]]:
    server = serve_ladder(folder, "127.0.0.1:0")
    try:
        yield split_address(server.address.removeprefix("http://").rstrip("/"))
    finally:
        server.stop()


def request(
    where: tuple[str, int],
    method: str,
    path: str,
    body: object = None,
    headers: dict[str, str] | None = None,
    source: str = "127.0.0.1",
) -> Answer:
    """(status, JSON body, headers) of one request from the source address."""
    connection = http.client.HTTPConnection(*where, timeout=30, source_address=(source, 0))
    try:
        data = None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json", **(headers or {})}
        connection.putrequest(method, path, skip_host="Host" in sent)
        for key, value in sent.items():
            connection.putheader(key, value.encode("utf-8"))
        connection.putheader("Content-Length", str(len(data or b"")))
        connection.endheaders(data)
        answer = connection.getresponse()
        text = answer.read().decode()
        return (
            answer.status,
            json.loads(text) if text.startswith("{") else {"text": text},
            dict(answer.getheaders()),
        )
    finally:
        connection.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


BAD_TOKENS = ("", "x", "wrong-token-of-the-right-length!!", "ünïcödé-tökén", "tab\tinside")


def test_every_bad_token_is_a_one_line_401(ladder: tuple[Path, dict[str, str]]) -> None:
    folder, tokens = ladder
    with ladder_web(folder) as where:
        status, body, headers = request(where, "POST", "/api/bots", {"name": "a"})
        assert status == 401 and headers["www-authenticate"] == "Bearer"
        for token in BAD_TOKENS:
            status, body, _ = request(
                where, "POST", "/api/remote-bots", {"name": "a"}, bearer(token)
            )
            assert status == 401, (token, body)
            assert list(body) == ["error"] and "\n" not in body["error"]
            assert "Traceback" not in body["error"]
        status, body, _ = request(
            where, "POST", "/api/remote-bots", {"name": "ok"}, bearer(tokens["ladder"])
        )
        assert status == 201, body


def test_control_without_the_token_guards_a_non_ascii_token_is_a_500(
    ladder: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import hmac

    monkeypatch.setattr(bearer_check, "well_formed", lambda token: True)
    monkeypatch.setattr(ladder_reads, "_same", hmac.compare_digest)
    folder, _ = ladder
    with ladder_web(folder) as where:
        status, _, _ = request(where, "POST", "/api/remote-bots", {"name": "a"}, bearer("ünï"))
        assert status == 500


def test_failed_token_checks_are_rate_limited_per_address(
    ladder: tuple[Path, dict[str, str]],
) -> None:
    folder, tokens = ladder
    with ladder_web(folder) as where:
        statuses = [
            request(where, "POST", "/api/bots", {"name": "a"}, bearer("guess" * 4))[0]
            for _ in range(11)
        ]
        assert statuses == [401] * 10 + [429]
        # Now even the right token waits: a guesser cannot tell a hit from a miss.
        status, body, headers = request(
            where,
            "POST",
            "/api/bots",
            {"name": "a", "spec": "example:random"},
            bearer(tokens["operator"]),
        )
        assert status == 429 and int(headers["retry-after"]) >= 1
        assert body["error"].startswith("too many failed token checks from 127.0.0.1")
        # Another address is not held back.
        status, _, _ = request(
            where,
            "POST",
            "/api/bots",
            {"name": "a", "spec": "example:random"},
            bearer(tokens["operator"]),
            source="127.0.0.2",
        )
        assert status == 201


def test_control_without_the_limit_guessing_goes_on(
    ladder: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ladder_app, "FAILED_TOKENS_PER_CLIENT", "100000/minute")
    folder, _ = ladder
    with ladder_web(folder) as where:
        statuses = {
            request(where, "POST", "/api/bots", {"name": "a"}, bearer("guess" * 4))[0]
            for _ in range(15)
        }
        assert statuses == {401}


def register(where: tuple[str, int], token: str, name: str, source: str = "127.0.0.1") -> Answer:
    return request(where, "POST", "/api/remote-bots", {"name": name}, bearer(token), source=source)


def test_registrations_are_rate_limited_per_address(ladder: tuple[Path, dict[str, str]]) -> None:
    folder, tokens = ladder
    with ladder_web(folder) as where:
        statuses = [register(where, tokens["ladder"], f"r{i}")[0] for i in range(11)]
        assert statuses == [201] * 10 + [429]
        status, body, headers = register(where, tokens["ladder"], "r99")
        assert status == 429 and int(headers["retry-after"]) > 60
        assert body["error"].startswith("too many registrations from 127.0.0.1 (at most 10 per")
        assert register(where, tokens["ladder"], "other", source="127.0.0.3")[0] == 201
    store = LadderStore.open(folder)
    assert len(roster.bots(store)) == 11


def test_control_without_the_limit_a_loop_registers_on(
    ladder: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ladder_app, "REGISTRATIONS_PER_CLIENT", "100000/hour")
    folder, tokens = ladder
    with ladder_web(folder) as where:
        assert {register(where, tokens["ladder"], f"r{i}")[0] for i in range(15)} == {201}


LOOK_ALIKES = ("Chatty", "chatty.", "chat-ty", "CHAT_TY")


def test_look_alike_names_are_refused_naming_the_bot(ladder: tuple[Path, dict[str, str]]) -> None:
    folder, tokens = ladder
    with ladder_web(folder) as where:
        assert register(where, tokens["ladder"], "chatty")[0] == 201
        for name in LOOK_ALIKES:
            status, body, _ = register(where, tokens["ladder"], name)
            assert (status, body) == (
                400,
                {
                    "error": f"bot name {name!r} is too like 'chatty', on the ladder already: "
                    "names are compared without case and without '_', '.' or '-'"
                },
            )
        add = {"name": "Chatty.", "spec": "example:random"}
        status, body, _ = request(where, "POST", "/api/bots", add, bearer(tokens["operator"]))
        assert status == 400 and "'chatty'" in body["error"]
    store = LadderStore.open(folder)  # the operator's `ladder add` goes through the same check
    with pytest.raises(roster.RosterError, match="too like 'chatty'"):
        roster.add_bot(store, "cHaTtY", "example:random")


def test_control_without_folding_the_look_alikes_join(
    ladder: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(roster, "folded", lambda name: name)
    folder, tokens = ladder
    with ladder_web(folder) as where:
        statuses = [register(where, tokens["ladder"], n)[0] for n in ("chatty", *LOOK_ALIKES)]
        assert statuses == [201] * 5


# --- Host ------------------------------------------------------------------------------------


@contextmanager
def referee_web(tournament: Path) -> Iterator[tuple[str, int]]:
    """`arena web DIR --as referee` on 127.0.0.1: every seat's hand, for the organiser."""
    server = BackgroundServer(*prepare(tournament, "127.0.0.1", 0, Access.REFEREE, 16))
    try:
        yield split_address(server.address.removeprefix("http://").rstrip("/"))
    finally:
        server.stop()


def a_seat_hand(where: tuple[str, int], host: str) -> Answer:
    status, body, headers = request(where, "GET", "/api/matches", headers={"Host": host})
    if status != 200:
        return status, body, headers
    match_id = body["matches"][0]["match_id"]
    path = f"/api/matches/{match_id}/replay?as=0"
    return request(where, "GET", path, headers={"Host": host})


def test_a_rebinding_host_is_refused(tournament: Path, ladder: tuple[Path, dict[str, str]]) -> None:
    with referee_web(tournament) as where:
        for host in (
            "127.0.0.1",
            f"127.0.0.1:{where[1]}",
            "localhost",
            f"localhost:{where[1]}",
            "[::1]:80",
        ):
            assert a_seat_hand(where, host)[0] == 200, host
        for host in (
            "attacker.example",
            f"attacker.example:{where[1]}",
            "127.0.0.1.nip.io",
            "10.0.0.1",
        ):
            status, body, _ = a_seat_hand(where, host)
            assert (
                status == 400
                and "this server answers to 127.0.0.1, ::1, localhost" in body["error"]
            )
        assert request(where, "GET", "/", headers={"Host": "attacker.example"})[0] == 400
    folder, _ = ladder
    with ladder_web(folder) as where:
        status, body, _ = request(where, "GET", "/api/ladder", headers={"Host": "attacker.example"})
        assert status == 400 and body["error"].startswith("Host 'attacker.example'")


def test_control_without_the_host_check_a_rebinding_page_reads_a_hand(
    tournament: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(HostNames, "allows", lambda self, header: True)
    with referee_web(tournament) as where:
        status, body, _ = a_seat_hand(where, "attacker.example")
        assert status == 200 and body["viewer"] == "0"


def test_configured_names_and_addresses_on_a_public_bind() -> None:
    names = HostNames("0.0.0.0", ["ladder.example.org"])
    assert names.allows("ladder.example.org:443") and names.allows("192.0.2.7:8061")
    assert names.allows("[2001:db8::1]:80") and names.allows("LOCALHOST")
    assert not names.allows("attacker.example") and not names.allows(None)
    loopback = HostNames("127.0.0.1")
    assert not loopback.allows("192.0.2.7") and not loopback.allows("localhost:x")


def test_named_hosts_are_answered_by_arena_web_and_the_ladder(
    tournament: Path, ladder: tuple[Path, dict[str, str]]
) -> None:
    from tests.tournaments.web.harness import web_server

    with web_server(tournament, "--host-name", "cards.example") as url:
        where = split_address(url.removeprefix("http://"))
        assert request(where, "GET", "/api/tournament", headers={"Host": "cards.example"})[0] == 200
        assert request(where, "GET", "/api/tournament", headers={"Host": "other.example"})[0] == 400
    server = serve_ladder(ladder[0], "127.0.0.1:0", host_names=["ladder.example.org"])
    try:
        where = split_address(server.address.removeprefix("http://").rstrip("/"))
        host = {"Host": "ladder.example.org:8061"}
        assert request(where, "GET", "/api/ladder", headers=host)[0] == 200
    finally:
        server.stop()
