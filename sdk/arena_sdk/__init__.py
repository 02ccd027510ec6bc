"""The arena SDK: write a Bot, call run(bot). Everything a bot needs, and nothing else."""

__version__ = "0.1.0"

from arena_sdk.bot import Bot, choice_index, unwrap
from arena_sdk.budget import Budget, budget_of
from arena_sdk.client import ArenaError, SessionSummary, run

__all__ = [
    "ArenaError",
    "Bot",
    "Budget",
    "SessionSummary",
    "__version__",
    "budget_of",
    "choice_index",
    "run",
    "unwrap",
]
