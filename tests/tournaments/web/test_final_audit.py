"""A tournament's audit log on the operator's server: `arena web DIR --as referee` (loopback)
shows every release with who, when and why at /audit and /api/audit; the public server answers
404 for both, even once the results are public. Control: the same public server
with the operator-only guard overridden hands the log out. The page in headless Chromium: each
entry drawn as text, a `why` holding HTML makes no element (control: the template rendered
without autoescape makes one)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jinja2
import pytest
from fastapi import FastAPI
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser import page_errors
from tests.tournaments.web.harness import arena, get, get_json, web_server
from tournaments.config import parse_config
from tournaments.store import Store
from tournaments.web import pages, tournament_app, webserver
from tournaments.web.access import Access
from tournaments.web.webserver import BackgroundServer, prepare

MARKUP = '<img id="injected" src="x" onerror="document.title=1">'


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A final's folder released twice through the command line, the second time with HTML
    for a reason."""
    folder = tmp_path_factory.mktemp("final")
    cfg = parse_config(
        {
            "name": "audited-final",
            "game": "capture-the-commander",
            "seed": 1,
            "bots": [{"spec": "example:random", "name": f"s{n}"} for n in range(1, 5)],
            "format": {"kind": "knockout"},
        }
    )
    Store.create(folder, cfg.model_copy(update={"output": str(folder)})).close()
    for to, why in (("participants", "the bracket is drawn"), ("public", MARKUP)):
        ran = arena("tournament", "release", folder, "--to", to, "--why", why)
        assert ran.returncode == 0, ran.stderr
    return folder


def test_the_operator_reads_the_log_and_the_public_finds_no_such_page(released: Path) -> None:
    with web_server(released, "--as", "referee") as operator, web_server(released) as public:
        status, log = get_json(f"{operator}/api/audit")
        assert status == 200
        entries = log["entries"]
        assert [(e["who"], e["action"], e["why"]) for e in entries] == [
            ("operator", "released", "the bracket is drawn"),
            ("operator", "released", MARKUP),
        ]
        assert [e["detail"]["to"] for e in entries] == ["participants", "public"]
        assert all(e["at"].endswith("Z") or "+" in e["at"] for e in entries)
        status, _, page = get(f"{operator}/audit")
        assert status == 200 and "&lt;img id=&#34;injected&#34;" in page
        # The results are public by now, yet the log stays the operator's.
        for path in ("/audit", "/api/audit"):
            status, _, body = get(public + path)
            assert status == 404, (path, body)
            assert "the bracket is drawn" not in body
        status, _, _ = get(f"{public}/api/standings")
        assert status == 200  # the control of the release: results are public


def test_without_the_operator_guard_the_public_server_hands_out_the_log(
    released: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Control: the public server's app with operator_only overridden answers /api/audit."""
    made: Callable[..., FastAPI] = tournament_app.create_app

    def unguarded(*args: Any, **kwargs: Any) -> FastAPI:
        app = made(*args, **kwargs)
        app.dependency_overrides[tournament_app.operator_only] = lambda: None
        return app

    monkeypatch.setattr(webserver, "create_app", unguarded)
    server = BackgroundServer(*prepare(released, "127.0.0.1", 0, Access.PUBLIC, 4))
    try:
        status, log = get_json(server.address.rstrip("/") + "/api/audit")
    finally:
        server.stop()
    assert status == 200 and len(log["entries"]) == 2


@pytest.fixture
def operator_server(released: Path) -> Iterator[str]:
    with web_server(released, "--as", "referee") as url:
        yield url


@pytest.mark.timeout(120)
def test_the_audit_page_draws_every_entry_as_text(browser: WebDriver, operator_server: str) -> None:
    _, log = get_json(f"{operator_server}/api/audit")
    browser.get(operator_server + "/audit")
    rows = browser.find_elements(By.CSS_SELECTOR, "#audit tbody tr")
    shown = [[c.text for c in r.find_elements(By.TAG_NAME, "td")][:6] for r in rows]
    assert shown == [
        [str(e["seq"]), e["at"], e["who"], e["action"], e["subject"], e["why"]]
        for e in log["entries"]
    ]
    assert shown[-1][5] == MARKUP
    assert browser.find_elements(By.ID, "injected") == []
    assert browser.title == "audited-final: audit log"  # the onerror never ran
    assert page_errors(browser) == []


def test_the_template_without_autoescape_would_make_the_element(released: Path) -> None:
    """Control for the above: the same template with autoescape off writes the `why` as
    markup (an <img> with a script in its onerror)."""
    store = Store.open(released, read_only=True)
    entries = store.audit()
    store.close()
    escaped = pages.final_audit_page("audited-final", entries)
    loader = jinja2.PackageLoader("tournaments.web", "templates")
    raw = jinja2.Environment(loader=loader, autoescape=False)
    plain = raw.get_template("final_audit.html").render(name="audited-final", entries=entries)
    assert MARKUP not in escaped and MARKUP in plain
