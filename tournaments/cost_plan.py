"""What a tournament will cost, before it starts: `arena tournament plan FILE`, and the same
lines `arena tournament run` prints as it starts. The matches are the scheduler's count; the
decisions, the matches times the game's mean length, measured here by playing seeded games of
random legal actions with the engine at the tournament's seat count and options (a fraction
of a second; nothing is kept on disk); the wall time, those decisions spread over the run's
concurrency, at two speeds: every decision taking its whole decision_ms (an upper bound, the
time bank and the bots' start-up aside) and every one taking a typical think time.

When more bots think at once (concurrency times seats) than this machine has cores, they share
the cores: a decision's wall-clock budget then buys each bot less computation than on an idle
machine, and not the same for all, so the plan warns.
"""

from __future__ import annotations

import math
import os
import random
from typing import Literal

from arena_games import get_game
from arena_games.base import CHANCE
from arena_games.playout import play_out, random_policy
from pydantic import BaseModel, Field

from tournaments.config import Ladder, Sprt, TournamentConfig
from tournaments.schedule import scheduler_for

SAMPLE_GAMES = 32
THINK_MS = 100
Bound = Literal["exact", "at least", "at most", "unknown"]
# Formats whose scheduler counts the matches without the ones played only when needed (a
# knockout's tie-break deals): its count is a floor.
FLOORED = ("knockout", "double-elimination")


class CostPlan(BaseModel):
    name: str
    game: str
    format: str
    seats: int
    matches: int | None = Field(description="the number of matches, or its bound (see bound)")
    bound: Bound = Field(
        description="exact; at least (tie-breaks come on top); at most (an "
        "SPRT stops early); unknown (a ladder without a match limit)"
    )
    decisions_per_match: float = Field(description="the game's mean, from sampled games")
    sampled_games: int = Field(description="seeded games of random legal actions measured")
    decisions: int | None = Field(description="decisions expected in all")
    concurrency: int = Field(description="matches played at once")
    cores: int = Field(description="the cores this process may run on")
    decision_ms: int = Field(description="the time control's time for a decision")
    think_ms: int = Field(description="the typical think time assumed (--think-ms)")
    wall_s_at_time_control: float | None = Field(
        description="every decision taking its whole decision_ms: an upper bound, the time "
        "bank and the bots' start-up aside"
    )
    wall_s_at_think: float | None = Field(description="every decision taking think_ms")
    warning: str | None = Field(description="why the time control may not mean the same for all")


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def match_count(config: TournamentConfig) -> tuple[int | None, Bound]:
    fmt = config.format
    if isinstance(fmt, Sprt):  # pairs until the test decides, at most max_pairs of them
        return 2 * fmt.max_pairs, "at most"
    total = scheduler_for(config, b"plan").total
    if total is None:
        return None, "unknown"
    if fmt.kind in FLOORED:
        return total, "at least"
    return total, "unknown" if isinstance(fmt, Ladder) and fmt.matches is None else "exact"


def mean_decisions(config: TournamentConfig, games: int = SAMPLE_GAMES) -> float:
    """The game's mean decisions a match at the tournament's seats and options, over seeded
    games of random legal actions (the same every time)."""
    game = get_game(config.game)
    total = 0
    for number in range(games):
        state = game.new_state(config.options, config.format.seats)
        chance = random.Random(f"plan:{number}:chance")
        play_out(state, chance, random_policy(random.Random(f"plan:{number}:policy")))
        total += sum(1 for step in state.history if step.seat != CHANCE)
    return total / games


def cost_plan(
    config: TournamentConfig,
    think_ms: int = THINK_MS,
    cores: int | None = None,
    games: int = SAMPLE_GAMES,
) -> CostPlan:
    cores = cores or available_cores()
    matches, bound = match_count(config)
    per_match = round(mean_decisions(config, games), 1)  # the figures below add up from it
    seats, concurrency = config.format.seats, config.run.concurrency
    decision_ms = config.time_control.decision_ms
    return CostPlan(
        name=config.name,
        game=config.game,
        format=config.format.kind,
        seats=seats,
        matches=matches,
        bound=bound,
        decisions_per_match=per_match,
        sampled_games=games,
        decisions=None if matches is None else round(matches * per_match),
        concurrency=concurrency,
        cores=cores,
        decision_ms=decision_ms,
        think_ms=think_ms,
        wall_s_at_time_control=wall_seconds(matches, per_match, concurrency, decision_ms),
        wall_s_at_think=wall_seconds(matches, per_match, concurrency, think_ms),
        warning=crowding(concurrency, seats, cores),
    )


def wall_seconds(matches: int | None, per_match: float, concurrency: int, ms: int) -> float | None:
    """Matches in waves of `concurrency`, each as long as its decisions one after another."""
    if matches is None:
        return None
    return math.ceil(matches / concurrency) * per_match * ms / 1000


def crowding(concurrency: int, seats: int, cores: int) -> str | None:
    thinking = concurrency * seats
    if thinking <= cores:
        return None
    fits = max(1, cores // seats)
    return (
        f"{concurrency} match{'' if concurrency == 1 else 'es'} at once of {seats} seats is "
        f"{thinking} bots that may think at "
        f"once, on {cores} cores: they then compete for the CPU, so a decision's time buys a "
        "bot less computation than on an idle machine, and not the same for all; "
        f"a concurrency of {fits} keeps one core a bot"
    )


def duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


def plan_lines(plan: CostPlan) -> list[str]:
    """The plan as `arena tournament plan` and `run` print it."""
    count = (
        "an unknown number of"
        if plan.matches is None
        else (str(plan.matches) if plan.bound == "exact" else f"{plan.bound} {plan.matches}")
    )
    lines = [
        f"plan: {plan.name} ({plan.game}, {plan.format}, {plan.seats} seats): {count} matches",
        f"decisions: {_expected(plan)} ({plan.decisions_per_match:g} a match, the mean of "
        f"{plan.sampled_games} games of random legal actions)",
    ]
    if plan.wall_s_at_time_control is not None and plan.wall_s_at_think is not None:
        lines.append(
            f"wall time: at most {duration(plan.wall_s_at_time_control)} at the time control "
            f"({plan.decision_ms} ms a decision), about {duration(plan.wall_s_at_think)} at "
            f"{plan.think_ms} ms a decision; {plan.concurrency} "
            f"match{'' if plan.concurrency == 1 else 'es'} at once, {plan.cores} cores"
        )
    if plan.warning:
        lines.append(f"warning: {plan.warning}")
    return lines


def _expected(plan: CostPlan) -> str:
    if plan.decisions is None:
        return "unknown"
    about = {"exact": "about", "at least": "at least about", "at most": "at most about"}
    return f"{about.get(plan.bound, 'about')} {plan.decisions}"
