"""Challenges on a real `arena ladder serve` with real bots, asked and read over real HTTP:
alice's bot challenges bob's while rated play goes on. The challenge plays its games unrated
(every rating and match count is what the rated matches alone make it; the control: the same
challenge matches rated move them), on deals no rated match has, each in both seatings; rated
matches still start while it runs; its limits refuse the next one with a line naming the limit
(the control: one up to the limit is taken); bob, carol and a visitor cannot see it (the
control: alice and the operator can); the operator stops one (audited); the freeze stops the
open one and refuses the next."""

from __future__ import annotations

import functools
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.tournaments.ladder.contest_kit import call, new_author, sql
from tests.tournaments.web.harness import BOTS, arena
from tests.tournaments.web.ladder_harness import WAIT_S, make_ladder, serving, set_in_table
from tournaments.ladder import challenges, roster
from tournaments.ladder.challenge_turns import ChallengeTurns
from tournaments.ladder.config_file import load_ladder
from tournaments.ladder.database import HOUSE, MU, SIGMA, LadderStore
from tournaments.ladder.matchmaker import rate
from tournaments.read_models.ladder_reads import HELD_DEAL, HELD_PLAYING

Ratings = dict[str, tuple[float, float, int]]


def once(url: str, token: str, body: object) -> tuple[int, Any]:
    """(status, JSON body) of one POST: a 429 is the answer, not waited out (contest_kit's
    call waits out the per-address limit's)."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def quiet(folder: Path, table: str) -> bool:
    return sql(folder, f"SELECT COUNT(*) FROM {table} WHERE status = 'scheduled'") == [(0,)]


def ratings_from(rows: list[tuple[str, str]]) -> Ratings:
    """Each version's (mu, sigma, matches) after rating these (bots, ranks) in order."""
    found: Ratings = {}
    for bots, ranks in rows:
        keys = json.loads(bots)
        before = [found.get(k, (MU, SIGMA, 0))[:2] for k in keys]
        after = rate(before, tuple(json.loads(ranks)))
        for key, (mu, sigma) in zip(keys, after, strict=True):
            found[key] = (mu, sigma, found.get(key, (MU, SIGMA, 0))[2] + 1)
    return found


def stored(folder: Path) -> Ratings:
    rows = sql(folder, "SELECT key, mu, sigma, matches FROM versions WHERE matches > 0")
    return {k: (mu, sigma, n) for k, mu, sigma, n in rows}


def same(a: Ratings, b: Ratings) -> bool:
    return a.keys() == b.keys() and all(
        abs(a[k][0] - b[k][0]) < 1e-9 and abs(a[k][1] - b[k][1]) < 1e-9 and a[k][2] == b[k][2]
        for k in a
    )


def wait_status(served: Any, url: str, token: str, number: int, *statuses: str) -> Any:
    found: dict[str, Any] = {}

    def reached() -> bool:
        nonlocal found
        status, found = call(f"{url}/api/challenges/{number}", token)
        assert status == 200, found
        return bool(found["challenge"]["status"] in statuses)

    served.wait_for(f"challenge {number} {'/'.join(statuses)}", reached, WAIT_S * 2)
    return found


