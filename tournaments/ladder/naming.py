"""What a name on the ladder may be (a bot's, an author's, a team's), and when two names are too
alike to stand side by side on a leaderboard."""

from __future__ import annotations

import re

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")


def folded(name: str) -> str:
    """What two names must not share: `Chatty`, `chatty.` and `chat-ty` would pass for
    `chatty` on a leaderboard."""
    return re.sub(r"[^0-9a-z]", "", name.casefold())
