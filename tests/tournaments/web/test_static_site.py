"""`arena tournament export`: a tournament as a static site, opened from file:// in headless
Chromium (no server, no network), each match's replay in the viewer; no file of the site holds
a card the spectators never saw (the referee's replay of the same match does: the control); a
match whose deal is in play is held back as the web server holds it (the control: the same
export with the read model's deal check off writes its replay); and the refusals of a folder
that is not the site's."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from referee.replays.viewer import model, page
from tests.browser import page_errors
from tests.referee.replays.viewer.test_page_secrecy import LABEL, seen_after_each_frame
from tests.tournaments.web.hand_brackets import knockout
from tests.tournaments.web.harness import arena
from tournaments.read_models import tournament_reads
from tournaments.read_models.tournament_reads import HELD_DEAL, Snapshot, TournamentFolder
from tournaments.standings import StandingsReport
from tournaments.store import Store
from tournaments.web import static_site
from tournaments.web.static_site import MARK, ExportError, export_site

DEAL = ("t1-g0", "t1-g1")  # strategy and cheat, seats swapped, one deal


@pytest.fixture(scope="module")
def site(tournament: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("site") / "site"
    done = arena("tournament", "export", tournament, "-o", where)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"site: {where / 'index.html'} (6 matches, 6 replays)"
    return where


def site_files(where: Path) -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in where.rglob("*") if path.is_file()}


def frame_shown(driver: WebDriver) -> int:
    return int(driver.find_element(By.ID, "table").get_attribute("data-frame") or -1)


@pytest.mark.timeout(180)
def test_the_site_opens_from_disk_with_every_replay(
    site: Path, tournament: Path, browser: WebDriver
) -> None:
    files = site_files(site)
    assert {p.relative_to(site).as_posix() for p in files} >= {
        "index.html",
        "standings.json",
        "matches.json",
        "tournament.json",
        MARK,
        "matches/t0-g0.html",
        "matches/t0-g0.json",
    }
    # Nothing to load from elsewhere: no address of a server in any link or source.
    for path, text in files.items():
        assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:[a-z]+:)?//""", text), path
        assert 'href="/' not in text and "fetch(" not in text, path
    browser.get((site / "index.html").as_uri())
    caption = browser.find_element(By.CSS_SELECTOR, '[data-grid="results"] caption').text
    assert caption == "web (opposing-force, round-robin): 6/6 matches"
    assert browser.find_elements(By.ID, "still-running") == []
    links = browser.find_elements(By.CSS_SELECTOR, "#match-list a.open")
    assert len(links) == 6
    for link in links:  # every replay is there
        target = Path((link.get_attribute("href") or "").removeprefix("file://"))
        assert target.is_file() and target.parent == site / "matches"
    standings = json.loads(files[site / "standings.json"])
    assert standings == json.loads(arena("tournament", "standings", tournament, "--json").stdout)
    first = browser.find_element(By.CSS_SELECTOR, '#match-list tr[data-match="t0-g0"] a.open')
    first.click()
    assert browser.current_url == (site / "matches" / "t0-g0.html").as_uri()
    replay = json.loads(files[site / "matches" / "t0-g0.json"])
    assert replay["viewer"] == "public" and frame_shown(browser) == 0
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.END)
    assert frame_shown(browser) == len(replay["frames"]) - 1
    assert browser.find_element(By.ID, "result").text.startswith(replay["result"]["reason"])
    assert page_errors(browser) == []
    browser.back()
    assert browser.find_element(By.ID, "match-list")


def leaks(site: Path, tournament: Path) -> list[tuple[str, str, Path]]:
    """(match, card, file) for each card the spectators never saw in a match that is in the
    match's own files or the site's shared ones (another match's public view may show the
    card: a deal's seatings play the same cards, and once all are over, each is public)."""
    files = site_files(site)
    shared = {path: text for path, text in files.items() if path.parent == site}
    found = []
    replays = sorted((tournament / "replays").glob("*.jsonl"))
    assert len(replays) == 6
    for replay in replays:
        seen = seen_after_each_frame(replay, "public")[-1]
        referee = page.render(model.load(replay, "referee"))
        hidden = set(LABEL.findall(referee)) - seen
        assert hidden, replay  # the referee's replay holds cards the public never saw
        own = {path: text for path, text in files.items() if path.stem == replay.stem} | shared
        assert len(own) == len(shared) + 2
        for card in hidden:
            pattern = rf"(?<![A-Za-z0-9]){card}(?![A-Za-z0-9])"
            found += [(replay.stem, card, p) for p, text in own.items() if re.search(pattern, text)]
    return found


