"""The live ladder's page in headless Chromium, served by a real `arena ladder serve` playing
real bot processes: the leaderboard as the API gives it, the win rate against a chosen bot, a
bot's page, a recent match opening in the replay viewer, and a bot added while the page is open
showing up on it without a reload. With ARENA_VIEWER_SHOTS=FOLDER the pages' screenshots are
also written there."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait

from referee.matches.seat_times import SeatTimes
from tests.browser import page_errors, screenshot
from tests.tournaments.web.harness import get_json
from tests.tournaments.web.ladder_harness import count, finished, make_ladder, serving
from tests.tournaments.web.test_ladder_api import post

COLUMNS = ("rank", "bot", "version", "rating", "elo", "games", "time", "against", "status")


def board(driver: WebDriver) -> list[dict[str, str]]:
    """The leaderboard's rows as shown: each cell by its column. Read in one script, as the
    live updates may swap the table between two reads."""
    cells: list[list[str]] = driver.execute_script(
        "return [...document.querySelectorAll('#leaderboard-table tbody tr[data-bot]')]"
        ".map(row => [...row.querySelectorAll('td')].map(cell => cell.innerText.trim()));"
    )
    return [dict(zip(COLUMNS, row, strict=False)) for row in cells]


def expected(row: dict[str, object]) -> dict[str, str]:
    """A row of /api/leaderboard as the page shows it."""
    mu, low, high = (float(str(row[k])) for k in ("mu", "low", "high"))
    against = row["score_against"]
    return {
        "rank": str(row["rank"]),
        "bot": str(row["bot"]),
        "version": str(row["version"]),
        "rating": f"{mu:.1f} [{low:.1f}, {high:.1f}]",
        "elo": f"{float(str(row['elo'])):+.0f} ± {float(str(row['elo_error95'])):.0f}",
        "games": str(row["matches"]),
        "time": SeatTimes.model_validate(row["time"]).brief(),
        "against": ""
        if against is None
        else f"{100 * float(str(against)):.0f}% of {row['meetings_against']}",
        "status": str(row["status"]),
    }


def seats_shown(driver: WebDriver, table: str) -> dict[str, list[tuple[str, str]]]:
    """Each match row's seats as shown, left to right: (version, place)."""
    rows: list[tuple[str, list[tuple[str, str]]]] = driver.execute_script(
        f"return [...document.querySelectorAll('{table} tbody tr[data-match]')].map(row => "
        "[row.dataset.match, [...row.querySelectorAll('td.seats > span.seat')].map(seat => "
        "[seat.dataset.version, seat.querySelector('.place').innerText.trim()])]);"
    )
    return {match: [(version, place) for version, place in seats] for match, seats in rows}


def click(driver: WebDriver, selector: str) -> None:
    """Click the first match of selector; the live updates may swap it out under the click."""
    for _ in range(5):
        try:
            driver.find_element(By.CSS_SELECTOR, selector).click()
            return
        except StaleElementReferenceException:
            continue
    raise AssertionError(f"{selector} kept changing under the click")


def quiet(folder: Path) -> bool:
    return count(folder, "SELECT COUNT(*) FROM matches WHERE status = 'scheduled'") == 0


@pytest.mark.timeout(240)
def test_leaderboard_a_bot_page_a_replay_and_a_live_update(
    browser: WebDriver, tmp_path: Path
) -> None:
    folder = tmp_path / "ladder"
    tokens = make_ladder(folder, {"strat": "example:opposing-force", "rnd": "example:random"})
    operator = tokens["operator"]
    with serving(folder) as served:
        url = served.url
        served.wait_for("a few matches", lambda: finished(folder) >= 4)
        # Both paused, the ladder holds still while the page is checked against the API.
        for name in ("strat", "rnd"):
            assert post(f"{url}/api/bots/{name}/pause", None, operator)[0] == 200
        served.wait_for("the last match to end", lambda: quiet(folder))

        browser.get(url + "/")
        WebDriverWait(browser, 20).until(
            lambda d: d.find_element(By.ID, "live").get_attribute("data-live") == "on"
        )
        api = get_json(url + "/api/leaderboard")[1]
        assert board(browser) == [expected(row) for row in api]
        assert [row["bot"] for row in board(browser)] == [row["bot"] for row in api]
        Select(browser.find_element(By.NAME, "against")).select_by_value("rnd")
        WebDriverWait(browser, 20).until(lambda d: d.current_url.endswith("/?against=rnd"))
        api = get_json(url + "/api/leaderboard?against=rnd")[1]
        assert board(browser) == [expected(row) for row in api]
        strat = next(row for row in board(browser) if row["bot"] == "strat")
        assert strat["against"].endswith(f" of {finished(folder)}")
        screenshot(browser, tmp_path, "ladder")

        click(browser, '#leaderboard-table tr[data-bot="rnd"] a')
        WebDriverWait(browser, 20).until(lambda d: d.current_url.endswith("/bots/rnd"))
        page = get_json(url + "/api/bots/rnd")[1]
        assert browser.find_element(By.ID, "bot-name").text == "rnd"
        status = browser.find_element(By.ID, "bot-status").text
        assert "paused" in status and "paused by the operator" in status
        version = browser.find_element(By.CSS_SELECTOR, '#versions tr[data-version="rnd@1"]')
        assert version.find_elements(By.TAG_NAME, "td")[3].text == str(finished(folder))
        shown = browser.find_elements(By.CSS_SELECTOR, "#bot-matches tbody tr[data-match]")
        listed = [m["match_id"] for m in page["recent_matches"]]
        assert [row.get_attribute("data-match") for row in shown] == listed
        assert seats_shown(browser, "#bot-matches") == {
            m["match_id"]: [(s["version"], f"#{s['rank'] + 1}") for s in m["seats"]]
            for m in page["recent_matches"]
        }, "seat order, as the reason's scores, each seat with its place"
        won = [m["seats"][1]["rank"] == 0 for m in page["recent_matches"]]
        assert any(won), "a match seat 1 won: where finishing order is not seat order"
        screenshot(browser, tmp_path, "ladder-bot")

        latest = listed[0]
        click(browser, f'#bot-matches tr[data-match="{latest}"] a.open')
        WebDriverWait(browser, 20).until(lambda d: d.current_url.endswith(f"/matches/{latest}"))
        assert browser.find_element(By.ID, "table").get_attribute("data-frame") == "0"
        assert browser.find_element(By.TAG_NAME, "h1").text.startswith("Opposing Force: ")
        assert "shown as public" in browser.find_element(By.CSS_SELECTOR, ".meta").text

        # A bot added while the page is open shows up, and plays, without a reload.
        browser.get(url + "/")
        WebDriverWait(browser, 20).until(
            lambda d: d.find_element(By.ID, "live").get_attribute("data-live") == "on"
        )
        browser.execute_script("window.notReloaded = true;")
        late = {"name": "late", "spec": "example:random"}
        assert post(url + "/api/bots", late, operator)[0] == 201
        assert post(url + "/api/bots/rnd/resume", None, operator)[0] == 200
        WebDriverWait(browser, 60).until(
            lambda d: any(r["bot"] == "late" and r["games"] not in ("", "0") for r in board(d))
        )
        assert browser.execute_script("return window.notReloaded === true;")
        assert page_errors(browser) == []
