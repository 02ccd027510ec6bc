"""Text from a bot or a replay made safe to print: wherever it reaches a terminal (the commands,
the log lines, the stepper), its control characters are shown, not obeyed."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """The text with every control character but newline and tab shown as an escape (\\x1b,
    \\r): text from a bot or a replay then cannot move the cursor, retitle the window, clear
    the screen or write the clipboard of the terminal it is printed to."""
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", text)
