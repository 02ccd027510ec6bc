"""Suite-wide settings, and the session's shared folders: the replays of the viewer's tests and
the finished tournaments of the web pages' tests, which the command line's tests
(tests/commands/) use too."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest
import structlog
from selenium.webdriver.remote.webdriver import WebDriver

from referee.bots.sandbox import probe_bubblewrap
from tests.browser import REQUIRED as REQUIRED_BROWSER
from tests.browser import find_browser, start_browser
from tests.e2e.conftest import node_bot_problem
from tests.referee.replays.viewer.match_replays import replays
from tests.tournaments.web.finished_tournaments import three_seats, tournament

# Imported here, these session fixtures are seen by every folder and defined once: a fixture
# defined in two conftests would be played twice in one session.
__all__ = ["replays", "three_seats", "tournament"]


def pytest_sessionstart(session: pytest.Session) -> None:
    """CI sets ARENA_REQUIRE_BWRAP: there the bubblewrap tier must be tested for real, so a
    machine where it cannot run fails the suite instead of skipping those tests."""
    # A shell without job control starts a background command (`make test &`) with SIGINT
    # ignored, and every process the tests start would inherit that: the tests of Ctrl-C would
    # see commands run on. A handled signal is reset to the default in a child, so handling it
    # here gives the commands under test the Ctrl-C a terminal gives them.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if os.environ.get("ARENA_REQUIRE_BWRAP"):
        problem = probe_bubblewrap()
        if problem is not None:
            pytest.exit(f"ARENA_REQUIRE_BWRAP is set but bubblewrap cannot run: {problem}", 1)
    # ... and CI sets ARENA_REQUIRE_NODE: the Node.js example bot must play there.
    if os.environ.get("ARENA_REQUIRE_NODE"):
        problem = node_bot_problem()
        if problem is not None:
            pytest.exit(f"ARENA_REQUIRE_NODE is set but the Node.js bot cannot run: {problem}", 1)
    # The same for the viewer's tests in a real browser (ARENA_REQUIRE_BROWSER).
    if os.environ.get(REQUIRED_BROWSER):
        found = find_browser()
        if isinstance(found, str):
            pytest.exit(f"{REQUIRED_BROWSER} is set but {found}", 1)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`make test` runs the suite with `-n auto`: a worker a core, at least 2 (tests wait on bot
    processes and browsers too). Measured on 2 cores: 2 workers as fast as 4, at 20% less CPU."""
    return max(2, min(8, len(os.sched_getaffinity(0))))


@pytest.fixture(scope="session")
def chromium() -> Iterator[WebDriver]:
    """One headless Chromium for every test of the session (the viewer's and the web pages'):
    starting one costs a second."""
    driver = start_browser()
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(chromium: WebDriver) -> Iterator[WebDriver]:
    """The session's Chromium on a blank page, its console emptied: a page a test left open
    (following a server that has stopped since) logs nothing into the next test's."""
    chromium.get("about:blank")
    chromium.get_log("browser")
    yield chromium
    chromium.get("about:blank")


@pytest.fixture(autouse=True)
def structlog_restored() -> Iterator[None]:
    """structlog as it was before each test: a command run in-process (typer's CliRunner)
    configures it onto the stderr it lends, which is closed afterwards, and a later test's log
    line would then raise in whatever logged it."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)