@pytest.mark.timeout(600)
def test_a_challenge_plays_unrated_for_its_author_alone_within_its_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "ladder"
    gate = tmp_path / "gate"
    monkeypatch.setenv("ARENA_SLEEPY_GATE", str(gate))
    tokens = make_ladder(folder, {}, concurrency=2, tier="none", decision_ms=120000)
    set_in_table(
        folder / "ladder.toml", "challenges", {"games_per_hour": 60, "games_per_challenge": 20}
    )
    alice, bob, carol = (new_author(folder, n) for n in ("alice", "bob", "carol"))
    operator = tokens["operator"]
    for name, spec, who in (("alice-first", "example:first", "alice"),
                            ("bob-random", "example:random", "bob")):  # fmt: skip
        added = arena("ladder", "add", folder, "--name", name, "--spec", spec, "--author", who)
        assert added.returncode == 0, added.stderr
    with serving(folder) as served:
        url = served.url
        ask = {"bot": "alice-first", "opponents": ["bob-random"], "games": 20}
        # One line for each thing wrong, nothing recorded.
        for body, words in (
            ({**ask, "bot": "bob-random"}, "no live bot of yours"),
            ({**ask, "opponents": ["nobody"]}, "'nobody' is no active bot"),
            ({**ask, "opponents": ["alice-first"]}, "cannot challenge itself"),
            ({**ask, "games": 21}, "games must be 1 to 20"),
            ({**ask, "pool": "top:1"}, "not both"),
        ):
            status, said = call(f"{url}/api/challenges", alice, body)
            assert status == 400 and words in said["error"] and "\n" not in said["error"], said
        assert sql(folder, "SELECT COUNT(*) FROM challenges") == [(0,)]

        status, made = call(f"{url}/api/challenges", alice, ask)
        assert status == 201 and made["id"] == 1 and made["version"] == "alice-first@1", made
        done = wait_status(served, url, alice, 1, "done")
        assert done["challenge"]["finished"] == 20
        c = done["challenge"]
        assert c["wins"] + c["draws"] + c["losses"] == 20

        # Rated matches went on while it played: they finished between its ask and its end.
        (asked_at, done_at) = sql(folder, "SELECT asked_at, done_at FROM challenges")[0]
        [(beside,)] = sql(
            folder,
            "SELECT COUNT(*) FROM matches WHERE status = 'finished' "
            "AND finished_at BETWEEN ? AND ?",
            asked_at,
            done_at,
        )
        assert beside >= 2, (asked_at, done_at, beside)

        # Only alice and the operator see it; bob (challenged), carol and a visitor get the
        # answer of a challenge that does not exist.
        _, nothing = call(f"{url}/api/challenges/999", carol)
        for token in (bob, carol):
            status, said = call(f"{url}/api/challenges/1", token)
            assert status == 404 and said["error"] == nothing["error"].replace("999", "1")
            status, said = call(f"{url}/api/challenges/1/matches/c1-g0/view", token)
            assert status == 404, said
            assert call(f"{url}/api/challenges", token)[1] == {"challenges": []}
        assert call(f"{url}/api/challenges/1", None)[0] == call(f"{url}/api/challenges/999")[0]
        assert call(f"{url}/api/challenges/1", alice)[0] == 200  # the control
        assert [x["id"] for x in call(f"{url}/api/challenges", operator)[1]["challenges"]] == [1]
        # Alice's seat view of a challenge match, as of a rated one.
        seat = done["matches"][0]["mine"][0]
        status, view = call(f"{url}/api/challenges/1/matches/c1-g0/view", alice)
        assert status == 200 and view["viewpoints"] == [str(seat)], view
        # Nothing public shows it.
        for path in ("/api/matches?limit=1000", "/api/leaderboard", "/api/bots/alice-first", "/"):
            status, page = call(f"{url}{path}")
            assert status == 200 and "c1-" not in json.dumps(page), path
        assert call(f"{url}/api/matches/c1-g0/replay")[0] == 404

        # From here the challenges play a house bot that thinks until the gate opens: each
        # is still open when the operator, or the freeze, stops it.
        sleepy = str(BOTS / "sleepy_bot.py")  # its gate: serve's environment, which it inherits
        added = arena("ladder", "add", folder, "--name", "house-sleepy", "--spec", sleepy)
        assert added.returncode == 0, added.stderr
        slow = {**ask, "opponents": ["house-sleepy"]}
        # The limits: 20 + 20 + 18 = 58 of 60 an hour taken (the control), 4 more refused.
        status, second = call(f"{url}/api/challenges", alice, {**slow, "games": 20})
        assert status == 201, second
        stopped = arena("ladder", "challenges", folder, "--stop", "2", "--why", "a test")
        assert stopped.returncode == 0 and "stopped by the operator: a test" in stopped.stdout
        token_file = tmp_path / "alice.token"
        token_file.write_text(alice + "\n")
        by_cli = ("author", "challenge", url, "alice-first", "--against", "house-sleepy")
        third = arena(*by_cli, "--games", "18", "--token-file", token_file)
        assert third.returncode == 0 and third.stdout.startswith("challenge 3: "), third.stderr
        status, said = once(f"{url}/api/challenges", alice, {**slow, "games": 4})
        assert status == 429 and "[challenges] games_per_hour = 60" in said["error"], said
        assert "allowed from " in said["error"] and "\n" not in said["error"]
        refused = arena(*by_cli, "--games", "4", "--token-file", token_file)
        assert refused.returncode == 2, refused.stdout
        assert refused.stderr.startswith("error: the ladder refused it (429): [challenges]")
        listed = arena("author", "challenges", url, "1", "--token-file", token_file)
        assert listed.returncode == 0 and "c1-g19" in listed.stdout, listed.stderr
        # The freeze stops the open challenge, and refuses the next.
        assert arena("ladder", "freeze", folder, "--why", "the end").returncode == 0
        ended = wait_status(served, url, alice, 3, "stopped")
        assert ended["challenge"]["reason"].startswith("the ladder froze at ")
        status, said = call(f"{url}/api/challenges", alice, {**ask, "games": 2})
        assert status == 403 and "asking for a challenge is closed" in said["error"], said
        for name in ("alice-first", "bob-random", "house-sleepy"):
            assert arena("ladder", "pause", folder, "--name", name).returncode == 0
        gate.touch()
        for table in ("challenge_matches", "matches"):
            served.wait_for(f"no {table} to play", functools.partial(quiet, folder, table))
        board = {r["bot"]: r for r in call(f"{url}/api/leaderboard")[1]}

    # Unrated: every rating and match count is what the rated matches alone make it, as the
    # leaderboard showed; the control: with the challenge's matches rated too, they move.
    rated = sql(folder, "SELECT bots, ranks FROM matches WHERE rated IS NOT NULL ORDER BY rated")
    assert same(stored(folder), ratings_from(rated))
    challenge_rows = sql(
        folder, "SELECT bots, ranks FROM challenge_matches WHERE status = 'finished' ORDER BY seq"
    )
    assert not same(stored(folder), ratings_from(rated + challenge_rows))
    for name, row in board.items():  # the leaderboard shows the ratings the rated ones made
        expected = stored(folder).get(f"{name}@1", (MU, SIGMA, 0))[:2]
        assert (row["mu"], row["sigma"]) == pytest.approx(expected)
    listed = arena("ladder", "challenges", folder, "--json")
    assert [(c["id"], c["status"]) for c in json.loads(listed.stdout)["challenges"]] == [
        (3, "stopped"),
        (2, "stopped"),
        (1, "done"),
    ]
    assert sql(folder, "SELECT COUNT(*) FROM matches WHERE match_id LIKE 'c%'") == [(0,)]
    # Deals of their own, each played in both seatings; seat times kept.
    rated_deals = {d for (d,) in sql(folder, "SELECT deal FROM matches")}
    seatings: dict[str, list[list[str]]] = {}
    for deal, bots in sql(folder, "SELECT deal, bots FROM challenge_matches WHERE challenge = 1"):
        seatings.setdefault(deal, []).append(json.loads(bots))
    assert len(seatings) == 10 and not set(seatings) & rated_deals
    assert all(sorted(map(tuple, s)) == [("alice-first@1", "bob-random@1"),
                                         ("bob-random@1", "alice-first@1")]
               for s in seatings.values())  # fmt: skip
    [(timed,)] = sql(folder, "SELECT COUNT(*) FROM seat_times WHERE match_id LIKE 'c1-%'")
    assert timed == 20
    actions = [a for (a,) in sql(folder, "SELECT action FROM audit WHERE action LIKE 'chall%'")]
    assert actions == ["challenge asked", "challenge asked", "challenge stopped",
                       "challenge asked"]  # fmt: skip


