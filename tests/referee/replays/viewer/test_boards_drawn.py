"""Every game's page draws what the text board holds, at every frame: real matches of the
example bots (two a game at each of its seat counts), exported as the referee's page and as a
seat's, read back from Chromium a whole match per script call. In each zone a renderer names
(data-board) the cards drawn face up are the zone's cards, the backs are its hidden ones, the
size it writes is the zone's; and every card `arena replay show --boards` lists is drawn."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from referee.replays import walk
from referee.replays.viewer import model, page
from tests.browser import open_page, page_errors
from tests.referee.replays.viewer.board_zones import (
    ZONES,
    Json,
    Zones,
    board_labels,
    expected,
    face_up,
    non_empty,
    officers_battle,
    zone,
)
from tests.referee.replays.viewer.match_replays import CASES, play

# Steps the slider through every frame and reads each zone's cards: one call for a match.
READ_EVERY_FRAME = """
const slider = document.getElementById("slider");
const frames = [];
for (let i = 0; i <= Number(slider.max); i++) {
  slider.value = String(i);
  slider.dispatchEvent(new Event("input"));
  const zones = {};
  const twice = [];
  for (const zone of document.querySelectorAll("#table [data-board]")) {
    const cards = [...zone.querySelectorAll(".card")]
      .filter((c) => c.parentElement.closest("[data-board]") === zone);
    const key = zone.dataset.board;
    if (key in zones) twice.push(key);
    zones[key] = [
      cards.filter((c) => c.dataset.card).map((c) => c.dataset.card),
      cards.filter((c) => c.classList.contains("back")).length,
      zone.dataset.count === undefined ? null : Number(zone.dataset.count),
      // A card in the DOM that takes no room on the page is not drawn. Asking lays the page
      // out, most of a frame's time: every fifth frame and the last are asked.
      i % 5 && i < Number(slider.max) ? 0
        : cards.filter((c) => c.getClientRects().length === 0).length,
    ];
  }
  frames.push({ shown: document.getElementById("table").dataset.frame, zones, twice });
}
return frames;
"""


def drawn(read: dict[str, Any]) -> tuple[Zones, int]:
    """The page's zones at one frame, and how many of their cards take no room."""
    zones = {
        key: zone(faces, backs, count) for key, (faces, backs, count, _) in read["zones"].items()
    }
    unseen = sum(z[3] for z in read["zones"].values())
    return non_empty(zones), unseen


def seat_viewpoint(case: str) -> str:
    """The last seat (South at two seats): not seat 0, whom every other page draws at the
    bottom, so the seat's page turns the table."""
    return str(len(CASES[case][1]) - 1)


def read_pages(
    browser: WebDriver, path: Path, viewpoint: str, folder: Path
) -> tuple[dict[str, Any], list[dict[str, Any]], float]:
    data = model.load(path, viewpoint)
    out = folder / f"{path.stem}-{viewpoint}.html"
    out.write_text(page.render(data), encoding="utf-8")
    open_page(browser, out)
    started = time.monotonic()
    frames: list[dict[str, Any]] = browser.execute_script(READ_EVERY_FRAME)
    return data, frames, time.monotonic() - started


def mismatches(data: dict[str, Any], frames: list[dict[str, Any]], viewpoint: str) -> list[str]:
    """Each frame whose drawing differs from the observations, zone by zone."""
    wrong = []
    for number, (frame, read) in enumerate(zip(data["frames"], frames, strict=True)):
        assert read["shown"] == str(number)
        assert read["twice"] == [], f"frame {number}: zones named twice {read['twice']}"
        want = expected(data["game"], frame, viewpoint)
        got, unseen = drawn(read)
        assert unseen == 0, f"frame {number}: {unseen} cards take no room on the page"
        for key in sorted(want.keys() | got.keys()):
            if want.get(key) != got.get(key):
                wrong.append(f"frame {number} {key}: drawn {got.get(key)}, holds {want.get(key)}")
    return wrong


@pytest.fixture(scope="module")
def second_games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """case -> a second match of it, on another seed."""
    folder = tmp_path_factory.mktemp("second-games")
    return {case: play(game, bots, folder / case, seed=4) for case, (game, bots) in CASES.items()}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_frame_draws_every_zone(
    case: str,
    browser: WebDriver,
    replays: dict[str, Path],
    second_games: dict[str, Path],
    tmp_path: Path,
) -> None:
    for path in (replays[case], second_games[case]):
        for viewpoint in ("referee", seat_viewpoint(case)):
            data, frames, took = read_pages(browser, path, viewpoint, tmp_path)
            wrong = mismatches(data, frames, viewpoint)
            assert wrong == [], f"{path.name} as {viewpoint}: {len(wrong)} zones differ, " + (
                "; ".join(wrong[:5])
            )
            print(f"{path.name} as {viewpoint}: {len(frames)} frames read in {took:.1f} s")
    assert page_errors(browser) == []


