"""Tests referee.bots.launcher.examples: every example bot the arena registers by name (the
"arena.example_bots" entry points of pyproject.toml) loads as a Bot, and every example bot
module is registered."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest
from arena_sdk.bot import Bot

import example_bots
from referee.bots.launcher import EXAMPLE_BOTS, SpecError, examples, parse_spec


@pytest.mark.parametrize("point", entry_points(group=EXAMPLE_BOTS), ids=lambda p: p.name)
def test_each_registered_example_is_a_bot_and_starts_by_name(point: object) -> None:
    loaded = point.load()  # type: ignore[attr-defined]
    assert isinstance(loaded, type) and issubclass(loaded, Bot)
    name = point.name  # type: ignore[attr-defined]
    assert parse_spec(f"example:{name}").argv[-1] == examples()[name]


def test_every_example_bot_module_is_registered() -> None:
    modules = {p.stem for p in Path(example_bots.__file__).parent.glob("*_bot.py")}
    registered = {target.partition(":")[0].rpartition(".")[2] for target in examples().values()}
    assert modules == registered


def test_an_unknown_example_names_the_known_ones() -> None:
    with pytest.raises(SpecError, match="no example bot 'nobody'; known: capture-the-commander"):
        parse_spec("example:nobody")
