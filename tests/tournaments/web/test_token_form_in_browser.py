"""The one token form (templates/token_form.html) of the operator's /audit and an author's /me,
in headless Chromium, served by a real `arena ladder serve`: both pages pass the same checks. A
wrong token is one line and kept nowhere (the 401 drops it); the right one stays in the tab's
sessionStorage under the page's key, in no address the page asked for (the browser's record
lists the page's API route: the control) and no cookie, shows the page again after a reload,
and "forget it" drops it. Neither page's template keeps a token itself: only the partial does
(the control: the partial is found to)."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser import page_errors
from tests.tournaments.web.ladder_harness import make_ladder, serving
from tests.tournaments.web.test_author_private import author
from tournaments.web import pages

TEMPLATES = Path(pages.__file__).with_name("templates")
REQUESTED = "return performance.getEntries().map(e => e.name);"
# page: (its storage key, its error line, the section its token shows, its API route)
PAGES = {
    "/audit": ("arena-operator-token", "audit-error", "audit", "/api/audit"),
    "/me": ("arena-author-token", "me-error", "me", "/api/me"),
}


def test_only_the_partial_keeps_a_token() -> None:
    for page in ("audit.html", "me.html"):
        text = (TEMPLATES / page).read_text()
        assert '{% import "token_form.html" as token %}' in text
        assert "sessionStorage" not in text.partition("#}")[2], page  # past the comment
    assert "sessionStorage.setItem" in (TEMPLATES / "token_form.html").read_text()  # control


def check_page(browser: WebDriver, url: str, page: str, token: str) -> None:
    key, error, section, route = PAGES[page]
    kept = f"return sessionStorage.getItem('{key}');"
    browser.get(url + page)
    browser.find_element(By.ID, "token").send_keys("not-" + token)
    browser.find_element(By.ID, "token-use").click()
    WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, error).text)
    said = browser.find_element(By.ID, error).text
    assert "\n" not in said and ("wrong" in said or "no author's" in said), said
    assert browser.execute_script("return sessionStorage.length;") == 0, page
    assert not browser.find_element(By.ID, section).is_displayed()

    browser.find_element(By.ID, "token").send_keys(token)
    browser.find_element(By.ID, "token-use").click()
    WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, section).is_displayed())
    assert browser.execute_script(kept) == token  # the control of the checks of nothing kept
    assert browser.find_element(By.ID, "token").get_attribute("value") == ""
    requested: list[str] = browser.execute_script(REQUESTED)
    assert any(name.endswith(route) for name in requested)  # the control
    assert not [name for name in requested if token in name] and browser.get_cookies() == []

    browser.refresh()  # the tab keeps it: the page shows again without a paste
    WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, section).is_displayed())
    browser.find_element(By.ID, "token-forget").click()
    assert browser.execute_script("return sessionStorage.length;") == 0
    assert not browser.find_element(By.ID, section).is_displayed()
    assert [e for e in page_errors(browser) if "401" not in e] == []


@pytest.mark.timeout(180)
def test_the_audit_and_author_pages_keep_and_drop_a_token_alike(
    browser: WebDriver, tmp_path: Path
) -> None:
    tokens = make_ladder(tmp_path, {})
    alice = author(tmp_path, "alice")
    with serving(tmp_path) as served:
        check_page(browser, served.url, "/audit", tokens["operator"])
        check_page(browser, served.url, "/me", alice)
