"""The exported replay pages in a real headless Chromium: for each game, step through a
match and check what the page shows against the model (the right cards face up or face down
for the viewpoint), and keep a screenshot. With ARENA_VIEWER_SHOTS=FOLDER the screenshots
are also written there, one per game (docs/viewer/ holds them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

from referee.replays.viewer import model, page
from tests.browser import REQUIRED, open_page, page_errors, screenshot, start_browser

Json = dict[str, Any]


def export(path: Path, viewer: str, folder: Path) -> tuple[Path, Json]:
    data = model.load(path, viewer)
    out = folder / f"{path.stem}-{viewer}.html"
    out.write_text(page.render(data), encoding="utf-8")
    return out, data


def frame_shown(driver: WebDriver) -> int:
    return int(driver.find_element(By.ID, "table").get_attribute("data-frame") or -1)


def go(driver: WebDriver, frame: int) -> None:
    """Move the slider to frame, as a person dragging it would."""
    driver.execute_script(
        "const s = document.getElementById('slider'); s.value = arguments[0];"
        "s.dispatchEvent(new Event('input'));",
        frame,
    )
    assert frame_shown(driver) == frame


def faces(element: WebElement) -> list[str]:
    return [
        c.get_attribute("data-card") or ""
        for c in element.find_elements(By.CSS_SELECTOR, ".card[data-card]")
    ]


def backs(element: WebElement) -> int:
    return len(element.find_elements(By.CSS_SELECTOR, ".card.back"))


def hand(driver: WebDriver, seat: int) -> WebElement:
    return driver.find_element(By.CSS_SELECTOR, f'[data-zone="hand"][data-seat="{seat}"]')


def check_hands(driver: WebDriver, data: Json, frame: int, sizes: list[int]) -> None:
    """The viewing seat's hand face up, card for card; every other hand face down."""
    viewer = data["viewer"]
    for seat, size in enumerate(sizes):
        shown = hand(driver, seat)
        if viewer == str(seat):
            assert faces(shown) == data["frames"][frame]["views"][viewer]["hand"]
            assert backs(shown) == 0
        else:
            assert faces(shown) == [], (seat, faces(shown))
            assert backs(shown) == size


@pytest.mark.timeout(120)
def test_opposing_force_as_a_seat_and_the_controls(
    browser: WebDriver, replays: dict[str, Path], tmp_path: Path
) -> None:
    out, data = export(replays["opposing-force"], "0", tmp_path)
    open_page(browser, out)
    last = len(data["frames"]) - 1
    middle = last // 2
    go(browser, middle)
    obs = data["frames"][middle]["views"]["0"]
    check_hands(browser, data, middle, obs["hand_sizes"])
    for position in obs["positions"]:
        for seat, side in enumerate(position["sides"]):
            shown = browser.find_element(
                By.CSS_SELECTOR,
                f'.of-position[data-position="{position["index"]}"] [data-seat="{seat}"]',
            )
            assert sorted(faces(shown)) == sorted(side["cards"])
    claimed = browser.find_elements(By.CSS_SELECTOR, ".of-marker.claimed")
    assert len(claimed) == sum("claimed_by" in p for p in obs["positions"])
    # The controls: last, first, the buttons, the slider and autoplay.
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.END)
    assert frame_shown(browser) == last
    assert browser.find_element(By.ID, "result").text.startswith(data["result"]["reason"])
    body.send_keys(Keys.HOME)
    assert frame_shown(browser) == 0
    browser.find_element(By.ID, "next").click()
    browser.find_element(By.ID, "next").click()
    browser.find_element(By.ID, "prev").click()
    assert frame_shown(browser) == 1
    body.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT, Keys.ARROW_LEFT)
    assert frame_shown(browser) == 2
    browser.find_element(By.ID, "last").click()
    assert frame_shown(browser) == last
    browser.find_element(By.ID, "first").click()
    assert frame_shown(browser) == 0
    go(browser, middle)
    Select(browser.find_element(By.ID, "speed")).select_by_visible_text("fast")
    browser.find_element(By.ID, "play").click()
    WebDriverWait(browser, 20).until(lambda d: frame_shown(d) >= middle + 2)
    browser.find_element(By.ID, "play").click()
    go(browser, middle)
    screenshot(browser, tmp_path, "opposing-force")
    assert page_errors(browser) == []


