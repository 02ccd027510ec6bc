"""What the contest's-end tests share: real HTTP calls with a token as the header, the audit log
as `arena ladder audit --json` prints it, and an author made through the real CLI."""

from __future__ import annotations

import json
import sqlite3
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.tournaments.ladder.test_authors import token_of
from tests.tournaments.web.harness import arena


def call(
    url: str, token: str | None = None, body: object = None, method: str | None = None
) -> tuple[int, Any]:
    """(status, JSON body) of a request, refusals included; a 429 (the per-address limit of a
    loaded test) is waited out and asked again."""
    data = None if body is None else json.dumps(body).encode()
    for _ in range(40):
        request = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                text = answer.read().decode()
                is_json = answer.headers.get_content_type() == "application/json"
                return answer.status, json.loads(text) if is_json else text
        except urllib.error.HTTPError as error:
            if error.code != 429:
                text = error.read().decode()
                return error.code, json.loads(text) if text.startswith("{") else text
        time.sleep(0.5)
    raise AssertionError(f"{url}: 429 forty times")


def audit(folder: Path) -> list[dict[str, Any]]:
    printed = arena("ladder", "audit", folder, "--json")
    assert printed.returncode == 0, printed.stderr
    entries: list[dict[str, Any]] = json.loads(printed.stdout)["entries"]
    return entries


def said(entries: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """(who, action, subject, why) of each entry, in order."""
    return [(e["who"], e["action"], e["subject"], e["why"]) for e in entries]


def new_author(folder: Path, name: str, why: str = "") -> str:
    added = arena("ladder", "author", "add", folder, "--name", name, "--why", why)
    assert added.returncode == 0, added.stderr
    return token_of(added.stdout)


def sql(folder: Path, statement: str, *args: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(folder / "ladder.sqlite", timeout=30) as db:
        return db.execute(statement, args).fetchall()