def finished_between(folder: Path, number: int) -> int:
    """Rated matches that finished after the challenge's first match and before its last, in
    the order serve's log says they finished (the database keeps whole seconds): at one slot,
    each of them started while the challenge had matches left to play."""
    order = []
    for line in (folder / "ladder.log").read_text().splitlines():
        said = json.loads(line) if line.startswith("{") else {}
        if said.get("event") == "match_finished":
            order.append(str(said["match_id"]))
    mine = [i for i, m in enumerate(order) if m.startswith(f"c{number}-")]
    return sum(1 for m in order[mine[0] : mine[-1]] if m.startswith("t"))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("share", [0.5, 1.0])
def test_at_concurrency_one_challenges_take_turns_with_rated_play(
    tmp_path: Path, share: float
) -> None:
    """At one slot and the default share, a big challenge and rated play alternate: rated
    matches go on finishing while it plays. The control, share 1 (no guard): the challenge
    takes the slot from its first match to its last, and no rated match finishes between."""
    folder = tmp_path / "ladder"
    make_ladder(folder, {}, concurrency=1)
    set_in_table(folder / "ladder.toml", "challenges", {"share": share})
    alice = new_author(folder, "alice")
    new_author(folder, "bob")
    for name, spec, who in (("alice-first", "example:first", "alice"),
                            ("bob-random", "example:random", "bob")):  # fmt: skip
        added = arena("ladder", "add", folder, "--name", name, "--spec", spec, "--author", who)
        assert added.returncode == 0, added.stderr
    with serving(folder) as served:
        served.wait_for("a rated match", lambda: sql(folder, FINISHED) != [(0,)])
        ask = {"bot": "alice-first", "opponents": ["bob-random"], "games": 10}
        status, made = call(f"{served.url}/api/challenges", alice, ask)
        assert status == 201, made
        wait_status(served, served.url, alice, made["id"], "done")
    between = finished_between(folder, made["id"])
    if share < 1:
        assert between >= 3, between
    else:
        assert between == 0, between


