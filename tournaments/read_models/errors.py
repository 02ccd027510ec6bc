"""What both read models refuse with, beside their own refusals: a folder they cannot read and
a question that does not fit what they hold. The web apps answer each with its status."""

from __future__ import annotations


class FolderError(Exception):
    """No tournament (or ladder) in the folder, or a state this arena cannot read."""


class BadQuery(ValueError):
    """Filters that do not fit the folder (an unknown bot, a win of nobody)."""
