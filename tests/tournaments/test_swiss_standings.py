"""Swiss standings: Buchholz (the points of every opponent met) in the model, the text table,
--json and the page, ordering ties on points; and the count of matches, which for a Swiss is
finished of all the rounds' matches, not of the rounds scheduled so far (the page once said
14/24 while the run's progress said 36)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.tournaments.test_formats import StrengthExecutor, config, run, strengths
from tests.tournaments.web.harness import web_server
from tournaments import standings
from tournaments.config import TournamentConfig
from tournaments.schedule import Ledger
from tournaments.standings import standings_report
from tournaments.standings_grids import results_grid
from tournaments.store import Store

ARENA = (sys.executable, "-m", "tournaments.cli.arena_app")


@pytest.fixture(scope="module")
def swiss(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TournamentConfig, Ledger]:
    """Eight bots, four rounds, a real store: b7 and b5 end on 5 points, b5 rated higher."""
    folder = tmp_path_factory.mktemp("swiss")
    cfg = config({"kind": "swiss", "rounds": 4}, bots=8)
    summary = run(folder, cfg, StrengthExecutor(strengths(8)))
    assert summary.state == "finished"
    return folder, cfg, summary.ledger


def opponents_points(ledger: Ledger) -> dict[str, float]:
    """Buchholz worked out apart: each round's table once, every other bot's points."""
    points: dict[str, float] = defaultdict(float)
    for record in ledger.records():
        for bot in record.bots:
            points[bot] += record.points(bot)
    tables = {r.match_id.split("-g")[0]: r.bots for r in ledger.records()}
    summed: dict[str, float] = defaultdict(float)
    for seated in tables.values():
        for bot in seated:
            summed[bot] += sum(points[o] for o in seated if o != bot)
    return summed


def test_buchholz_is_the_opponents_points_and_breaks_ties_before_rating(
    swiss: tuple[Path, TournamentConfig, Ledger],
) -> None:
    _, cfg, ledger = swiss
    rows = {row.bot: row for row in standings_report(cfg, ledger, brief=True).standings}
    assert {bot: row.buchholz for bot, row in rows.items()} == opponents_points(ledger)
    b7, b5 = rows["b7"], rows["b5"]
    assert b7.points == b5.points and b7.buchholz is not None and b5.buchholz is not None
    assert b7.buchholz > b5.buchholz and b5.rating > b7.rating, "the tie-break decides"
    assert b7.place < b5.place


def test_without_buchholz_the_tie_goes_by_rating(
    swiss: tuple[Path, TournamentConfig, Ledger], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: with no tie-break, the same tie orders b5 first."""
    _, cfg, ledger = swiss
    monkeypatch.setattr(standings, "buchholz", lambda ledger, points: {})
    rows = {row.bot: row for row in standings_report(cfg, ledger, brief=True).standings}
    assert rows["b5"].place < rows["b7"].place


def partial(ledger: Ledger, rounds: int, finished: int) -> Ledger:
    """The ledger while round `rounds` is in play: its first `finished` matches are over."""
    scheduled = {i: j for i, j in ledger.scheduled.items() if j.round <= rounds}
    done = list(scheduled)[:finished]
    return Ledger(scheduled, {i: ledger.finished[i] for i in done})


def test_a_swiss_counts_its_matches_of_every_round(
    swiss: tuple[Path, TournamentConfig, Ledger],
) -> None:
    _, cfg, ledger = swiss
    report = standings_report(cfg, partial(ledger, 2, 12), brief=True)
    assert (report.finished, report.scheduled, report.planned) == (12, 16, 32)
    assert results_grid(report).title.endswith("12/32 matches (16 scheduled so far)")
    # The control: without the plan, the rounds so far pass for the whole.
    unplanned = report.model_copy(update={"planned": None})
    assert results_grid(unplanned).title.endswith("12/16 matches")


@pytest.mark.timeout(120)
def test_the_text_table_and_json_show_buchholz(
    swiss: tuple[Path, TournamentConfig, Ledger],
) -> None:
    folder, _, ledger = swiss
    shown = subprocess.run(
        [*ARENA, "tournament", "standings", str(folder), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["planned"] == 32
    assert {r["bot"]: r["buchholz"] for r in report["standings"]} == opponents_points(ledger)
    text = subprocess.run(
        [*ARENA, "tournament", "standings", str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert text.returncode == 0, text.stderr
    assert "Buchholz" in text.stdout and "32/32 matches" in text.stdout


@pytest.mark.timeout(120)
def test_the_page_shows_buchholz_and_every_rounds_count(
    swiss: tuple[Path, TournamentConfig, Ledger], tmp_path: Path, browser: WebDriver
) -> None:
    """A Swiss in its second round, served by `arena web`, in Chromium."""
    _, cfg, ledger = swiss
    store = Store.create(tmp_path / "live", cfg)
    now = partial(ledger, 2, 12)
    store.schedule(now.scheduled.values())
    for record in now.records():
        store.finish(record, "test", 1.0)
    store.close()
    with web_server(tmp_path / "live") as url:
        browser.get(url + "/")
        grid = browser.find_element(By.CSS_SELECTOR, 'table[data-grid="results"]')
        assert (
            "12/32 matches (16 scheduled so far)" in grid.find_element(By.TAG_NAME, "caption").text
        )
        header = [th.text for th in grid.find_elements(By.CSS_SELECTOR, "thead th")]
        column = header.index("Buchholz")
        rows = grid.find_elements(By.CSS_SELECTOR, "tbody tr")
        summed = opponents_points(now)
        for row in rows:
            cells = [td.text for td in row.find_elements(By.TAG_NAME, "td")]
            assert float(cells[column]) == summed[cells[1]], cells
