"""The bracket on the tournament page, in headless Chromium: a real `arena web` app on
127.0.0.1 (in this process, so its read model's standings can carry a bracket built by hand:
the knockout formats fill it, tournaments/schedule.py). The boxes, their seeds, bots and
points, who went through, the lines from a table to the one it feeds, the champion; and a
table still playing shows no points, beside the same table decided, which does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser import page_errors
from tests.tournaments.bracket_script import scripted_bots
from tests.tournaments.web.hand_brackets import PLAYING_POINTS, double_elimination, knockout
from tests.tournaments.web.harness import arena, web_server
from tournaments.bracket_models import BracketView, TableStatus
from tournaments.read_models.tournament_reads import Snapshot, TournamentFolder
from tournaments.standings import StandingsReport
from tournaments.web.access import Access
from tournaments.web.webserver import BackgroundServer, prepare


@contextmanager
def served_with(
    folder: Path, bracket: BracketView, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The tournament's page, its standings carrying bracket."""
    read = TournamentFolder.standings

    def with_bracket(self: TournamentFolder, snap: Snapshot | None = None) -> StandingsReport:
        return read(self, snap).model_copy(update={"bracket": bracket})

    monkeypatch.setattr(TournamentFolder, "standings", with_bracket)
    server = BackgroundServer(*prepare(folder, "127.0.0.1", 0, Access.PUBLIC, 4))
    try:
        yield server.address
    finally:
        server.stop()


def boxes(driver: WebDriver) -> dict[str, list[tuple[str, str, str, bool]]]:
    """Each table's rows as drawn: (seed, bot, points, through)."""
    drawn = {}
    for box in driver.find_elements(By.CSS_SELECTOR, ".bracket-table"):
        drawn[box.get_attribute("data-table") or ""] = [
            (
                row.find_element(By.CSS_SELECTOR, ".seed").text,
                row.find_element(By.CSS_SELECTOR, ".bot").text,
                row.find_element(By.CSS_SELECTOR, ".points").text,
                row.get_attribute("data-through") == "true",
            )
            for row in box.find_elements(By.CSS_SELECTOR, "tr.entrant")
        ]
    return drawn


def lines(driver: WebDriver) -> set[tuple[str, str]]:
    return {
        (path.get_attribute("data-from") or "", path.get_attribute("data-to") or "")
        for path in driver.find_elements(By.CSS_SELECTOR, "#bracket svg path")
    }


def column_left(driver: WebDriver, table_id: str) -> float:
    box = driver.find_element(By.ID, f"table-{table_id}")
    return float(box.rect["x"])


@pytest.mark.timeout(120)
def test_a_finished_knockout_is_drawn_as_a_bracket(
    tournament: Path, browser: WebDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    with served_with(tournament, knockout(), monkeypatch) as url:
        browser.get(url)
        drawn = boxes(browser)
        assert drawn["W1-T1"] == [("1", "alpha", "", True)]  # a bye: no points
        assert drawn["W1-T2"] == [("4", "delta", "3.5", True), ("5", "echo", "0.5", False)]
        assert drawn["W3-T1"] == [("1", "alpha", "2.5", True), ("3", "charlie", "1.5", False)]
        assert browser.find_element(By.ID, "champion").text == "Champion: alpha"
        assert [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#placings li")] == [
            "alpha",
            "charlie",
            "bravo, delta",
            "echo",
        ]
        labels = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".bracket-round h4")]
        assert labels == ["Round of 8", "Semi-finals", "Final"]
        # Columns left to right, each line from a table to the one it feeds.
        assert column_left(browser, "W1-T2") < column_left(browser, "W2-T1")
        assert column_left(browser, "W2-T1") < column_left(browser, "W3-T1")
        assert lines(browser) == {
            ("W1-T1", "W2-T1"),
            ("W1-T2", "W2-T1"),
            ("W1-T3", "W2-T2"),
            ("W1-T4", "W2-T2"),
            ("W2-T1", "W3-T1"),
            ("W2-T2", "W3-T1"),
        }
        # The standings are still there, the bracket beside them.
        assert browser.find_elements(By.CSS_SELECTOR, "table.grid")
        assert page_errors(browser) == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("status", ["playing", "decided"])
def test_a_table_still_playing_shows_no_points(
    tournament: Path, browser: WebDriver, monkeypatch: pytest.MonkeyPatch, status: TableStatus
) -> None:
    """The winners' final's model carries points mid-match; drawn, they are not, until the
    table is decided (the control: the same numbers then show)."""
    with served_with(tournament, double_elimination(status), monkeypatch) as url:
        browser.get(url)
        drawn = boxes(browser)
        points = [cell[2] for cell in drawn["W2-T1"]]
        shown = f"{PLAYING_POINTS:g}" in browser.find_element(By.ID, "bracket").text
        if status == "playing":
            assert points == ["", ""] and not shown
        else:
            assert points == [f"{PLAYING_POINTS:g}", "0.25"] and shown
        sides = [
            s.get_attribute("data-side")
            for s in browser.find_elements(By.CSS_SELECTOR, ".bracket-side")
        ]
        assert sides == ["winners", "losers", "finals"]
        assert drawn["L2-T1"] == [("", "to be decided", "", False)] * 2
        assert browser.find_element(By.ID, "champion").text == "no champion yet"
        gf = browser.find_element(By.ID, "table-GF")
        assert column_left(browser, "W2-T1") < float(gf.rect["x"])  # the finals to the right
        assert "losers to L2-T1" in browser.find_element(By.ID, "table-W2-T1").text
        assert ("W2-T1", "GF") in lines(browser) and ("GF", "GF2") in lines(browser)
        assert page_errors(browser) == []


@pytest.mark.timeout(180)
def test_a_real_knockout_is_drawn_as_its_standings_say(tmp_path: Path, browser: WebDriver) -> None:
    """End to end: a knockout of scripted bots played by `arena tournament run`, served by `arena
    web`: the page draws every table of the bracket its --json standings hold, and its champion."""
    losing = {"s1": {}, "s2": {"W1-T2": 0}, "s3": {"W2-T1": 0}}
    bots = "".join(
        f'[[bots]]\nspec = "{b["spec"]}"\nname = "{b["name"]}"\n'
        for b in scripted_bots(tmp_path, losing)
    )
    (tmp_path / "cup.toml").write_text(
        'name = "cup"\ngame = "capture-the-commander"\noutput = "out"\n'
        f'{bots}[format]\nkind = "knockout"\n'
    )
    ran = arena("tournament", "run", tmp_path / "cup.toml", "--no-progress")
    assert ran.returncode == 0, ran.stderr
    shown = arena("tournament", "standings", tmp_path / "out", "--json")
    bracket = BracketView.model_validate(json.loads(shown.stdout)["bracket"])
    with web_server(tmp_path / "out") as url:
        browser.get(url)
        drawn = boxes(browser)
        assert set(drawn) == {t.table_id for r in bracket.rounds for t in r.tables}
        assert drawn["W2-T1"][0][1:] == (
            "s1",
            f"{bracket.rounds[-1].tables[0].entrants[0].points:g}",
            True,
        )
        assert browser.find_element(By.ID, "champion").text == "Champion: s1"
        assert page_errors(browser) == []