FINISHED = "SELECT COUNT(*) FROM matches WHERE status = 'finished'"


def test_a_pause_stops_a_challenge_and_its_author_is_told(tmp_path: Path) -> None:
    """No serve: the tick's check alone. Before the pause it stops nothing (the control);
    after it, the challenge is stopped with the reason, its matches dropped, and alice's
    webhook gets "challenge done" with the summary and nothing of a deal."""
    folder = tmp_path / "ladder"
    make_ladder(folder, {})
    for name in ("alice", "bob", "carol"):
        new_author(folder, name)
    for name, spec, who in (("alice-first", "example:first", "alice"),
                            ("bob-random", "example:random", "bob")):  # fmt: skip
        added = arena("ladder", "add", folder, "--name", name, "--spec", spec, "--author", who)
        assert added.returncode == 0, added.stderr
    config = load_ladder(folder)
    store = LadderStore.open(folder)
    try:
        with store.write() as db:
            db.execute("INSERT INTO webhooks VALUES ('alice', 'http://127.0.0.1:9/', 'k', 'now')")
        # Remote bots neither are challenged nor challenge (the control: bob-random is).
        roster.add_bot(store, "house-far", None, True, HOUSE, 1)
        roster.add_bot(store, "carol-far", None, True, "carol", 1)
        for who, bot, against, words in (
            ("alice", "alice-first", "house-far", "remote bots are never challenged"),
            ("carol", "carol-far", "bob-random", "'carol-far' is no live bot of yours"),
        ):
            with pytest.raises(challenges.ChallengeRefused, match=words):
                challenges.ask(store, config, who, bot, challenges.Opponents((against,)), 4)
        made = challenges.ask(
            store, config, "alice", "alice-first", challenges.Opponents(("bob-random",)), 4
        )
        assert challenges.stop_due(store, config) == []
        paused = arena("ladder", "pause", folder, "--name", "bob-random", "--why", "a test")
        assert paused.returncode == 0, paused.stderr
        assert challenges.stop_due(store, config) == [made.id]
        ended = challenges.one(store, made.id)
        assert ended is not None and ended.status == "stopped"
        assert ended.reason == "bob-random was paused: a test"
        assert challenges.next_job(store, set()) is None
    finally:
        store.close()
    [(event, body)] = sql(folder, "SELECT event, body FROM deliveries WHERE owner = 'alice'")
    told = json.loads(body)
    assert event == "challenge done" and told["status"] == "stopped"
    assert (told["wins"], told["draws"], told["losses"]) == (0, 0, 0)
    assert "-d0" not in body and "-g0" not in body


