"""The tournament page for every game, in headless Chromium: a small real tournament per game
(its strategy bot against the random bot), the standings on the page as the command line prints
them, and a match opening in the viewer with the game's own table, stepped to its end."""

from __future__ import annotations

from pathlib import Path

import pytest
from arena_games import GAMES
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser import page_errors, screenshot
from tests.tournaments.web.harness import arena, cli_tables, web_server
from tests.tournaments.web.test_tournament_in_browser import rows, shown_grids

CONFIG = """
name = "every"
game = "{game}"
[[bots]]
name = "strategy"
spec = "example:{game}"
[[bots]]
spec = "example:random"
[format]
kind = "round-robin"
games_per_pairing = 2
"""


@pytest.mark.timeout(180)
@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_games_tournament_page_and_a_match_in_the_viewer(
    game: str, browser: WebDriver, tmp_path: Path
) -> None:
    config = tmp_path / "every.toml"
    config.write_text(CONFIG.format(game=game))
    ran = arena("tournament", "run", config, "--out", tmp_path / "out", "--no-progress")
    assert ran.returncode == 0, ran.stderr
    folder = tmp_path / "out"
    tables = cli_tables(folder)
    with web_server(folder) as url:
        browser.get(url + "/")
        assert shown_grids(browser)["results"] == tables["results"]
        matches = rows(browser)
        assert len(matches) == 2
        screenshot(browser, tmp_path, f"tournament-{game}")
        first = matches[-1]
        browser.find_element(By.CSS_SELECTOR, f'[data-match="{first}"] a.open').click()
        WebDriverWait(browser, 20).until(lambda d: d.current_url.endswith(f"/matches/{first}"))
        assert browser.find_element(By.TAG_NAME, "h1").text.startswith(GAMES[game].title)
        table = browser.find_element(By.ID, "table")
        assert table.find_elements(By.CSS_SELECTOR, ".card"), "no card drawn on the table"
        browser.find_element(By.TAG_NAME, "body").send_keys(Keys.END)
        assert browser.find_element(By.ID, "result").text
        screenshot(browser, tmp_path, f"match-{game}")
        assert page_errors(browser) == []
