"""A challenger sees each challenge match as they see their rated ones (issue 36), on a real
`arena ladder serve` asked over real HTTP and in headless Chromium: alice's chatty bot (it
prints its hand, CHATTY) challenges bob's gated bot (it prints GATED at each match's start, and
holds c1-g1, the second seating of deal c1-d0, at its first decision).

While it holds, c1-g0's page and log are a 409 (so is c1-g1's); once the deal has ended they are
alice's (the control). Bob (the challenged) and carol get, for page and log, the 404 of a
challenge that does not exist; alice and the operator get 200 (the control); alice's page as
bob's seat is a 404 too (as her own seat: 200). On /me alice opens
the challenge's matches, c1-g0's view (the viewer draws in the sandboxed frame) and its log: her
bot's lines and none of bob's, which the ladder's file of his seat does hold (the control)."""

from __future__ import annotations

import sys
import urllib.request
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.bots.gated_bot import MARKER as GATED
from tests.browser import page_errors, screenshot
from tests.tournaments.ladder.contest_kit import call, new_author, sql
from tests.tournaments.ladder.test_challenges import wait_status
from tests.tournaments.web.harness import BOTS, arena
from tests.tournaments.web.ladder_harness import make_ladder, serving
from tests.tournaments.web.test_ladder_output_private import CHATTY
from tests.tournaments.web.test_ladder_output_private import MARKER as CHATTY_SAYS
from tournaments.read_models.ladder_reads import HELD_DEAL, HELD_PLAYING

ROUTES = ("page", "log")


def cache_control(url: str, token: str) -> str:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return str(answer.headers.get("Cache-Control"))


@pytest.mark.timeout(300)
def test_a_challenger_opens_a_challenge_matchs_view_and_log_and_nobody_else_does(
    browser: WebDriver, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    folder = tmp_path / "ladder"
    gated = f"cmd:{sys.executable} {BOTS / 'gated_bot.py'} {gate} c1-g1"
    tokens = make_ladder(folder, {}, concurrency=2, decision_ms=120000, tier="none")
    alice, bob, carol = (new_author(folder, n) for n in ("alice", "bob", "carol"))
    for name, spec, who in (("chatty", str(CHATTY), "alice"), ("gated", gated, "bob")):
        added = arena("ladder", "add", folder, "--name", name, "--spec", spec, "--author", who)
        assert added.returncode == 0, added.stderr
    with serving(folder) as served:
        url = served.url
        base = f"{url}/api/challenges/1/matches"
        _, nothing = call(f"{url}/api/challenges/999/matches/c1-g0/log", carol)
        unknown = nothing["error"].replace("999", "1")
        try:
            ask = {"bot": "chatty", "opponents": ["gated"], "games": 2}
            assert call(f"{url}/api/challenges", alice, ask)[0] == 201
            ended = "SELECT COUNT(*) FROM challenge_matches WHERE status = 'finished'"
            served.wait_for("c1-g0 to end", lambda: sql(folder, ended) == [(1,)])
            for route in ROUTES:
                for match_id, why in (("c1-g0", HELD_DEAL), ("c1-g1", HELD_PLAYING)):
                    status, said = call(f"{base}/{match_id}/{route}", alice)
                    assert status == 409 and why in said["error"], (match_id, route, said)
                    assert CHATTY_SAYS not in str(said)
                for token in (bob, carol):  # not theirs: 404 before any 409
                    assert call(f"{base}/c1-g0/{route}", token)[0] == 404
        finally:
            gate.touch()
        wait_status(served, url, alice, 1, "done")

        # The control: now alice's, and the operator's; still nobody else's, in the words of
        # a challenge that does not exist.
        for route in ROUTES:
            for token in (alice, tokens["operator"]):
                status, said = call(f"{base}/c1-g0/{route}", token)
                assert status == 200, (route, said)
                assert cache_control(f"{base}/c1-g0/{route}", token) == "no-store"
            for token in (bob, carol):
                status, said = call(f"{base}/c1-g0/{route}", token)
                assert status == 404 and said["error"] == unknown, said
        _, detail = call(f"{url}/api/challenges/1", alice)
        [seat] = next(m for m in detail["matches"] if m["match_id"] == "c1-g0")["mine"]
        # ?seat= as the rated page has it: hers (the control), not bob's.
        assert call(f"{base}/c1-g0/page?seat={seat}", alice)[0] == 200
        status, said = call(f"{base}/c1-g0/page?seat={1 - seat}", alice)
        assert status == 404 and f"your seats are [{seat}]" in said["error"], said
        _, log = call(f"{base}/c1-g0/log", alice)
        assert [(s["seat"], s["version"]) for s in log["seats"]] == [(seat, "chatty@1")]
        assert f"{CHATTY_SAYS} c1-g0 hand: " in log["seats"][0]["output"]
        assert GATED not in str(log)
        [his] = (folder / "logs").glob(f"c1-g0/{1 - seat}-gated@1.log")
        assert f"{GATED} c1-g0 begins" in his.read_text()  # the control: he did print

        browser.get(url + "/me")
        browser.find_element(By.ID, "token").send_keys(alice)
        browser.find_element(By.ID, "token-use").click()
        WebDriverWait(browser, 20).until(
            lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-loaded")
        )
        [row] = browser.find_elements(By.CSS_SELECTOR, "#my-challenges tr[data-challenge='1']")
        row.find_element(By.CSS_SELECTOR, "button.matches").click()
        under = "#my-challenges tr.challenge-matches tr[data-match='c1-g0']"
        WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, under))
        match = browser.find_element(By.CSS_SELECTOR, under)
        match.find_element(By.CSS_SELECTOR, "button.view").click()
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
        finally:
            browser.switch_to.default_content()
        screenshot(browser, tmp_path, "challenge-view")
        match.find_element(By.CSS_SELECTOR, "button.log").click()
        text = browser.find_element(By.ID, "log-text")
        WebDriverWait(browser, 20).until(lambda d: text.is_displayed() and text.text)
        assert text.text.startswith(f"--- seat {seat}, chatty@1: ")
        assert f"{CHATTY_SAYS} c1-g0 hand: " in text.text and GATED not in text.text
        assert page_errors(browser) == []