def test_challenges_take_at_most_their_share_of_the_slots() -> None:
    """At four slots and half of them: two challenge matches at once, never three; at one
    slot, turns (one challenge match, then a rated one); share 0: none."""
    turns = ChallengeTurns(0.5, 4)
    assert turns.may_start(0) and turns.may_start(1) and not turns.may_start(2)
    one = ChallengeTurns(0.5, 1)
    assert one.may_start(0)
    one.started(challenge=True)
    assert not one.may_start(0)
    one.started(challenge=False)
    assert one.may_start(0) and not one.may_start(1)
    assert not ChallengeTurns(0.0, 8).may_start(0)
    assert ChallengeTurns(1.0, 1).may_start(0)  # the operator's choice: every slot


@pytest.mark.timeout(300)
def test_a_challenge_match_opens_to_its_author_once_its_deal_has_ended(tmp_path: Path) -> None:
    """Bob's bot holds c1-g1, the second seating of c1-d0, at its first decision: while it
    does, alice's c1-g0 shows no rank, no reason and no W-D-L, and its view and replay are a
    409; once the gate opens, they are hers (the control)."""
    gate = tmp_path / "gate"
    folder = tmp_path / "ladder"
    gated = f"cmd:{sys.executable} {BOTS / 'gated_bot.py'} {gate} c1-g1"
    make_ladder(folder, {}, concurrency=2, decision_ms=120000, tier="none")
    alice = new_author(folder, "alice")
    new_author(folder, "bob")
    for name, spec, who in (("alice-first", "example:first", "alice"),
                            ("bob-gated", gated, "bob")):  # fmt: skip
        added = arena("ladder", "add", folder, "--name", name, "--spec", spec, "--author", who)
        assert added.returncode == 0, added.stderr
    with serving(folder) as served:
        url = served.url
        ask = {"bot": "alice-first", "opponents": ["bob-gated"], "games": 2}
        try:
            assert call(f"{url}/api/challenges", alice, ask)[0] == 201
            finished = "SELECT COUNT(*) FROM challenge_matches WHERE status = 'finished'"
            served.wait_for("c1-g0 to end", lambda: sql(folder, finished) == [(1,)])
            status, seen = call(f"{url}/api/challenges/1", alice)
            first = next(m for m in seen["matches"] if m["match_id"] == "c1-g0")
            assert first["held"] == HELD_DEAL and first["reason"] is None
            assert all(s["rank"] is None for s in first["seats"])
            assert (seen["challenge"]["wins"], seen["challenge"]["losses"]) == (0, 0)
            for route in ("view", "replay"):
                for match_id, why in (("c1-g0", HELD_DEAL), ("c1-g1", HELD_PLAYING)):
                    path = f"{url}/api/challenges/1/matches/{match_id}/{route}"
                    status, said = call(path, alice)
                    assert status == 409 and why in said["error"], (path, said)
        finally:
            gate.touch()
        wait_status(served, url, alice, 1, "done")
        status, seen = call(f"{url}/api/challenges/1", alice)
        assert all(s["rank"] is not None for m in seen["matches"] for s in m["seats"])
        for route in ("view", "replay"):
            assert call(f"{url}/api/challenges/1/matches/c1-g0/{route}", alice)[0] == 200


