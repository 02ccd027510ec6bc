"""The replay viewer as one self-contained HTML file: the page, its CSS and JavaScript and the
model all inline, so it opens anywhere with no network.

Assets live beside this module: viewer.css and viewer.js for every game, games/GAME.css and
games/GAME.js for each game's table; only the model's game is put in the file.
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from importlib import resources
from typing import Any

ASSETS = resources.files("referee.replays.viewer") / "assets"
_MARK = re.compile(r"\{(title|heading|meta|css|js|model)\}")


@cache
def asset(name: str) -> str:
    """The text of one asset, e.g. 'viewer.js' or 'games/opposing-force.css'."""
    return (ASSETS / name).read_text(encoding="utf-8")


def game_assets(game: str) -> tuple[str, str]:
    """The CSS and the JavaScript that draw game's table, after the shared ones."""
    css = asset("viewer.css") + "\n" + asset(f"games/{game}.css")
    js = asset("viewer.js") + "\n" + asset(f"games/{game}.js")
    return css, js


def model_script(model: dict[str, Any]) -> str:
    """The model as the text of a <script type="application/json">: no '<' at all, so nothing
    in it (a bot's name) can close the script or open a tag."""
    text = json.dumps(model, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render(model: dict[str, Any]) -> str:
    """The whole page for a model from referee.replays.viewer.model."""
    css, js = game_assets(model["game"])
    names = " vs ".join(seat["name"] for seat in model["seats"])
    viewer = model["viewer"]
    shown = viewer if viewer in ("referee", "public") else f"seat {viewer}"
    meta = f"match {model['match_id']} · rules {model['rules_version']} · shown as {shown}"
    parts = {
        "title": html.escape(f"{model['title']}: {names}"),
        "heading": html.escape(f"{model['title']}: {names}"),
        "meta": html.escape(meta),
        "css": css,
        "js": js,
        "model": model_script(model),
    }
    return _MARK.sub(lambda match: parts[match.group(1)], asset("page.html"))
