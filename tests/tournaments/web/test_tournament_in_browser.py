"""The tournament page in headless Chromium, served by a real `arena web`: the standings as the
command line prints them, the match list's filters, a match opening in the replay viewer, and
the page following a tournament while it runs, without reloading. With ARENA_VIEWER_SHOTS=FOLDER
the page's screenshot is also written there (docs/viewer/tournament.png)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.browser import page_errors, screenshot
from tests.tournaments.web.harness import ARENA, BOTS, cli_tables, web_server

GRIDS = {
    "results": "results",
    "elo": "Elo (Bradley-Terry)",
    "los": "LOS: the likelihood the row is stronger than the column",
    "crosstable": "crosstable: the row's points against the column",
}


def shown_grids(driver: WebDriver) -> dict[str, list[list[str]]]:
    """The page's standings tables by name: each a header row, then a row per bot."""
    shown = {}
    for grid in driver.find_elements(By.CSS_SELECTOR, "table.grid"):
        header = [c.text for c in grid.find_elements(By.CSS_SELECTOR, "thead th")]
        body = [
            [c.text for c in row.find_elements(By.TAG_NAME, "td")]
            for row in grid.find_elements(By.CSS_SELECTOR, "tbody tr")
        ]
        shown[grid.get_attribute("data-grid") or ""] = [header, *body]
    return shown


def rows(driver: WebDriver) -> list[str]:
    """The match list's match ids, top to bottom."""
    return [
        row.get_attribute("data-match") or ""
        for row in driver.find_elements(By.CSS_SELECTOR, "#match-list tbody tr")
    ]


def choose(driver: WebDriver, name: str, value: str) -> None:
    """Pick a filter, as a person does; the page reloads with it in its address."""
    Select(driver.find_element(By.NAME, name)).select_by_value(value)
    WebDriverWait(driver, 20).until(
        lambda d: (
            (f"{name}={value}" in d.current_url) == bool(value)
            and d.execute_script("return document.readyState") == "complete"
        )
    )


def live(driver: WebDriver) -> None:
    WebDriverWait(driver, 20).until(
        lambda d: d.find_element(By.ID, "live").get_attribute("data-live") == "on"
    )


@pytest.mark.timeout(180)
def test_standings_filters_and_a_match_in_the_viewer(
    tournament: Path, browser: WebDriver, tmp_path: Path
) -> None:
    tables = cli_tables(tournament)
    with web_server(tournament) as url:
        browser.get(url + "/")
        assert shown_grids(browser) == {name: tables[title] for name, title in GRIDS.items()}
        caption = browser.find_element(By.CSS_SELECTOR, '[data-grid="results"] caption').text
        assert caption == "web (opposing-force, round-robin): 6/6 matches"
        assert browser.find_element(By.ID, "state").text == "state: finished"
        live(browser)
        everything = rows(browser)
        assert len(everything) == 6
        screenshot(browser, tmp_path, "tournament")

        choose(browser, "bot", "cheat")
        assert len(rows(browser)) == 4
        for match_id in rows(browser):
            row = browser.find_element(By.CSS_SELECTOR, f'tr[data-match="{match_id}"]')
            assert row.find_elements(By.CSS_SELECTOR, '.seat[data-bot="cheat"]')
            assert row.find_element(By.CSS_SELECTOR, ".forfeit").text == "cheat: illegal_action"
        choose(browser, "result", "loss")
        assert len(rows(browser)) == 4
        choose(browser, "result", "win")
        assert rows(browser) == []
        assert browser.find_element(By.CSS_SELECTOR, ".count").text.startswith("0 matches")
        choose(browser, "bot", "")
        assert browser.find_element(By.ID, "filter-error").text == (
            "result=win needs a bot: whose win?"
        )
        [refused] = page_errors(browser)
        assert "/?result=win - Failed to load resource: " in refused and "(Bad Request)" in refused
        choose(browser, "result", "")
        choose(browser, "cause", "timeout")
        assert rows(browser) == []
        choose(browser, "cause", "any")
        assert len(rows(browser)) == 4
        choose(browser, "cause", "")
        assert rows(browser) == everything

        opponents = [
            s.text for s in browser.find_elements(By.CSS_SELECTOR, '[data-match="t0-g0"] .seat')
        ]
        browser.find_element(By.CSS_SELECTOR, '[data-match="t0-g0"] a.open').click()
        WebDriverWait(browser, 20).until(lambda d: d.current_url.endswith("/matches/t0-g0"))
        table = browser.find_element(By.ID, "table")
        assert table.get_attribute("data-frame") == "0"
        assert browser.find_element(By.TAG_NAME, "h1").text == (
            f"Opposing Force: {opponents[0]} vs {opponents[1]}"
        )
        assert "shown as public" in browser.find_element(By.CSS_SELECTOR, ".meta").text
        browser.find_element(By.TAG_NAME, "body").send_keys(Keys.END)
        assert browser.find_element(By.ID, "result").text
        assert page_errors(browser) == []


