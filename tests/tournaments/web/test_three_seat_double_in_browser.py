"""A double elimination at three seats (planned round by round: tournaments/bracket_pool.py) on
the tournament page, in headless Chromium: a real `arena web` over a real SQLite file whose
results the runner's own scheduler and the test write (seed 8 dropped in winners' round 1,
then first everywhere: it wins the grand final from the losers' side and the reset). Every
table its /api/standings holds is drawn with its bots, byes included (the top seeds rest, on
both sides), the wide table with its two bots through, the grand final with the winners'
side's one finalist and the losers' side's two, and the reset after it."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser import page_errors
from tests.tournaments.test_knockout import config, favouring
from tests.tournaments.web.harness import get_json, web_server
from tests.tournaments.web.test_bracket_in_browser import boxes, lines
from tournaments.records import MatchRecord
from tournaments.schedule import BracketSchedule, Ledger
from tournaments.store import Store


def played(folder: Path) -> None:
    """The bracket played out into the folder's SQLite by the runner's own scheduler."""
    cfg = config(8, kind="double-elimination", seats=3).model_copy(update={"output": str(folder)})
    store = Store.create(folder, cfg)
    scheduler = BracketSchedule(cfg, cfg.format)  # type: ignore[arg-type]
    result = favouring("s8", "W1")
    ledger = Ledger()
    while (jobs := scheduler.next_jobs(ledger)) is not None:
        store.schedule(jobs)
        for job in jobs:
            ranks = result(job)
            record = MatchRecord(
                job.match_id, job.deal, job.bots, ranks, tuple(map(float, ranks)), "synthetic"
            )
            store.finish(record, "w", 0.1)
            ledger.scheduled[job.match_id] = job
            ledger.finished[job.match_id] = record
    store.close()


@pytest.mark.timeout(120)
def test_a_three_seat_double_elimination_is_drawn_through_its_reset(
    tmp_path: Path, browser: WebDriver
) -> None:
    played(tmp_path)
    with web_server(tmp_path) as url:
        status, report = get_json(f"{url}/api/standings")
        assert status == 200
        bracket = report["bracket"]
        browser.get(url)
        drawn = boxes(browser)
        expected = {t["table_id"]: t for r in bracket["rounds"] for t in r["tables"]}
        assert set(drawn) == set(expected)
        assert {"W1-T1", "W2-T2", "W3-T1", "L1-T1", "L3-T2", "GF", "GF2"} <= set(drawn)
        for table_id, table in expected.items():
            assert [row[1] for row in drawn[table_id]] == [e["bot"] for e in table["entrants"]]
            assert [row[3] for row in drawn[table_id]] == [e["through"] for e in table["entrants"]]
        byes = [t for t in expected.values() if t["status"] == "bye"]
        assert byes and all(len(drawn[t["table_id"]]) == 1 for t in byes)
        assert [row[1] for row in drawn["W1-T1"]] == ["s1"]
        assert sum(row[3] for row in drawn["W2-T2"]) == 2  # the wide table: two of three on
        assert len(drawn["GF"]) == 3 and [row[1] for row in drawn["GF"] if row[3]] == ["s8"]
        assert drawn["GF2"] == drawn["GF"]  # the same three, the same result
        assert browser.find_element(By.ID, "champion").text == "Champion: s8"
        sides = [
            s.get_attribute("data-side")
            for s in browser.find_elements(By.CSS_SELECTOR, ".bracket-side")
        ]
        assert sides == ["winners", "losers", "finals"]
        assert {("W2-T2", "W3-T1"), ("W3-T1", "GF"), ("L3-T2", "GF")} <= lines(browser)
        assert page_errors(browser) == []
