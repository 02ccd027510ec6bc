"""A bot is told which clock counts its time: the referee sets TimeControl.clock (and the wall
cap under the CPU clock) in each seat's MatchStart, and the SDK's budget_of reads it. Real bot
processes, each asserting what it was told by playing an illegal action when it is not what the
test expects (the referee then forfeits it)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

import pytest
from arena.v1 import referee_pb2 as pb
from arena_games import get_game
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings

from referee.bots.cpu_group import cpu_accounting_problem
from referee.bots.launcher import BotSpec, parse_spec
from referee.hosting.series import SeriesPlan, run_series
from referee.matches import match as match_module
from referee.matches.match import MatchOutcome

WALL_CAP = 7.5

CHECKER = """
from arena_sdk import Bot as _Bot, budget_of


class Bot(_Bot):
    told = None

    def on_match_start(self, match):
        self.told = budget_of(match)

    def act(self, observation, legal_actions):
        t = self.told
        if (t.clock, t.wall_cap, t.decision_ms, t.time_bank_ms) == EXPECTED:
            return 0
        return len(legal_actions)  # no such action: the referee forfeits this seat
"""


def _checker(tmp_path: Path, expected: tuple[object, ...]) -> BotSpec:
    path = tmp_path / "checker.py"
    path.write_text(CHECKER.replace("EXPECTED", repr(expected)))
    spec = parse_spec(str(path))
    return BotSpec(spec.spec, "checker", spec.argv, spec.workdir)


def _play(tmp_path: Path, clock: Literal["wall", "cpu"]) -> MatchOutcome:
    settings = MatchSettings(decision_ms=900, time_bank_ms=100, clock=clock, wall_cap=WALL_CAP)
    expected = (clock, WALL_CAP if clock == "cpu" else None, 900, 100)
    bots = [_checker(tmp_path, expected), _checker(tmp_path, expected)]
    plan = SeriesPlan(
        get_game("opposing-force"),
        bots,
        games=1,
        secret=practice_secret(3),
        settings=settings,
        connect_timeout_s=60.0,
        series=f"told-{clock}",
    )
    [(outcome, _)] = asyncio.run(run_series(plan))
    return outcome


@pytest.mark.parametrize(
    "clock",
    [
        "wall",
        pytest.param(
            "cpu",
            marks=pytest.mark.skipif(
                cpu_accounting_problem() is not None,
                reason=f"no CPU accounting: {cpu_accounting_problem()}",
            ),
        ),
    ],
)
def test_each_bot_reads_the_clock_that_counts_from_its_match_start(
    tmp_path: Path, clock: Literal["wall", "cpu"]
) -> None:
    outcome = _play(tmp_path, clock)
    assert outcome.forfeits == [], outcome.forfeits
    assert outcome.decisions > 0


@pytest.mark.skipif(cpu_accounting_problem() is not None, reason="no CPU accounting")
def test_control_a_referee_that_does_not_tell_the_clock_misleads_a_cpu_bot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a referee from before the field sent: no clock, which reads as the wall clock."""

    def untold(self: match_module.Match, seat: int | None) -> pb.TimeControl:
        return pb.TimeControl(
            decision_ms=self.settings.decision_ms, time_bank_ms=self.settings.time_bank_ms
        )

    monkeypatch.setattr(match_module.Match, "_told", untold)
    outcome = _play(tmp_path, "cpu")
    assert {f.cause.value for f in outcome.forfeits} == {"illegal_action"}
