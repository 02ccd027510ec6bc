"""`speed = "measure"` (the CPU clock): each host times a fixed reference workload at start and
scales the CPU allowances by how much slower than the reference machine it is; the replay
records the factor and the allowances played. Real bot processes, real control groups."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from arena_games import get_game
from arena_games import replay_file as replay
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings
from pydantic import ValidationError

from referee.bots.cpu_group import cpu_accounting_problem
from referee.bots.launcher import BotSpec, parse_spec
from referee.hosting import machine_speed
from referee.hosting.series import SeriesPlan, run_series
from referee.matches.match import MatchOutcome

BUDGET_MS = 200
SPIN_S = 0.3  # 1.5 times the budget, in the bot's own CPU time: within it at a factor of 2.5

SPINNER = f"""
import time
from arena_sdk import Bot as _Bot


class Bot(_Bot):
    spun = False

    def act(self, observation, legal_actions):
        if not self.spun:
            self.spun = True
            end = time.process_time() + {SPIN_S}
            while time.process_time() < end:
                pass
        return 0
"""


def _play(tmp_path: Path, speed: float | str) -> MatchOutcome:
    path = tmp_path / "spinner.py"
    path.write_text(SPINNER)
    spec = parse_spec(str(path))
    bots = [BotSpec(spec.spec, f"spin{n}", spec.argv, spec.workdir) for n in range(2)]
    settings = MatchSettings.model_validate(
        {"decision_ms": BUDGET_MS, "time_bank_ms": 0, "clock": "cpu", "wall_cap": 20.0}
        | {"speed": speed}
    )
    plan = SeriesPlan(
        get_game("opposing-force"),
        bots,
        games=1,
        secret=practice_secret(5),
        settings=settings,
        connect_timeout_s=60.0,
        series="speed",
    )
    [(outcome, _)] = asyncio.run(run_series(plan))
    return outcome


def _header(outcome: MatchOutcome) -> replay.Header:
    [header] = [r for r in outcome.records if isinstance(r, replay.Header)]
    return header


def _timeouts(outcome: MatchOutcome) -> list[str]:
    return [f.detail for f in outcome.forfeits if f.cause.value == "timeout"]


@pytest.mark.skipif(cpu_accounting_problem() is not None, reason="no CPU accounting")
def test_a_slow_machine_measured_gives_more_cpu_and_the_replay_says_how_much(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This machine made 2.5 times slower than the reference (the reference's time lowered):
    the spinner's 300 ms are within 200 ms scaled."""
    monkeypatch.setattr(machine_speed, "REFERENCE_S", machine_speed.reference_cpu_s() / 2.5)
    outcome = _play(tmp_path, "measure")
    settings = _header(outcome).settings
    assert isinstance(settings.speed, float) and 1.6 < settings.speed < 4.0, settings.speed
    assert settings.decision_ms == round(BUDGET_MS * settings.speed)
    assert not _timeouts(outcome), _timeouts(outcome)


@pytest.mark.skipif(cpu_accounting_problem() is not None, reason="no CPU accounting")
def test_control_unscaled_the_same_spinner_loses_on_time(tmp_path: Path) -> None:
    outcome = _play(tmp_path, 1.0)
    assert _timeouts(outcome) and "of CPU" in _timeouts(outcome)[0]
    assert _header(outcome).settings.speed == 1.0


def test_this_machine_measures_near_the_reference() -> None:
    """The reference time was set here: a loaded machine measures somewhat slower, never
    faster than half or slower than the clamp."""
    assert 0.5 < machine_speed.speed_factor() < machine_speed.SLOWEST


def test_a_speed_without_the_cpu_clock_is_refused() -> None:
    with pytest.raises(ValidationError, match='speed scales a CPU budget: it needs clock = "cpu"'):
        MatchSettings.model_validate({"speed": "measure"})
