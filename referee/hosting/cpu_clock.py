"""The check a host makes before the first match under the CPU clock (`clock = "cpu"`): every
bot must be a process this referee starts, in a sandbox whose processes it can account for, on
a machine where it can make CPU control groups. Otherwise nothing starts, with one line that
says why: a clock that silently counted some seats in wall time would be unfair to them."""

from __future__ import annotations

from collections.abc import Sequence

from arena_games.match_settings import MatchSettings

from referee.bots.cpu_group import CpuClockError, check_cpu_accounting
from referee.bots.launcher import BotSpec, SpecError
from referee.bots.sandbox import Sandbox, Tier


def check_cpu_clock(
    settings: MatchSettings, bots: Sequence[BotSpec], sandbox: Sandbox | None
) -> None:
    """SpecError with the reason when the settings' CPU clock cannot be kept for these bots;
    nothing under the wall clock."""
    if settings.clock != "cpu":
        return
    for bot in bots:
        if not bot.argv:
            raise SpecError(
                f'{bot.name} connects on its own, and clock = "cpu" counts only the bots this '
                "referee starts: a remote bot's processes are on another machine, where no "
                'control group of the referee can count them (use clock = "wall")'
            )
    if sandbox is not None and sandbox.tier is Tier.DOCKER:
        raise SpecError(
            'clock = "cpu" cannot count a docker container\'s CPU (its processes are the '
            "engine's, not the referee's): use the bubblewrap, rlimits or none tier"
        )
    try:
        check_cpu_accounting()
    except CpuClockError as exc:
        raise SpecError(str(exc)) from None
