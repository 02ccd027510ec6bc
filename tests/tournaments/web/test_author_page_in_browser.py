"""An author's page (/me) in headless Chromium, served by a real `arena ladder serve` playing two
authors' bots: the author pastes their token and sees their bots, versions, W-D-L and matches as
the API gives them, opens a match in their seat's view (the viewer in a sandboxed frame) and
their bot's log. The token stays in the tab's sessionStorage: no address the page asked for
holds it (the browser's own record of its requests, which does list /api/me: the control), no
cookie is set, and the public pages hold nothing of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser import page_errors, screenshot
from tests.tournaments.web.harness import arena
from tests.tournaments.web.ladder_harness import finished, make_ladder, serving
from tests.tournaments.web.test_author_private import ask, author, quiet

REQUESTED = "return performance.getEntries().map(e => e.name);"


def loaded(driver: WebDriver) -> bool:
    return driver.find_element(By.TAG_NAME, "body").get_attribute("data-loaded") == "true"


@pytest.mark.timeout(240)
def test_an_author_sees_their_bots_and_matches_and_the_token_stays_in_the_tab(
    browser: WebDriver, tmp_path: Path
) -> None:
    folder = tmp_path / "ladder"
    make_ladder(folder, {})
    alice = author(folder, "alice")
    author(folder, "bob")
    for name, spec, who in (
        ("strat", "example:opposing-force", "alice"),
        ("rnd", "example:random", "bob"),
    ):
        added = arena("ladder", "add", folder, "--name", name, "--spec", spec, "--author", who)
        assert added.returncode == 0, added.stderr
    with serving(folder) as served:
        url = served.url
        served.wait_for("a few matches", lambda: finished(folder) >= 4)
        for name in ("strat", "rnd"):
            assert arena("ladder", "pause", folder, "--name", name).returncode == 0
        served.wait_for("the last match to end", lambda: quiet(folder))

        browser.get(url + "/")
        browser.find_element(By.ID, "my-bots-link").click()
        WebDriverWait(browser, 20).until(lambda d: d.current_url == url + "/me")
        # A wrong token: one line, and nothing kept.
        browser.find_element(By.ID, "token").send_keys("not-" + alice)
        browser.find_element(By.ID, "token-use").click()
        WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "me-error").text)
        assert "no author's" in browser.find_element(By.ID, "me-error").text
        assert browser.execute_script("return sessionStorage.length;") == 0
        assert [e for e in page_errors(browser) if "401" not in e] == []

        browser.find_element(By.ID, "token").send_keys(alice)
        browser.find_element(By.ID, "token-use").click()
        WebDriverWait(browser, 20).until(loaded)
        _, me, _ = ask(url, "/api/me", alice)
        _, listed, _ = ask(url, "/api/me/matches", alice)
        assert browser.find_element(By.ID, "me-name").text == "alice"
        versions = browser.find_elements(By.CSS_SELECTOR, "#my-bots tbody tr")
        assert [v.get_attribute("data-version") for v in versions] == ["strat@1"]
        [row] = browser.find_elements(By.CSS_SELECTOR, "#my-record tbody tr")
        [record] = me["record"]
        cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
        assert cells == [
            "strat",
            "rnd",
            "bob",
            *(str(record[k]) for k in ("wins", "draws", "losses")),
        ]
        rows = browser.find_elements(By.CSS_SELECTOR, "#my-matches tbody tr")
        assert [r.get_attribute("data-match") for r in rows] == [
            m["match_id"] for m in listed["matches"]
        ]
        assert len(rows) == finished(folder)

        latest = listed["matches"][0]
        [seat] = latest["mine"]
        rows[0].find_element(By.CSS_SELECTOR, "button.view").click()
        frame = browser.find_element(By.ID, "view-frame")
        WebDriverWait(browser, 20).until(lambda d: frame.is_displayed())
        browser.switch_to.frame(frame)
        try:
            WebDriverWait(browser, 20).until(
                lambda d: (
                    d.find_elements(By.ID, "table")
                    and d.find_element(By.ID, "table").get_attribute("data-frame") == "0"
                )
            )
            assert f"shown as seat {seat}" in browser.find_element(By.CSS_SELECTOR, ".meta").text
            # Sandboxed: no origin of the site's, so no sessionStorage (and no token) to read.
            assert (
                browser.execute_script(
                    "try { return sessionStorage.length; } catch (e) { return 'refused'; }"
                )
                == "refused"
            )
        finally:
            browser.switch_to.default_content()
        screenshot(browser, tmp_path, "author-view")
        rows[0].find_element(By.CSS_SELECTOR, "button.log").click()
        log = browser.find_element(By.ID, "log-text")
        WebDriverWait(browser, 20).until(lambda d: log.is_displayed() and log.text)
        assert log.text.startswith(f"--- seat {seat}, strat@1: ")

        requested: list[str] = browser.execute_script(REQUESTED)
        assert any(name.endswith("/api/me") for name in requested)  # the control: it is listed
        assert any("/api/me/matches/" in name for name in requested)
        assert not [name for name in requested if alice in name]
        assert (
            browser.get_cookies() == [] and browser.execute_script("return document.cookie;") == ""
        )
        assert (
            browser.execute_script("return sessionStorage.getItem('arena-author-token');") == alice
        )
        assert browser.execute_script("return localStorage.length;") == 0

        # The public pages, in the same tab: nothing of it.
        for path in ("/", "/bots/strat", f"/matches/{latest['match_id']}"):
            browser.get(url + path)
            source = browser.page_source
            assert alice not in source and "--- seat" not in source, path
            assert not [n for n in browser.execute_script(REQUESTED) if alice in n]
        # Back on /me, the tab still has it; "forget it" drops it.
        browser.get(url + "/me")
        WebDriverWait(browser, 20).until(loaded)
        browser.find_element(By.ID, "token-forget").click()
        assert browser.execute_script("return sessionStorage.length;") == 0
        assert page_errors(browser) == []
