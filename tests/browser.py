"""Headless Chromium driven by selenium, for the viewer's tests: Debian's chromium and
chromium-driver, found on PATH (nothing is downloaded). Where ARENA_REQUIRE_BROWSER is set
(CI), a missing browser fails the tests instead of skipping them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

REQUIRED = "ARENA_REQUIRE_BROWSER"


def find_browser() -> tuple[str, str] | str:
    """(chromium, chromedriver), or what is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        missing = " and ".join(
            name for name, path in (("chromium", chromium), ("chromedriver", driver)) if not path
        )
        return f"{missing} not found (Debian: apt-get install chromium chromium-driver)"
    return chromium, driver


def start_browser() -> WebDriver:
    found = find_browser()
    if isinstance(found, str):
        if os.environ.get(REQUIRED):
            pytest.fail(f"{REQUIRED} is set but {found}")
        pytest.skip(found)
    chromium, driver = found
    options = Options()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",  # root in CI; the page is our own file
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


def open_page(driver: WebDriver, page: Path) -> None:
    driver.get(page.resolve().as_uri())
    # The first draw happens before the load event that get() waits for.
    assert driver.find_element("id", "table").get_attribute("data-frame") == "0"


def page_errors(driver: WebDriver) -> list[str]:
    """The page's JavaScript errors since the last call."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def screenshot(driver: WebDriver, folder: Path, name: str) -> None:
    """NAME.png in folder; with ARENA_VIEWER_SHOTS=FOLDER also there (docs/viewer/ holds them)."""
    shot = folder / f"{name}.png"
    assert driver.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    keep = os.environ.get("ARENA_VIEWER_SHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
