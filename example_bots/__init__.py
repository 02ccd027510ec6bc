"""Example bots on the SDK: a random, a first-legal-action and a search (ISMCTS) bot for any
game, and a strategy bot per game.

`example:NAME` in a bot SPEC names one of them: pyproject.toml registers each under its NAME
(entry points of the group "arena.example_bots"), and the referee finds it there by name
(referee/bots/launcher.py, `examples()`), without importing this package.
"""