@pytest.mark.timeout(240)
def test_the_me_page_lists_the_challengers_challenges_alone(
    browser: WebDriver, tmp_path: Path
) -> None:
    """Headless Chromium on /me: alice's token shows her challenge with its W-D-L and status;
    bob's (whose bot she challenged) shows none (the control of the same table, filled)."""
    folder = tmp_path / "ladder"
    make_ladder(folder, {}, concurrency=2)
    alice = new_author(folder, "alice")
    bob = new_author(folder, "bob")
    for name, spec, who in (("alice-first", "example:first", "alice"),
                            ("bob-random", "example:random", "bob")):  # fmt: skip
        added = arena("ladder", "add", folder, "--name", name, "--spec", spec, "--author", who)
        assert added.returncode == 0, added.stderr
    with serving(folder) as served:
        url = served.url
        ask = {"bot": "alice-first", "opponents": ["bob-random"], "games": 2}
        assert call(f"{url}/api/challenges", alice, ask)[0] == 201
        done = wait_status(served, url, alice, 1, "done")["challenge"]
        shown = []
        for token in (alice, bob):
            browser.get(url + "/me")
            browser.execute_script("sessionStorage.clear();")
            browser.find_element(By.ID, "token").send_keys(token)
            browser.find_element(By.ID, "token-use").click()
            WebDriverWait(browser, 20).until(
                lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-loaded")
            )
            rows = browser.find_elements(By.CSS_SELECTOR, "#my-challenges tbody tr")
            shown.append([[c.text for c in r.find_elements(By.TAG_NAME, "td")] for r in rows])
    wdl = f"{done['wins']}-{done['draws']}-{done['losses']}"
    assert shown == [[["1", "alice-first@1", "bob-random@1", "2", "2", wdl, "done", "matches"]], []]


@pytest.mark.timeout(300)
def test_a_challenge_cut_by_a_stop_plays_its_deals_again_at_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Serve stops while a challenge match is held in flight (its opponent thinks until the
    gate opens): at the next start what was left is discarded and played again under a new id
    with the same deal and seats, and every deal ends with both seatings finished."""
    folder = tmp_path / "ladder"
    gate = tmp_path / "gate"
    monkeypatch.setenv("ARENA_SLEEPY_GATE", str(gate))
    make_ladder(folder, {}, concurrency=2, tier="none", decision_ms=120000)
    alice = new_author(folder, "alice")
    for name, spec, who in (("alice-first", "example:first", "alice"),
                            ("house-sleepy", str(BOTS / "sleepy_bot.py"), HOUSE)):  # fmt: skip
        added = arena("ladder", "add", folder, "--name", name, "--spec", spec, "--author", who)
        assert added.returncode == 0, added.stderr
    ask = {"bot": "alice-first", "opponents": ["house-sleepy"], "games": 4}
    with serving(folder) as served:
        assert call(f"{served.url}/api/challenges", alice, ask)[0] == 201
        # Its first match starts at the next tick (the challenge slot is free) and is held.
        served.wait_for(
            "a rated table", lambda: sql(folder, "SELECT COUNT(*) FROM matches") != [(0,)]
        )
        time.sleep(2)
    gate.touch()
    (folder / "serve.out").unlink()  # the harness reads the first address the file names
    with serving(folder) as served:
        wait_status(served, served.url, alice, 1, "done")
    rows = sql(folder, "SELECT match_id, deal, bots, status FROM challenge_matches")
    assert ("c1-g0", "c1-d0") in {(m, d) for m, d, _, status in rows if status == "discarded"}
    again = [m for m, _, _, status in rows if status == "finished" and "~" in m]
    assert "c1-g0~1" in again, rows
    seatings: dict[str, set[str]] = {}
    for _, deal, bots, status in rows:
        if status == "finished":
            seatings.setdefault(deal, set()).add(bots)
    assert {d: len(s) for d, s in seatings.items()} == {"c1-d0": 2, "c1-d1": 2}