@pytest.mark.timeout(120)
def test_capture_the_commander_as_the_referee_switching_viewpoints(
    browser: WebDriver, replays: dict[str, Path], tmp_path: Path
) -> None:
    out, data = export(replays["capture-the-commander"], "referee", tmp_path)
    open_page(browser, out)
    frame = len(data["frames"]) // 2
    go(browser, frame)
    truth = data["frames"][frame]["truth"]["formations"]
    views = data["frames"][frame]["views"]
    for viewpoint in ("referee", "1", "public"):
        Select(browser.find_element(By.ID, "viewpoint")).select_by_value(viewpoint)
        formations = views["public" if viewpoint == "referee" else viewpoint]["formations"]
        for formation in formations:
            seat = formation["seat"]
            for slot in formation["slots"]:
                shown = browser.find_element(
                    By.CSS_SELECTOR,
                    f'.ctc-player[data-seat="{seat}"] .ctc-slot[data-slot="{slot["number"]}"]',
                )
                assert shown.get_attribute("data-state") == slot["state"]
                if slot["state"] == "hidden":
                    assert faces(shown) == [] and backs(shown) == 1
                    peek = shown.find_elements(By.CSS_SELECTOR, "[data-peek]")
                    # Only the referee sees what lies face down.
                    expected = [truth[seat][slot["number"] - 1]] if viewpoint == "referee" else []
                    assert [p.get_attribute("data-peek") for p in peek] == expected
                elif slot["state"] == "empty":
                    assert faces(shown) == [] and backs(shown) == 0
                else:
                    assert faces(shown) == [slot["card"]]
    Select(browser.find_element(By.ID, "viewpoint")).select_by_value("referee")
    screenshot(browser, tmp_path, "capture-the-commander")
    assert page_errors(browser) == []


@pytest.mark.timeout(120)
def test_officers_battle_as_south(
    browser: WebDriver, replays: dict[str, Path], tmp_path: Path
) -> None:
    out, data = export(replays["officers-battle"], "1", tmp_path)
    open_page(browser, out)
    frame = len(data["frames"]) // 3
    go(browser, frame)
    obs = data["frames"][frame]["views"]["1"]
    north, south = obs["sides"]
    assert faces(hand(browser, 1)) == obs["hand"]
    # North's hand: the cards everybody saw going into it face up, the rest face down.
    assert faces(hand(browser, 0)) == north["known_hand"]
    assert backs(hand(browser, 0)) == north["hand_size"] - len(north["known_hand"])
    for side in (north, south):
        for front in side["fronts"]:
            column = browser.find_element(
                By.CSS_SELECTOR,
                f'.ob-side[data-seat="{side["seat"]}"] .ob-position'
                f'[data-position="{front["position"]}"] [data-zone="pile"]',
            )
            # The pile stays in front of a killed officer too.
            assert faces(column) == front["pile"]
    screenshot(browser, tmp_path, "officers-battle")
    assert page_errors(browser) == []


