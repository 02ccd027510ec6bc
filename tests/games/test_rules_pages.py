"""Every game's rules page (docs/games/NAME.md) names the rules version its engine plays: the
first "rules version `...`" on the page is the engine's `rules_version`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from arena_games import GAMES

PAGES = Path(__file__).resolve().parents[2] / "docs" / "games"
STATED = re.compile(r"rules\s+version\s+`([a-z-]+/\d+)`")


def stated_version(page: str) -> str | None:
    found = STATED.search(page)
    return found.group(1) if found else None


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_rules_page_states_its_engines_rules_version(name: str) -> None:
    page = (PAGES / f"{name}.md").read_text(encoding="utf-8")
    assert stated_version(page) == GAMES[name].rules_version, f"docs/games/{name}.md"


def test_a_page_behind_its_engine_is_caught() -> None:
    """The control: the page as it stood (officers-battle/2) against the engine's /3."""
    page = (PAGES / "officers-battle.md").read_text(encoding="utf-8")
    stated = "rules version `officers-battle/3`"
    behind = page.replace(stated, stated.replace("/3", "/2"), 1)
    assert stated_version(behind) == "officers-battle/2" != GAMES["officers-battle"].rules_version
