"""The operator's audit page (/audit) in headless Chromium, served by a real `arena ladder serve`:
a wrong token is one line and kept nowhere; the operator token shows every entry /api/audit
gives, in order, a `why` holding HTML as text (no element made of it); the token stays in the
tab's sessionStorage, in no address the page asked for (the browser's record lists /api/audit:
the control) and no cookie; "forget it" drops it."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser import page_errors
from tests.tournaments.ladder.contest_kit import call
from tests.tournaments.web.harness import arena
from tests.tournaments.web.ladder_harness import make_ladder, serving

REQUESTED = "return performance.getEntries().map(e => e.name);"
MARKUP = '<img id="injected" src="x" onerror="document.title=1">'


@pytest.mark.timeout(180)
def test_the_operator_reads_the_log_and_the_token_stays_in_the_tab(
    browser: WebDriver, tmp_path: Path
) -> None:
    tokens = make_ladder(tmp_path, {"house-first": "example:first"})
    operator = tokens["operator"]
    paused = arena("ladder", "pause", tmp_path, "--name", "house-first", "--why", MARKUP)
    assert paused.returncode == 0, paused.stderr
    with serving(tmp_path) as served:
        url = served.url
        browser.get(url + "/audit")
        browser.find_element(By.ID, "token").send_keys("not-" + operator)
        browser.find_element(By.ID, "token-use").click()
        WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "audit-error").text)
        assert "operator token is wrong" in browser.find_element(By.ID, "audit-error").text
        assert not browser.find_element(By.ID, "audit").is_displayed()

        browser.find_element(By.ID, "token").send_keys(operator)
        browser.find_element(By.ID, "token-use").click()
        WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "audit").is_displayed())
        status, log = call(f"{url}/api/audit", operator)
        assert status == 200
        rows = browser.find_elements(By.CSS_SELECTOR, "#audit tbody tr")
        shown = [[c.text for c in r.find_elements(By.TAG_NAME, "td")][:6] for r in rows]
        assert shown == [
            [str(e["seq"]), e["at"], e["who"], e["action"], e["subject"], e["why"]]
            for e in log["entries"]
        ]
        assert shown[-1][3:] == ["bot paused", "house-first", MARKUP]  # as text
        assert browser.find_elements(By.ID, "injected") == []

        requested: list[str] = browser.execute_script(REQUESTED)
        assert any(name.endswith("/api/audit") for name in requested)  # the control
        assert not [name for name in requested if operator in name]
        assert browser.get_cookies() == []
        key = "return sessionStorage.getItem('arena-operator-token');"
        assert browser.execute_script(key) == operator
        browser.find_element(By.ID, "token-forget").click()
        assert browser.execute_script("return sessionStorage.length;") == 0
        assert [e for e in page_errors(browser) if "401" not in e] == []
