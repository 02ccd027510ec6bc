"""Rating history, its chart and the page of a pair of bots, on a real ladder: one `arena ladder
serve` (shared by the module) plays three fast example bots over real bot processes; one bot
(alice's) gets a new version, the ladder freezes and plays on, then every bot is paused and the
ladder holds still. Each test reads it over real HTTP (and in headless Chromium) and checks it
against the SQLite file: one point per rated match with the version change marked, as many
points in the chart as in the JSON, a discard's points gone (control: the rebuild skipped, they
stay), a freeze under `hidden` or `participants` ending the series at the freeze for whoever may
not see further (control: the operator, the bot's author, and the `public` release see it all),
and a pair's W-D-L as the matches say."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser import page_errors, screenshot
from tests.tournaments.ladder.contest_kit import call, new_author, sql
from tests.tournaments.web.harness import arena
from tests.tournaments.web.ladder_harness import Served, count, serving
from tests.tournaments.web.ladder_harness import make_ladder as new_ladder
from tournaments.ladder import discards, matchmaker, rating_history
from tournaments.ladder.database import LadderStore
from tournaments.web.webserver import serve_ladder

pytestmark = pytest.mark.timeout(300)
BOT = "alice-bot"  # alice's: two versions, and rated matches on both sides of the freeze
OLD, NEW = f"{BOT}@1", f"{BOT}@2"


@dataclass(frozen=True)
class Played:
    folder: Path
    served: Served
    operator: str
    alice: str
    bob: str
    cutoff: str  # the freeze, ISO 8601 UTC


def rated(folder: Path, version: str, after: str = "") -> int:
    """Rated matches seating the version (finished after `after` when given)."""
    return count(
        folder,
        "SELECT COUNT(*) FROM matches WHERE rated IS NOT NULL AND instr(bots, ?) > 0 "
        "AND finished_at > ?",
        json.dumps(version),
        after,
    )


def ran(*args: str | Path) -> None:
    done = arena(*args)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    folder = tmp_path_factory.mktemp("history") / "ladder"
    tokens = new_ladder(folder, {"base": "example:first", "rnd": "example:random"}, concurrency=2)
    alice, bob = new_author(folder, "alice"), new_author(folder, "bob")
    ran("ladder", "add", folder, "--name", BOT, "--spec", "example:first", "--author", "alice")
    with serving(folder) as served:
        served.wait_for("rated matches of version 1", lambda: rated(folder, OLD) >= 3)
        ran("ladder", "update", folder, "--name", BOT, "--spec", "example:random", "--why", "v2")
        served.wait_for("rated matches of version 2", lambda: rated(folder, NEW) >= 3)
        ran("ladder", "freeze", folder, "--why", "the deadline")
        cutoff = str(sql(folder, "SELECT value FROM meta WHERE key = 'freeze_at'")[0][0])
        served.wait_for("rated matches after the freeze", lambda: rated(folder, NEW, cutoff) >= 2)
        for name in ("base", "rnd", BOT):
            ran("ladder", "pause", folder, "--name", name, "--reason", "the test reads")
        served.wait_for(
            "the last match to end",
            lambda: count(folder, "SELECT COUNT(*) FROM matches WHERE status = 'scheduled'") == 0,
        )
        ran("ladder", "release", folder, "--to", "public", "--why", "the tests' default")
        yield Played(folder, served, tokens["operator"], alice, bob, cutoff)


def history(url: str, name: str = BOT, token: str | None = None) -> dict[str, Any]:
    status, body = call(f"{url}/api/bots/{name}/history", token)
    assert status == 200, body
    return dict(body)


def rated_rows(folder: Path, name: str = BOT) -> list[tuple[int, str, str]]:
    """(rated, match id, finished_at) of every rated match seating a version of the bot."""
    rows = sql(
        folder,
        "SELECT rated, match_id, finished_at FROM matches WHERE rated IS NOT NULL "
        "AND instr(bots, ?) > 0 ORDER BY rated",
        f'"{name}@',
    )
    return [(int(r), str(m), str(f)) for r, m, f in rows]


def test_one_point_per_rated_match_with_the_version_change_marked(played: Played) -> None:
    body = history(played.served.url)
    points = body["points"]
    assert [(p["rated"], p["match_id"], p["finished_at"]) for p in points] == rated_rows(
        played.folder
    )
    versions = [p["version"] for p in points]
    first_new = versions.index(NEW)
    assert versions == [OLD] * first_new + [NEW] * (len(points) - first_new)
    assert [p["version_change"] for p in points] == [i == first_new for i in range(len(points))]
    assert body["changes"] == [NEW] and body["until"] is None
    assert sorted(body["opponents"]) == ["base", "rnd"]
    for key in (OLD, NEW):  # each version's last point is its rating now, on the leaderboard
        last = [p for p in points if p["version"] == key][-1]
        ((mu, sigma, matches),) = sql(
            played.folder, "SELECT mu, sigma, matches FROM versions WHERE key = ?", key
        )
        assert (last["mu"], last["sigma"]) == (mu, sigma)
        assert versions.count(key) == matches
    for p in points:
        assert p["conservative"] == pytest.approx(p["mu"] - 3 * p["sigma"])
        assert p["elo"] is not None  # two seats
    # A new version starts again: its first Elo is 1500 plus or minus one match's change.
    assert abs(points[first_new]["elo"] - rating_history.ELO_START) <= rating_history.ELO_K
    # Elo is a zero-sum exchange: each match's two seats moved by opposite amounts.
    moves = sql(
        played.folder,
        "SELECT h.rated, h.version, h.elo FROM rating_history h ORDER BY h.version, h.rated",
    )
    change: dict[int, float] = {}
    before: dict[str, float] = {}
    for number, key, elo in moves:
        change[number] = change.get(number, 0.0) + elo - before.get(key, 1500.0)
        before[key] = elo
    assert all(abs(total) < 1e-9 for total in change.values())


def test_the_chart_has_a_point_per_rated_match_and_a_mark_per_change(
    played: Played, browser: WebDriver, tmp_path: Path
) -> None:
    url = played.served.url
    body = history(url)
    browser.get(f"{url}/bots/{BOT}")
    WebDriverWait(browser, 20).until(lambda d: d.find_elements("id", "rating-chart"))
    shown: dict[str, list[str]] = browser.execute_script(
        "const chart = document.getElementById('rating-chart');"
        "return {dots: [...chart.querySelectorAll('circle[data-rated]')].map(c => c.dataset.rated),"
        " changes: [...chart.querySelectorAll('line.version-change')].map(l => l.dataset.version),"
        " pairs: [...document.querySelectorAll('#pairs a.pair')].map(a => a.pathname),"
        " external: [...document.querySelectorAll('[src], link[href]')].length};"
    )
    assert shown["dots"] == [str(p["rated"]) for p in body["points"]] and shown["dots"]
    assert shown["changes"] == body["changes"] == [NEW]
    assert shown["pairs"] == [f"/pairs/{BOT}/base", f"/pairs/{BOT}/rnd"]
    assert shown["external"] == 0  # nothing fetched from anywhere, the chart included
    # Over time: the same points, left to right in the order they finished, and the same marks.
    timeline: dict[str, list[str]] = browser.execute_script(
        "const chart = document.getElementById('rating-timeline');"
        "const dots = [...chart.querySelectorAll('circle[data-timed]')];"
        "return {axis: chart.dataset.axis, dots: dots.map(c => c.dataset.timed),"
        " xs: dots.map(c => c.getAttribute('cx')),"
        " changes: [...chart.querySelectorAll('line.version-change')].map(l => l.dataset.version)};"
    )
    assert timeline["axis"] == "time" and timeline["dots"] == shown["dots"]
    xs = [float(x) for x in timeline["xs"]]
    assert xs == sorted(xs) and xs[0] < xs[-1]
    assert timeline["changes"] == [NEW]
    assert page_errors(browser) == []
    screenshot(browser, tmp_path, "ladder-rating-chart")
    # The other bot's page links back to the pair.
    browser.get(f"{url}/bots/base")
    WebDriverWait(browser, 20).until(lambda d: d.find_elements("id", "rating-chart"))
    back: list[str] = browser.execute_script(
        "return [...document.querySelectorAll('#pairs a.pair')].map(a => a.pathname);"
    )
    assert f"/pairs/base/{BOT}" in back


def outcomes(folder: Path, name: str, against: str) -> dict[str, str]:
    """Each finished match of the two: name's result against `against` from the ranks."""
    found = {}
    for match_id, bots, ranks in sql(
        folder, "SELECT match_id, bots, ranks FROM matches WHERE status = 'finished'"
    ):
        seats = [key.rsplit("@", 1)[0] for key in json.loads(bots)]
        if name in seats and against in seats:
            mine, theirs = (json.loads(ranks)[seats.index(b)] for b in (name, against))
            found[str(match_id)] = "win" if mine < theirs else "draw" if mine == theirs else "loss"
    return found