@pytest.mark.timeout(120)
def test_three_seats_show_the_intervals_the_command_line_prints(
    three_seats: Path, browser: WebDriver
) -> None:
    tables = cli_tables(three_seats)
    with web_server(three_seats) as url:
        browser.get(url + "/")
        assert shown_grids(browser) == {"results": tables["results"]}
        assert tables["results"][0][-2:] == ["mu 95%", "time"]
        assert page_errors(browser) == []


LIVE_CONFIG = """
name = "live"
game = "opposing-force"
[[bots]]
name = "strategy"
spec = "example:opposing-force"
[[bots]]
name = "gated"
spec = "cmd:{python} {bot} {gate} t0-g1"
[format]
kind = "round-robin"
games_per_pairing = 2
[time_control]
decision_ms = 120000
[run]
concurrency = 1
"""


def finished(folder: Path) -> int:
    try:
        with sqlite3.connect(f"file:{folder / 'tournament.sqlite'}?mode=ro", uri=True) as db:
            [(count,)] = db.execute(
                "SELECT COUNT(*) FROM matches WHERE finished_at IS NOT NULL"
            ).fetchall()
    except sqlite3.OperationalError:  # not created yet
        return 0
    return int(count)


def status_of(driver: WebDriver, match_id: str) -> str:
    row = driver.find_element(By.CSS_SELECTOR, f'tr[data-match="{match_id}"]')
    return row.get_attribute("data-status") or ""


@pytest.mark.timeout(180)
def test_the_page_follows_a_running_tournament(browser: WebDriver, tmp_path: Path) -> None:
    """The gated bot holds the second match (the other seating of the first one's deal) at its
    first decision until the test creates the gate: the page is looked at with one match
    finished and one in flight, then follows the rest live."""
    gate = tmp_path / "gate"
    config = tmp_path / "live.toml"
    config.write_text(
        LIVE_CONFIG.format(python=sys.executable, bot=BOTS / "gated_bot.py", gate=gate)
    )
    folder = tmp_path / "out"
    runner = subprocess.Popen(
        [*ARENA, "tournament", "run", str(config), "--out", str(folder), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while finished(folder) < 1:
            assert runner.poll() is None and time.monotonic() < deadline, runner.communicate()
            time.sleep(0.05)
        with web_server(folder) as url:
            browser.get(url + "/")
            live(browser)
            assert browser.find_element(By.ID, "state").text.startswith("state: running (pid ")
            assert (status_of(browser, "t0-g0"), status_of(browser, "t0-g1")) == (
                "finished",
                "playing",
            )
            # t0-g0's deal is in play: neither its replay nor how it ended is shown.
            held = browser.find_element(By.CSS_SELECTOR, '[data-match="t0-g0"]')
            assert held.find_elements(By.CSS_SELECTOR, "a.open") == []
            assert held.find_element(By.CSS_SELECTOR, ".reason").text == ("held back: deal in play")
            browser.execute_script("window.notReloaded = true;")
            gate.touch()
            WebDriverWait(browser, 60).until(lambda d: status_of(d, "t0-g1") == "finished")
            WebDriverWait(browser, 60).until(
                lambda d: d.find_element(By.ID, "state").text == "state: finished"
            )
            assert browser.execute_script("return window.notReloaded === true;")
            caption = browser.find_element(By.CSS_SELECTOR, '[data-grid="results"] caption')
            assert caption.text == "live (opposing-force, round-robin): 2/2 matches"
            opened = browser.find_element(By.CSS_SELECTOR, '[data-match="t0-g0"] a.open')
            assert opened.get_attribute("href") == f"{url}/matches/t0-g0"
            assert page_errors(browser) == []
        _, stderr = runner.communicate(timeout=60)
        assert runner.returncode == 0, stderr
    finally:
        gate.touch()
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