def test_no_file_of_the_site_holds_a_card_the_spectators_never_saw(
    site: Path, tournament: Path
) -> None:
    assert leaks(site, tournament) == []


def test_the_control_a_site_of_the_referees_view_leaks(
    tournament: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(static_site, "PUBLIC", "referee")
    export_site(TournamentFolder(tournament), tmp_path / "site")
    found = leaks(tmp_path / "site", tournament)
    assert {match for match, _, _ in found} == {p.stem for p in (tournament / "replays").iterdir()}


def deal_in_play(tournament: Path, folder: Path) -> None:
    """A copy of the tournament's deal DEAL: one seating finished, the other in flight."""
    played = Store.open(tournament, read_only=True)
    config, ledger = played.config(), played.ledger()
    played.close()
    store = Store.create(folder, config)
    (folder / "replays").mkdir()
    store.schedule(ledger.scheduled[match_id] for match_id in DEAL)
    record = ledger.finished[DEAL[0]]
    assert record.replay is not None
    copied = shutil.copy(record.replay, folder / "replays")
    store.finish(replace(record, replay=str(copied)), "test", 1.0)
    store.set_state("running")
    store.close()


@pytest.mark.parametrize("guarded", [True, False])
def test_a_match_whose_deal_is_in_play_is_held_back(
    tournament: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, guarded: bool
) -> None:
    folder = tmp_path / "in-play"
    deal_in_play(tournament, folder)
    if not guarded:  # the control: the read model's check of the deal off
        monkeypatch.setattr(tournament_reads, "_deal_done", lambda deal, ledger: True)
    exported = export_site(TournamentFolder(folder), tmp_path / "site")
    written = tmp_path / "site" / "matches" / f"{DEAL[0]}.html"
    assert written.is_file() == (not guarded)
    assert exported.still_running and exported.replays == (0 if guarded else 1)
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "was still running when this site was" in index
    listed = json.loads((tmp_path / "site" / "matches.json").read_text(encoding="utf-8"))
    first = next(m for m in listed["matches"] if m["match_id"] == DEAL[0])
    if guarded:
        assert (first["held"], first["viewer"], first["reason"]) == (HELD_DEAL, None, None)
        assert "held back: deal in play" in index
        standings = json.loads((tmp_path / "site" / "standings.json").read_text())
        assert standings["finished"] == 0
    else:
        assert first["viewer"] == f"matches/{DEAL[0]}.html" and first["reason"] is not None


def test_a_folder_that_is_not_the_sites_is_refused(tournament: Path, tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    refused = arena("tournament", "export", tournament, "-o", taken)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip() == (
        f"error: {taken} is not empty: choose another folder, or --force to replace it"
    )
    nowhere = arena("tournament", "export", tmp_path / "nowhere", "-o", tmp_path / "out")
    assert nowhere.returncode == 2 and nowhere.stderr.strip() == (
        f"error: {tmp_path / 'nowhere'} holds no tournament (no tournament.sqlite in it)"
    )
    forced = arena("tournament", "export", tournament, "-o", taken, "--force")
    assert forced.returncode == 2 and "has no arena-site.json" in forced.stderr
    assert len(forced.stderr.strip().splitlines()) == 1
    assert (taken / "notes.txt").read_text() == "mine"  # untouched
    # An earlier export is replaced whole: what it held and the new site lacks is gone.
    site = tmp_path / "site"
    export_site(TournamentFolder(tournament), site)
    (site / "matches" / "stale.html").write_text("from before")
    with pytest.raises(ExportError):
        export_site(TournamentFolder(tournament), site)
    export_site(TournamentFolder(tournament), site, force=True)
    assert not (site / "matches" / "stale.html").exists()
    assert (site / "index.html").is_file()
    # Nothing left beside them: no staging folder, no "out" of the refused export.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "taken"]


@pytest.mark.timeout(120)
def test_an_exported_site_draws_the_bracket_from_disk(
    tournament: Path, tmp_path: Path, browser: WebDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A knockout's bracket (built by hand until the knockout formats fill it) in the site's
    index, from file://, its lines drawn by the page's own script."""
    read = TournamentFolder.standings

    def with_bracket(self: TournamentFolder, snap: Snapshot | None = None) -> StandingsReport:
        return read(self, snap).model_copy(update={"bracket": knockout()})

    monkeypatch.setattr(TournamentFolder, "standings", with_bracket)
    export_site(TournamentFolder(tournament), tmp_path / "site")
    standings = json.loads((tmp_path / "site" / "standings.json").read_text(encoding="utf-8"))
    assert standings["bracket"]["champion"] == "alpha"
    browser.get((tmp_path / "site" / "index.html").as_uri())
    assert browser.find_element(By.ID, "champion").text == "Champion: alpha"
    assert len(browser.find_elements(By.CSS_SELECTOR, ".bracket-table")) == 7
    drawn = {
        (path.get_attribute("data-from"), path.get_attribute("data-to"))
        for path in browser.find_elements(By.CSS_SELECTOR, "#bracket svg path")
    }
    assert ("W2-T2", "W3-T1") in drawn and len(drawn) == 6
    assert page_errors(browser) == []


HOSTILE = (
    "<img src=x onerror=\"document.title='pwned'\">",
    "</script><script>document.title='pwned'</script>",
)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("escaped", [True, False])
def test_a_bots_name_is_text_in_the_site(tmp_path: Path, browser: WebDriver, escaped: bool) -> None:
    """A final's bots are named by their authors: a name that is markup stays text in every
    page of the site. The control writes the same names into a page unescaped: they run."""
    if not escaped:
        control = tmp_path / "control.html"
        control.write_text(f"<!DOCTYPE html><title>site</title><p>{HOSTILE[0]}</p>")
        browser.get(control.as_uri())
        WebDriverWait(browser, 10).until(lambda d: d.title == "pwned")
        return
    config = tmp_path / "names.toml"
    bots = "".join(
        f'[[bots]]\nname = {json.dumps(name)}\nspec = "example:{spec}"\n'
        for name, spec in zip(HOSTILE, ("random", "first"), strict=True)
    )
    config.write_text(
        f'name = "names"\ngame = "capture-the-commander"\n{bots}'
        '[format]\nkind = "round-robin"\ngames_per_pairing = 2\n'
    )
    ran = arena("tournament", "run", config, "--out", tmp_path / "out", "--no-progress")
    assert ran.returncode == 0, ran.stderr
    export_site(TournamentFolder(tmp_path / "out"), tmp_path / "site")
    pages = [tmp_path / "site" / "index.html", *(tmp_path / "site" / "matches").glob("*.html")]
    assert len(pages) == 3
    for shown in pages:
        browser.get(shown.as_uri())
        assert browser.title != "pwned", shown
        assert browser.find_elements(By.CSS_SELECTOR, "img[src='x']") == [], shown
        assert HOSTILE[0] in browser.find_element(By.TAG_NAME, "body").text, shown
    browser.get(pages[0].as_uri())
    seats = browser.find_elements(By.CSS_SELECTOR, "#match-list .seat")
    assert {seat.get_attribute("data-bot") for seat in seats} == set(HOSTILE)


@pytest.mark.parametrize("release", ["hidden", "participants"])
def test_results_not_yet_released_are_not_exported(
    tournament: Path, tmp_path: Path, release: str
) -> None:
    copy = tmp_path / "final"
    shutil.copytree(tournament, copy)
    assert arena("tournament", "release", copy, "--to", release).returncode == 0
    refused = arena("tournament", "export", copy, "-o", tmp_path / "site")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip() == (
        f"error: the results are {release}: a site shows them to everyone; "
        "`arena tournament release DIR --to public` first"
    )
    assert not (tmp_path / "site").exists()
    # The control: released to the public, the same folder is exported.
    assert arena("tournament", "release", copy, "--to", "public").returncode == 0
    assert arena("tournament", "export", copy, "-o", tmp_path / "site").returncode == 0
    assert (tmp_path / "site" / "index.html").is_file()