def test_the_pair_page_agrees_with_the_matches(played: Played) -> None:
    url = played.served.url
    expected = outcomes(played.folder, BOT, "base")
    assert expected
    status, pair = call(f"{url}/api/pairs/{BOT}/base")
    assert status == 200, pair
    assert {m["match"]["match_id"]: m["outcome"] for m in pair["matches"]} == expected
    tally = [list(expected.values()).count(r) for r in ("win", "draw", "loss")]
    assert [pair["tally"][k] for k in ("wins", "draws", "losses")] == tally
    by_versions = [0, 0, 0]
    for row in pair["by_versions"]:
        assert row["version"] in (OLD, NEW) and row["against"] == "base@1"
        for i, k in enumerate(("wins", "draws", "losses")):
            by_versions[i] += row["tally"][k]
    assert by_versions == tally
    assert [pair["by_day"][-1]["total"][k] for k in ("wins", "draws", "losses")] == tally
    status, mirrored = call(f"{url}/api/pairs/base/{BOT}")
    assert status == 200 and [mirrored["tally"][k] for k in ("losses", "draws", "wins")] == tally
    status, page = call(f"{url}/pairs/{BOT}/base")
    assert status == 200 and f'data-wins="{tally[0]}" data-draws="{tally[1]}"' in page
    assert all(f'data-match="{m}"' in page for m in expected)
    assert call(f"{url}/api/pairs/{BOT}/{BOT}")[0] == 400
    assert call(f"{url}/api/pairs/{BOT}/nobody")[0] == 404