@pytest.mark.timeout(120)
def test_orc_pit_fighting_as_the_public(
    browser: WebDriver, replays: dict[str, Path], tmp_path: Path
) -> None:
    out, data = export(replays["orc-pit-fighting"], "public", tmp_path)
    open_page(browser, out)
    combats = [i for i, f in enumerate(data["frames"]) if "combat" in f["views"]["public"]]
    frame = combats[len(combats) // 2] if combats else len(data["frames"]) // 2
    go(browser, frame)
    obs = data["frames"][frame]["views"]["public"]
    check_hands(browser, data, frame, [s["hand_size"] for s in obs["seats"]])
    for s in obs["seats"]:
        fighter = browser.find_element(By.CSS_SELECTOR, f'.opf-fighter[data-seat="{s["seat"]}"]')
        damage = fighter.find_element(By.CSS_SELECTOR, "[data-damage]")
        assert damage.get_attribute("data-damage") == str(s["damage"])
        assert faces(fighter.find_element(By.CSS_SELECTOR, '[data-zone="out"]')) == s["out_pile"]
    if combats:
        pit = browser.find_element(By.CSS_SELECTOR, '[data-zone="pit"]')
        for side in obs["combat"]["sides"]:
            shown = pit.find_element(By.CSS_SELECTOR, f'.side[data-seat="{side["seat"]}"]')
            # A Blank is face down to the public; every other play is face up.
            assert backs(shown) == sum(not p["cards"] for p in side["plays"])
    screenshot(browser, tmp_path, "orc-pit-fighting")
    assert page_errors(browser) == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", ["strato-sphere", "strato-sphere-4"])
def test_strato_sphere_as_a_seat(
    case: str, browser: WebDriver, replays: dict[str, Path], tmp_path: Path
) -> None:
    out, data = export(replays[case], "1", tmp_path)
    open_page(browser, out)
    frame = len(data["frames"]) // 2
    go(browser, frame)
    obs = data["frames"][frame]["views"]["1"]
    check_hands(browser, data, frame, obs["hand_sizes"])
    for node in obs["nodes"]:
        shown = browser.find_element(By.CSS_SELECTOR, f'.ss-node[data-node="{node["index"]}"]')
        assert faces(shown) == ([node["face_up"]] if "face_up" in node else [])
        assert backs(shown) == (1 if node["face_down"] else 0)
    screenshot(browser, tmp_path, case)
    assert page_errors(browser) == []


def test_a_missing_browser_fails_where_one_is_required(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no chromium, no chromedriver
    monkeypatch.delenv(REQUIRED, raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium"):
        start_browser()
    monkeypatch.setenv(REQUIRED, "1")
    with pytest.raises(pytest.fail.Exception, match="chromium and chromedriver not found"):
        start_browser()


def log_shown(driver: WebDriver) -> tuple[list[str], list[str]]:
    """The log's lines, and those of the frame shown (highlighted)."""
    lines: tuple[list[str], list[str]] = driver.execute_script(
        "const all = [...document.querySelectorAll('#log .entry')];"
        "return [all.map((e) => e.textContent),"
        " all.filter((e) => e.classList.contains('current')).map((e) => e.textContent)];"
    )
    return lines


@pytest.mark.timeout(120)
@pytest.mark.parametrize("appended_only", [False, True])
def test_the_log_stepped_back_and_forth_is_the_log_opened_there(
    appended_only: bool,
    browser: WebDriver,
    replays: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The log is appended a frame at a time and cut when stepping back: after any path to a
    frame it holds what opening the page at that frame shows. Control (appended_only): a log
    never cut when stepping back keeps the later frames' lines."""
    if appended_only:
        original = page.asset
        cut = "for (; logUpTo > index; logUpTo--) {"

        def never_cut(name: str) -> str:
            text = original(name)
            assert name != "viewer.js" or cut in text
            return text.replace(cut, "for (; false;) {") if name == "viewer.js" else text

        monkeypatch.setattr(page, "asset", never_cut)
    out, data = export(replays["officers-battle"], "referee", tmp_path)
    last = len(data["frames"]) - 1
    middle = last // 2
    browser.get(out.resolve().as_uri() + f"#frame={middle}")
    opened = log_shown(browser)
    assert opened[1], "the frame shown has no highlighted line"
    for viewpoint in ("1", "referee"):
        Select(browser.find_element(By.ID, "viewpoint")).select_by_value(viewpoint)
    go(browser, last)
    go(browser, middle - 3)
    go(browser, middle)
    if appended_only:
        assert log_shown(browser) != opened
    else:
        assert log_shown(browser) == opened
        assert page_errors(browser) == []