# The renderers as they were (control): Officers' Battle drew the killing cards in place of
# the pile under a killed officer, Orc Pit Fighting the discard pile's top five only; and a
# side hidden by a style is in the DOM but not drawn.
BUGS = {
    "officers-battle": (
        "games/officers-battle.js",
        "for (const label of position.pile) {",
        "for (const label of casualty && !position.officer ? casualty.cards : position.pile) {",
        "pile/",
    ),
    "orc-pit-fighting": (
        "games/orc-pit-fighting.js",
        "A.fan(discard, { small: true, tight: true })",
        "A.fan(discard.slice(-5), { small: true, tight: true })",
        "discard",
    ),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", sorted(BUGS))
def test_control_the_old_renderers_are_caught(
    case: str,
    browser: WebDriver,
    replays: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name, fixed, broken, key = BUGS[case]
    original = page.asset

    def as_it_was(asked: str) -> str:
        text = original(asked)
        if asked == name:
            assert fixed in text
            return text.replace(fixed, broken)
        return text

    monkeypatch.setattr(page, "asset", as_it_was)
    data, frames, _ = read_pages(browser, replays[case], "1", tmp_path)
    wrong = mismatches(data, frames, "1")
    assert wrong, "the old renderer drew every zone right: this match cannot show the bug"
    assert all(f" {key}" in line for line in wrong), wrong[:5]


@pytest.mark.timeout(120)
def test_control_cards_in_the_dom_but_hidden_are_not_drawn(
    browser: WebDriver, replays: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = page.asset

    def hidden(asked: str) -> str:
        text = original(asked)
        return text + "\n.of-side { display: none; }" if asked.endswith("force.css") else text

    monkeypatch.setattr(page, "asset", hidden)
    data, frames, _ = read_pages(browser, replays["opposing-force"], "1", tmp_path)
    with pytest.raises(AssertionError, match="take no room"):
        mismatches(data, frames, "1")


# Games whose text board lists every card the page draws. Strato-Sphere's writes the size of
# its discard pile, whose top the page draws; Orc Pit Fighting's writes the size of the Flair
# piles and leaves out the Pit's hearts and other cards and a seat's drawn cards.
BOARD_LISTS_EVERY_CARD = {"opposing-force", "capture-the-commander", "officers-battle"}


def board_misses(path: Path) -> list[str]:
    """Each frame and viewpoint (but the referee's, which is every seat's) where the text
    board lists a card the page's zones do not hold, or (where the board lists every card)
    the zones hold a card the board does not list."""
    data = model.load(path, "referee")
    misses = []
    for viewpoint in [key for key in data["viewpoints"] if key != "referee"]:
        boards = walk.view(path, viewpoint, None, boards=True).boards
        assert boards is not None
        for number, (frame, board) in enumerate(zip(data["frames"], boards, strict=True)):
            listed = board_labels(board, viewpoint)
            drawn = face_up(expected(data["game"], frame, viewpoint))
            if listed - drawn:
                misses.append(f"as {viewpoint}, frame {number}, not drawn: {dict(listed - drawn)}")
            if data["game"] in BOARD_LISTS_EVERY_CARD and drawn - listed:
                misses.append(f"as {viewpoint}, frame {number}, not listed: {dict(drawn - listed)}")
    return misses


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_page_draws_every_card_the_text_board_lists(
    case: str, replays: dict[str, Path], second_games: dict[str, Path]
) -> None:
    """The text board and the page's zones are read from the same observations: every card
    the board lists at a frame is among the cards the page draws there, and where the board
    lists every card, the page draws no other."""
    for path in (replays[case], second_games[case]):
        assert board_misses(path) == [], path.name


def test_control_zones_without_the_pile_under_a_killed_officer_miss_board_cards(
    replays: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pile_under_the_killed(base: Json, own: dict[int, Json]) -> Zones:
        zones = officers_battle(base, own)
        for side in base["sides"]:
            if "casualty" in side:
                zones.pop(f"pile/{side['seat']}/{side['casualty']['position']}")
        return zones

    monkeypatch.setitem(ZONES, "officers-battle", no_pile_under_the_killed)
    assert board_misses(replays["officers-battle"]) != []
