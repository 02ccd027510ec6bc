"""Each format through the runner, on a synthetic executor whose results come from fixed bot
strengths (no processes: the pairing and stopping logic is what is under test here)."""

from __future__ import annotations

import concurrent.futures
import random
from collections import Counter
from pathlib import Path

from arena_games.deals import practice_secret

from tournaments.config import TournamentConfig, parse_config
from tournaments.match_jobs import JobHostSpec, Played
from tournaments.records import MatchRecord
from tournaments.run_progress import NoProgress
from tournaments.runner import RunSummary, run_tournament
from tournaments.schedule import MatchJob, SprtSchedule, scheduler_for, table_jobs
from tournaments.store import Store


class StrengthExecutor:
    """The stronger bot at a table wins with probability strength gap + 1/2 (clamped); the
    draw is from the match's deal, so a job always has the same result."""

    def __init__(self, strength: dict[str, float]) -> None:
        self.strength = strength
        self.submitted: list[str] = []

    def submit(self, job: MatchJob) -> concurrent.futures.Future[Played]:
        self.submitted.append(job.match_id)
        rng = random.Random(f"{job.deal}:{job.bots}")
        keys = [self.strength[b] + rng.random() for b in job.bots]
        ranks = tuple(sum(1 for k in keys if k > mine) for mine in keys)
        record = MatchRecord(job.match_id, job.deal, job.bots, ranks, tuple(keys), "synthetic")
        future: concurrent.futures.Future[Played] = concurrent.futures.Future()
        future.set_result(Played(record, "synthetic", 0.0))
        return future

    def close(self) -> None:
        pass


def config(fmt: dict[str, object], bots: int = 4) -> TournamentConfig:
    return parse_config(
        {
            "name": "formats",
            "game": "capture-the-commander",
            "seed": 3,
            "bots": [{"spec": "example:random", "name": f"b{i}"} for i in range(bots)],
            "format": fmt,
            "run": {"concurrency": 3},
        }
    )


def run(tmp_path: Path, cfg: TournamentConfig, executor: StrengthExecutor) -> RunSummary:
    store = Store.create(tmp_path, cfg)
    progress = NoProgress()
    return run_tournament(tmp_path, store, progress, lambda spec, c: executor)


def strengths(n: int) -> dict[str, float]:
    return {f"b{i}": i / 10 for i in range(n)}


def test_table_jobs_rotate_seats_and_replay_each_deal_per_rotation() -> None:
    cfg = config({"kind": "round-robin", "seats": 3, "games_per_pairing": 6})
    jobs = table_jobs(cfg, "t0", ("x", "y", "z"))
    assert [j.bots for j in jobs[:3]] == [("x", "y", "z"), ("y", "z", "x"), ("z", "x", "y")]
    assert [j.deal for j in jobs] == ["t0-d0"] * 3 + ["t0-d1"] * 3
    fresh = config({"kind": "round-robin", "duplicate_deals": False, "games_per_pairing": 3})
    assert len({j.deal for j in table_jobs(fresh, "t0", ("x", "y"))}) == 3
    fixed = config({"kind": "round-robin", "duplicate_deals": False, "rotate_seats": False})
    assert {j.bots for j in table_jobs(fixed, "t0", ("x", "y"))} == {("x", "y")}


def test_round_robin_meets_every_pair(tmp_path: Path) -> None:
    summary = run(tmp_path, config({"kind": "round-robin"}, bots=5), StrengthExecutor(strengths(5)))
    met = Counter(frozenset(r.bots) for r in summary.ledger.records())
    assert len(met) == 10 and set(met.values()) == {2}


def test_a_gauntlet_sets_challengers_against_the_field_only(tmp_path: Path) -> None:
    cfg = config({"kind": "gauntlet", "challengers": ["b0", "b1"]}, bots=5)
    summary = run(tmp_path, cfg, StrengthExecutor(strengths(5)))
    tables = {frozenset(r.bots) for r in summary.ledger.records()}
    assert len(tables) == 6
    assert all(len(t & {"b0", "b1"}) == 1 for t in tables)


