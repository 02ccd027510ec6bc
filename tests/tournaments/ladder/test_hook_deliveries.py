"""Webhooks through a real `arena ladder serve`, real receivers on 127.0.0.1 and the real CLI and
HTTP API: each event arrives once at the operator's hook and at its bot's author's, signed
with the secret set printed once (a wrong secret fails the check); an author's hook gets only
their own bots' events (control: the operator's gets all); a receiver that is down gets the
event once it is back; an author's hook at 127.0.0.1 is refused by default (control: the same
URL allowed with [webhooks] allow_private, in the first test)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.tournaments.ladder.contest_kit import audit, call, new_author, sql
from tests.tournaments.ladder.hook_receiver import Received, Receiver, free_port, receiving
from tests.tournaments.ladder.upload_kit import CRASHING_BOT, packed, python_bot, upload
from tests.tournaments.web.harness import ARENA, arena
from tests.tournaments.web.ladder_harness import make_ladder, serving, set_in_table

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="the ladder's bots run in bwrap"),
]
FAST = {"backoff_s": 0.2, "backoff_max_s": 0.5, "timeout_s": 3}
PAYLOAD_KEYS = {"event", "at", "bot", "version", "by", "reason", "cause", "match_id", "release"}


def operator_hook(folder: Path, url: str) -> str:
    """`arena ladder webhook DIR set URL`: its secret, printed once."""
    done = arena("ladder", "webhook", folder, "set", url)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[-1]


def author_hook_by_cli(base: str, token: str, url: str) -> str:
    env = dict(os.environ, ARENA_AUTHOR_TOKEN=token)
    done = subprocess.run(
        [*ARENA, "author", "webhook", "set", base, url],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[-1]


def signed_once(receiver: Receiver, secret: str) -> list[Received]:
    """Every delivery signed with the secret (not with another), each delivered once, and
    nothing in its body beyond what an event says."""
    got = list(receiver.got)
    for r in got:
        assert r.content_type == "application/json"
        assert r.signed_with(secret) and not r.signed_with(secret + "x"), r
        assert r.payload["event"] == r.event and set(r.payload) <= PAYLOAD_KEYS, r.payload
    ids = [r.delivery for r in got]
    assert len(ids) == len(set(ids)), ids
    return got


def by_event(got: list[Received]) -> dict[str, list[dict[str, object]]]:
    found: dict[str, list[dict[str, object]]] = {}
    for r in got:
        found.setdefault(r.event, []).append(r.payload)
    return found


def test_each_event_reaches_the_operator_and_its_authors_hook_once_signed(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ladder"
    folder.mkdir()
    make_ladder(folder, {"house-first": "example:first"}, window=2, max_failures=2)
    toml = folder / "ladder.toml"
    set_in_table(toml, "webhooks", {"allow_private": True, **FAST})
    set_in_table(toml, "authors", {"bots_per_author": 3})
    set_in_table(toml, "submissions", {"validation_games": 1})
    alice, bob = new_author(folder, "alice"), new_author(folder, "bob")
    with receiving() as ops, receiving() as alices, receiving() as bobs, serving(folder) as served:
        ops_secret = operator_hook(folder, ops.url)
        alice_secret = author_hook_by_cli(served.url, alice, alices.url)
        status, answer = call(f"{served.url}/api/me/webhook", bob, {"url": bobs.url}, "PUT")
        assert status == 200, answer
        bob_secret = answer["secret"]
        assert len({ops_secret, alice_secret, bob_secret}) == 3
        # Alice's crasher forfeits (first forfeit) until serve pauses it; bob's bot plays on.
        for name, spec, who in (
            ("crasher", "cmd:/bin/false", "alice"),
            ("steady", "example:first", "bob"),
        ):
            added = arena("ladder", "add", folder, "--name", name, "--spec", spec, "--author", who)
            assert added.returncode == 0, added.stderr
        # Alice uploads one bot that goes live and one that crashes in validation.
        for name, source in (("plain", None), ("broken", CRASHING_BOT)):
            where = (
                python_bot(tmp_path / name)
                if source is None
                else python_bot(tmp_path / name, source)
            )
            code, body = upload(served.url, alice, name, packed(where))
            assert code == 202, body
        alices.wait_for(
            "alice's events", ["first forfeit", "bot paused", "version live", "version failed"]
        )
        arena("ladder", "pause", folder, "--name", "steady", "--why", "for the test")
        bobs.wait_for("bob's pause", ["bot paused"])
        released = arena("ladder", "release", folder, "--to", "participants")
        assert released.returncode == 0, released.stderr
        for receiver in (ops, alices, bobs):
            receiver.wait_for("the release", ["final released"])
        # What an author sees of their hook: its URL and its deliveries, never the secret.
        status, shown = call(f"{served.url}/api/me/webhook", alice)
        assert status == 200 and shown["url"] == alices.url, shown
        assert alice_secret not in json.dumps(shown) and shown["deliveries"], shown
        assert call(f"{served.url}/api/me/webhook", bob, method="DELETE")[0] == 204
        assert call(f"{served.url}/api/me/webhook", bob)[0] == 404
        served.wait_for(
            "every delivery delivered",
            lambda: (
                sql(folder, "SELECT COUNT(*) FROM deliveries WHERE state != 'delivered'") == [(0,)]
            ),
        )
    hooks_log = [
        (e["who"], e["action"], e["subject"]) for e in audit(folder) if "webhook" in e["action"]
    ]
    assert hooks_log == [
        ("operator", "webhook set", "@operator"),
        ("author alice", "webhook set", "alice"),
        ("author bob", "webhook set", "bob"),
        ("author bob", "webhook removed", "bob"),
    ]
    alice_got = by_event(signed_once(alices, alice_secret))
    bob_got = by_event(signed_once(bobs, bob_secret))
    signed_once(ops, ops_secret)
    # Once each: the crasher's first forfeit only (it forfeited in several matches).
    assert [p["version"] for p in alice_got["first forfeit"]] == ["crasher@1"]
    assert alice_got["first forfeit"][0]["cause"] in ("crash", "no_show", "protocol"), alice_got
    assert [p["version"] for p in alice_got["version live"]] == ["plain@1"]
    assert [p["version"] for p in alice_got["version failed"]] == ["broken@1"]
    paused = {(p["bot"], p["by"]) for p in alice_got["bot paused"]}
    assert ("crasher", "serve") in paused and ("steady", "operator") not in paused
    # Bob's hook: his bot's pause, the release; none of alice's bots' events.
    assert Counter(r.event for r in bobs.got) == {"bot paused": 1, "final released": 1}
    assert bob_got["bot paused"] == [
        {"event": "bot paused", "at": bob_got["bot paused"][0]["at"], "bot": "steady",
         "by": "operator", "reason": "for the test"}
    ]  # fmt: skip
    # Control: the operator's hook gets every event, alice's and bob's, once each.
    assert Counter(r.event for r in ops.got) == Counter(
        r.event for r in alices.got + bobs.got if r.event != "final released"
    ) + Counter({"final released": 1})
    # Nothing hidden: the crash's output and the forfeit's detail stay in the ladder's own rows.
    reason = sql(folder, "SELECT reason FROM versions WHERE key = 'broken@1'")[0][0]
    assert "crashing on purpose" in reason  # control: the version's own reason quotes its log
    pause = str(sql(folder, "SELECT reason FROM bots WHERE name = 'crasher'")[0][0])
    details = {
        str(detail)
        for (forfeits,) in sql(folder, "SELECT forfeits FROM matches WHERE forfeits != '[]'")
        for _, _, detail in json.loads(str(forfeits))
        if detail
    }
    assert details  # control: the matches' own records keep the forfeits' detail
    bodies = b"".join(r.body for r in ops.got + alices.got)
    assert b"crashing on purpose" not in bodies
    assert not any(d in pause or d.encode() in bodies for d in details), (pause, details)
    assert str(folder).encode() not in bodies and b"deal" not in bodies


def test_a_receiver_that_is_down_gets_the_event_when_it_is_back(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    folder.mkdir()
    make_ladder(folder, {"house-first": "example:first"})
    set_in_table(folder / "ladder.toml", "webhooks", FAST)
    alice = new_author(folder, "alice")
    port = free_port()  # nothing listens there yet
    secret = operator_hook(folder, f"http://127.0.0.1:{port}/hook")
    with serving(folder) as served:
        # An author's hook at 127.0.0.1: refused, one line; the operator's own is trusted.
        status, answer = call(f"{served.url}/api/me/webhook", alice,
                              {"url": f"http://127.0.0.1:{port}/"}, "PUT")  # fmt: skip
        assert status == 400 and "loopback address" in answer["error"], answer
        for wrong in (None, alice + "x"):  # no token, a wrong one: 401, nothing set
            hook = {"url": "https://example.org/hook"}
            assert call(f"{served.url}/api/me/webhook", wrong, hook, "PUT")[0] == 401
        assert sql(folder, "SELECT owner FROM webhooks") == [("@operator",)]
        paused = arena("ladder", "pause", folder, "--name", "house-first", "--why", "down test")
        assert paused.returncode == 0, paused.stderr
        served.wait_for(
            "two failed tries",
            lambda: sql(folder, "SELECT attempts, last_outcome FROM deliveries")[0][0] >= 2,
        )
        assert sql(folder, "SELECT state, last_outcome FROM deliveries") == [
            ("pending", "connection refused")
        ]
        with receiving(port) as receiver:
            receiver.wait_for("the event after the receiver came back", ["bot paused"])
            served.wait_for(
                "delivered", lambda: sql(folder, "SELECT state FROM deliveries") == [("delivered",)]
            )
    [got] = signed_once(receiver, secret)
    assert got.payload["reason"] == "down test" and got.payload["by"] == "operator"
    shown = arena("ladder", "webhook", folder, "deliveries", "--json")
    assert shown.returncode == 0, shown.stderr
    [delivery] = json.loads(shown.stdout)["deliveries"]
    assert delivery["state"] == "delivered" and delivery["attempts"] >= 3, delivery
    assert delivery["last_outcome"] == "HTTP 204"
    assert secret not in shown.stdout  # shown once, at set, never again
