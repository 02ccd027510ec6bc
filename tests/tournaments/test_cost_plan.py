"""`arena tournament plan`: its count of matches and decisions held against a real small run
of random bots (which play as the plan's sampled games do), the wall time's upper bound held
against the run's own, the count's bounds where the formats have no fixed count, and the
warning when more bots may think at once than there are cores, beside the same plan within
the cores (the control)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.tournaments.web.harness import arena
from tournaments.config import TournamentConfig, parse_config
from tournaments.cost_plan import CostPlan, available_cores, cost_plan, mean_decisions, plan_lines
from tournaments.store import Store

RANDOM_BOTS = """
[[bots]]
spec = "example:random"
[[bots]]
name = "second"
spec = "example:random"
[[bots]]
name = "third"
spec = "example:random"
[[bots]]
name = "fourth"
spec = "example:random"
"""

FORMATS = {
    "round-robin": 'kind = "round-robin"\ngames_per_pairing = 2',
    "swiss": 'kind = "swiss"\nrounds = 2\ngames_per_pairing = 2',
}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_the_plan_counts_what_a_real_run_plays(kind: str, tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(
        f'name = "cup"\ngame = "capture-the-commander"\nseed = 4\n{RANDOM_BOTS}'
        f"[format]\n{FORMATS[kind]}\n[time_control]\ndecision_ms = 200\n"
    )
    shown = arena("tournament", "plan", config, "--concurrency", "1", "--json")
    assert shown.returncode == 0, shown.stderr
    plan = json.loads(shown.stdout)
    started = time.monotonic()
    ran = arena(
        "tournament",
        "run",
        config,
        "--out",
        tmp_path / "out",
        "--no-progress",
        "--concurrency",
        "1",
        timeout=200,
    )
    took = time.monotonic() - started
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[:3] == plan_lines(
        CostPlan.model_validate(plan)
    )  # `run` prints the plan
    store = Store.open(tmp_path / "out", read_only=True)
    ledger = store.ledger()
    store.close()
    played = [record.decisions for record in ledger.records()]
    assert plan["bound"] == "exact" and plan["matches"] == len(ledger.scheduled) == len(played)
    assert plan["matches"] == {"round-robin": 12, "swiss": 8}[kind]
    assert plan["decisions"] == round(plan["matches"] * plan["decisions_per_match"])
    # Random bots play as the sampled games do: the mean of a dozen matches is near theirs.
    mean = sum(played) / len(played)
    assert 0.6 * plan["decisions_per_match"] < mean < 1.4 * plan["decisions_per_match"]
    upper = plan["wall_s_at_time_control"]
    assert upper == pytest.approx(plan["matches"] * plan["decisions_per_match"] * 0.2)
    assert took < upper  # random bots take far less than the time control allows
    assert plan["wall_s_at_think"] == pytest.approx(upper / 2)  # 100 ms against 200


def _config(fmt: dict[str, object], concurrency: int = 2) -> TournamentConfig:
    raw: dict[str, object] = {
        "name": "cup",
        "game": "opposing-force",
        "bots": [{"spec": "example:random", "name": f"b{n}"} for n in range(4)],
        "format": fmt,
        "run": {"concurrency": concurrency},
    }
    return parse_config(raw, "test")


def test_the_bounds_of_the_formats_without_a_fixed_count() -> None:
    ladder = cost_plan(_config({"kind": "ladder"}), cores=64)
    assert (ladder.matches, ladder.bound, ladder.decisions) == (None, "unknown", None)
    assert ladder.wall_s_at_time_control is None
    assert plan_lines(ladder)[0].endswith(": an unknown number of matches")
    capped = cost_plan(_config({"kind": "ladder", "matches": 30}), cores=64)
    assert (capped.matches, capped.bound) == (30, "exact")
    sprt = cost_plan(
        _config({"kind": "sprt", "candidate": "b0", "baseline": "b1", "max_pairs": 50}),
        cores=64,
    )
    assert (sprt.matches, sprt.bound) == (100, "at most")
    assert plan_lines(sprt)[0].endswith(": at most 100 matches")


def test_the_mean_length_is_measured_the_same_every_time() -> None:
    config = _config({"kind": "round-robin"})
    first = mean_decisions(config)
    assert first == mean_decisions(config)
    assert 20 < first < 200  # Opposing Force's random games: about 60 decisions


@pytest.mark.parametrize("crowded", [True, False])
def test_a_warning_when_more_bots_may_think_than_there_are_cores(
    tmp_path: Path, crowded: bool
) -> None:
    """On this machine's own cores: 2 seats a match, so cores // 2 matches fit; one more does
    not (the control: the fitting concurrency gives no warning)."""
    cores = available_cores()
    if cores < 2:
        pytest.skip("one core: no two-seat match fits")
    concurrency = cores // 2 + 1 if crowded else cores // 2
    config = tmp_path / "cup.toml"
    config.write_text(
        f'name = "cup"\ngame = "opposing-force"\n{RANDOM_BOTS}[format]\nkind = "round-robin"\n'
    )
    shown = arena("tournament", "plan", config, "--concurrency", str(concurrency))
    assert shown.returncode == 0, shown.stderr
    warnings = [line for line in shown.stdout.splitlines() if line.startswith("warning:")]
    if crowded:
        assert warnings == [
            f"warning: {concurrency} match{'' if concurrency == 1 else 'es'} at once of 2 seats "
            f"is {2 * concurrency} bots that may think at once, on {cores} cores: they then "
            "compete for the CPU, so a decision's time buys a bot less computation than on an "
            f"idle machine, and not the same for all; a concurrency of {cores // 2} keeps one "
            "core a bot"
        ]
    else:
        assert warnings == []
    assert f"{cores} cores" in shown.stdout


def test_a_file_that_is_not_a_tournament_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "cup.toml").write_text('name = "cup"\ngame = "no-such-game"\n')
    for path in (tmp_path / "nowhere.toml", tmp_path / "cup.toml"):
        shown = arena("tournament", "plan", path)
        assert shown.returncode == 2 and shown.stdout == "", shown.stderr
        assert shown.stderr.startswith("error: ") and "Traceback" not in shown.stderr