def test_swiss_pairs_each_round_after_the_last_and_avoids_rematches(tmp_path: Path) -> None:
    cfg = config({"kind": "swiss", "rounds": 3, "games_per_pairing": 2}, bots=6)
    executor = StrengthExecutor(strengths(6))
    summary = run(tmp_path, cfg, executor)
    records = summary.ledger.records()
    assert len(records) == 3 * 3 * 2 and summary.state == "finished"
    rounds = [r.match_id.split("-")[0] for r in records]
    assert rounds == sorted(rounds)  # round 2 only after round 1 is complete
    tables = Counter(frozenset(r.bots) for r in records)
    assert set(tables.values()) == {2}  # no pair meets in two rounds


def test_swiss_gives_the_odd_bot_a_bye(tmp_path: Path) -> None:
    cfg = config({"kind": "swiss", "rounds": 3}, bots=5)
    summary = run(tmp_path, cfg, StrengthExecutor(strengths(5)))
    by_round: dict[str, set[str]] = {}
    for r in summary.ledger.records():
        by_round.setdefault(r.match_id.split("-")[0], set()).update(r.bots)
    sitting_out = [({f"b{i}" for i in range(5)} - seated).pop() for seated in by_round.values()]
    assert len(sitting_out) == 3 and len(set(sitting_out)) == 3  # nobody sits out twice


def test_a_ladder_stops_at_its_match_limit_and_plays_everyone(tmp_path: Path) -> None:
    cfg = config({"kind": "ladder", "matches": 30}, bots=5)
    summary = run(tmp_path, cfg, StrengthExecutor(strengths(5)))
    records = summary.ledger.records()
    assert len(records) == 30 and summary.state == "finished"
    played = Counter(b for r in records for b in r.bots)
    assert min(played.values()) >= 8  # the least-played bot is always chosen next


def test_sprt_stops_once_a_stronger_candidate_is_shown(tmp_path: Path) -> None:
    cfg = config({"kind": "sprt", "candidate": "b1", "baseline": "b0", "max_pairs": 500}, bots=2)
    summary = run(tmp_path, cfg, StrengthExecutor({"b0": 0.0, "b1": 0.3}))
    pairs = len(summary.ledger.records()) // 2
    assert summary.state == "finished" and 2 <= pairs < 500
    assert sprt_verdict(cfg, summary) == "H1"


def sprt_verdict(cfg: TournamentConfig, summary: RunSummary) -> str:
    schedule = scheduler_for(cfg, practice_secret(3))
    assert isinstance(schedule, SprtSchedule)
    return schedule.status(summary.ledger).verdict


def test_sprt_between_equals_accepts_h0(tmp_path: Path) -> None:
    cfg = config(
        {"kind": "sprt", "candidate": "b1", "baseline": "b0", "elo1": 40, "max_pairs": 400},
        bots=2,
    )
    summary = run(tmp_path, cfg, StrengthExecutor({"b0": 0.0, "b1": 0.0}))
    assert summary.state == "finished" and len(summary.ledger.records()) < 800
    assert sprt_verdict(cfg, summary) == "H0"


def test_resuming_a_finished_tournament_plays_nothing_more(tmp_path: Path) -> None:
    cfg = config({"kind": "swiss", "rounds": 2}, bots=4)
    run(tmp_path, cfg, StrengthExecutor(strengths(4)))
    again = StrengthExecutor(strengths(4))
    store = Store.open(tmp_path)
    # No progress at all: a run nobody watches.
    summary = run_tournament(tmp_path, store, None, lambda spec, c: again)
    assert again.submitted == [] and summary.played_now == 0


def test_host_spec_carries_every_bot_and_setting(tmp_path: Path) -> None:
    from tournaments.runner import host_spec

    spec: JobHostSpec = host_spec(config({"kind": "round-robin"}), tmp_path, b"s" * 32)
    assert spec.bots == {f"b{i}": "example:random" for i in range(4)}
    assert spec.replays == str(tmp_path / "replays")