def copy_of(folder: Path, to: Path) -> Path:
    """A copy of the (quiet) ladder: its TOML, and its database through SQLite's backup."""
    to.mkdir()
    shutil.copy2(folder / "ladder.toml", to / "ladder.toml")
    with (
        sqlite3.connect(folder / "ladder.sqlite") as source,
        sqlite3.connect(to / "ladder.sqlite") as copy,
    ):
        source.backup(copy)
    return to


def served(folder: Path, path: str) -> dict[str, Any]:
    """GET path of the ladder folder's web app on a real HTTP server of its own."""
    server = serve_ladder(folder, "127.0.0.1:0")
    try:
        status, body = call(server.address.rstrip("/") + path)  # address: http://HOST:PORT/
        assert status == 200, body
        return dict(body)
    finally:
        server.stop()


def served_history(folder: Path) -> dict[str, Any]:
    return served(folder, f"/api/bots/{BOT}/history")


def test_a_discard_takes_its_points_away(
    played: Played, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = history(played.served.url)["points"][0]["match_id"]
    deal = sql(played.folder, "SELECT deal FROM matches WHERE match_id = ?", target)[0][0]
    seatings = {
        str(m) for (m,) in sql(played.folder, "SELECT match_id FROM matches WHERE deal = ?", deal)
    }

    guarded = copy_of(played.folder, tmp_path / "guarded")
    ran("ladder", "discard", guarded, target, "--why", "a bot read the deal")
    points = served_history(guarded)["points"]
    assert not {p["match_id"] for p in points} & seatings
    assert [(p["rated"], p["match_id"], p["finished_at"]) for p in points] == rated_rows(guarded)
    last = points[-1]
    ((mu, sigma),) = sql(guarded, "SELECT mu, sigma FROM versions WHERE key = ?", last["version"])
    assert (last["mu"], last["sigma"]) == (mu, sigma)  # the series is the recomputed ratings'
    # The pair's page marks it discarded and counts it nowhere; before the discard it counted.
    seats = json.loads(sql(guarded, "SELECT bots FROM matches WHERE match_id = ?", target)[0][0])
    other = next(key.rsplit("@", 1)[0] for key in seats if not key.startswith(f"{BOT}@"))
    before = call(f"{played.served.url}/api/pairs/{BOT}/{other}")[1]
    after = served(guarded, f"/api/pairs/{BOT}/{other}")
    counted = {m["match"]["match_id"]: m for m in before["matches"]}[target]
    marked = {m["match"]["match_id"]: m for m in after["matches"]}[target]
    assert counted["outcome"] is not None and marked["outcome"] is None
    assert marked["match"]["held"] == discards.BY_OPERATOR
    assert sum(after["tally"].values()) == sum(before["tally"].values()) - len(
        [m for m in before["matches"] if m["match"]["match_id"] in seatings]
    )

    # Control: the same discard with the series not written again: the points stay.
    control = copy_of(played.folder, tmp_path / "control")
    monkeypatch.setattr(rating_history, "rewrite", lambda db, matches: None)
    store = LadderStore.open(control)
    try:
        discards.discard_deal(store, target, "a bot read the deal", False, matchmaker.rate)
    finally:
        store.close()
    assert target in {p["match_id"] for p in served_history(control)["points"]}


def test_a_freeze_not_released_ends_the_series_for_whoever_may_not_see_on(
    played: Played,
) -> None:
    url, folder = played.served.url, played.folder
    everything = history(url, token=played.operator)["points"]
    later = [p for p in everything if p["finished_at"] > played.cutoff]
    assert later, "no rated match after the freeze: nothing to hide"
    first_after = count(
        folder,
        "SELECT MIN(rated) FROM matches WHERE rated IS NOT NULL AND finished_at > ?",
        played.cutoff,
    )
    try:
        for release in ("hidden", "participants"):
            ran("ladder", "release", folder, "--to", release, "--why", f"test {release}")
            seen = history(url)
            assert seen["until"] == played.cutoff
            assert seen["points"] == [p for p in everything if p["rated"] < first_after]
            assert all(p["finished_at"] <= played.cutoff for p in seen["points"])
            assert history(url, token=played.bob)["points"] == seen["points"]  # not his bot
            assert history(url, token=played.operator)["points"] == everything
            alice = history(url, token=played.alice)["points"]
            assert alice == (everything if release == "participants" else seen["points"])
            page = call(f"{url}/bots/{BOT}")[1]
            assert page.count("<circle data-rated=") == len(seen["points"])
            pair = call(f"{url}/api/pairs/{BOT}/base")[1]
            assert all(m["match"]["finished_at"] <= played.cutoff for m in pair["matches"])
        assert call(f"{url}/api/bots/{BOT}/history", "not-a-token")[0] == 401
    finally:
        ran("ladder", "release", folder, "--to", "public", "--why", "the tests' default")
    assert history(url)["points"] == everything  # the control: public shows it all
    page = call(f"{url}/bots/{BOT}")[1]
    assert page.count("<circle data-rated=") == len(everything)
