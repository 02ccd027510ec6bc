"""Tournaments of real bot processes over gRPC: every match played once, persistent bot
processes (or fresh ones when asked), 3- and 4-seat tables, and the Dask executor."""

from __future__ import annotations

import os
import socket
import sys
from collections import Counter
from pathlib import Path

import pytest

from referee.bots.sandbox import Sandbox, Tier, probe_bubblewrap
from referee.replays.verify import verify
from tournaments.config import TournamentConfig, parse_config
from tournaments.run_progress import NoProgress
from tournaments.runner import RunSummary, run_tournament
from tournaments.schedule import Ledger, scheduler_for
from tournaments.store import Store


def config(game: str, bots: list[dict[str, str]], **fmt: object) -> TournamentConfig:
    run = fmt.pop("run", {})
    return parse_config(
        {
            "name": "test",
            "game": game,
            "seed": 11,
            "bots": bots,
            "format": {"kind": "round-robin", **fmt},
            "time_control": {"decision_ms": 5000},
            "run": {"concurrency": 2, **run},  # type: ignore[dict-item]
        }
    )


THREE = [
    {"spec": "example:opposing-force"},
    {"spec": "example:random"},
    {"spec": "example:first"},
]


def play(folder: Path, cfg: TournamentConfig) -> RunSummary:
    store = Store.create(folder, cfg)
    try:
        quiet = NoProgress()
        return run_tournament(folder, store, quiet)
    finally:
        store.close()


def processes_started(folder: Path) -> Counter[str]:
    """Bot name -> processes started: each process writes its own log file."""
    return Counter(p.name.rsplit("-", 1)[0] for p in (folder / "logs").glob("*.log"))


def test_a_round_robin_plays_every_match_once_with_persistent_bot_processes(
    tmp_path: Path,
) -> None:
    cfg = config("opposing-force", THREE, games_per_pairing=4)
    summary = play(tmp_path, cfg)
    assert summary.state == "finished" and not summary.failed
    expected = [j.match_id for j in scheduler_for(cfg, b"s" * 32).next_jobs(Ledger()) or []]
    assert len(expected) == 12
    assert list(summary.ledger.scheduled) == expected
    assert sorted(summary.ledger.finished) == sorted(expected)
    for record in summary.ledger.records():
        assert not record.forfeits, record
        assert record.replay is not None
        verify(Path(record.replay))
    # Each bot plays 8 matches, at most 2 at once, and never two seatings of a deal on one
    # process: a new process only when the idle ones have all seen the deal (at most
    # seats - 1 of them) and the others are busy (at most concurrency - 1): at most 3, not 8.
    started = processes_started(tmp_path)
    assert set(started) == {"opposing-force", "random", "first"}
    assert all(count <= 2 + 2 - 1 for count in started.values()), started
    reopened = Store.open(tmp_path, read_only=True)
    assert len(reopened.ledger().finished) == 12 and reopened.get("state") == "finished"


def test_restart_bots_gives_every_match_fresh_processes(tmp_path: Path) -> None:
    cfg = config("opposing-force", THREE[1:], games_per_pairing=2, run={"restart_bots": True})
    summary = play(tmp_path, cfg)
    assert len(summary.ledger.finished) == 2
    assert processes_started(tmp_path) == {"random": 2, "first": 2}


@pytest.mark.parametrize(("game", "seats"), [("capture-the-commander", 3), ("strato-sphere", 4)])
def test_three_and_four_seat_tables(tmp_path: Path, game: str, seats: int) -> None:
    bots = [
        {"spec": f"example:{game}", "name": "strategy"},
        {"spec": "example:random"},
        {"spec": "example:first"},
        {"spec": "example:random", "name": "random2"},
    ][:seats]
    cfg = config(game, bots, seats=seats, games_per_pairing=seats)
    summary = play(tmp_path, cfg)
    records = summary.ledger.records()
    assert len(records) == seats and not any(r.forfeits for r in records)
    # One deal, replayed with the seats rotated: every bot holds every seat once.
    assert len({r.deal for r in records}) == 1
    for seat in range(seats):
        assert sorted(r.bots[seat] for r in records) == sorted(
            b.get("name") or _name(b) for b in bots
        )
    for record in records:
        assert len(record.ranks) == seats
        verify(Path(record.replay or ""))


def _name(bot: dict[str, str]) -> str:
    return bot["spec"].removeprefix("example:")


def test_the_dask_executor_plays_on_a_local_cluster(tmp_path: Path) -> None:
    cfg = config(
        "orc-pit-fighting",
        [{"spec": "example:orc-pit-fighting"}, {"spec": "example:random"}],
        games_per_pairing=4,
        run={"executor": "dask", "dask_workers": 2},
    )
    summary = play(tmp_path, cfg)
    assert summary.state == "finished" and len(summary.ledger.finished) == 4
    store = Store.open(tmp_path, read_only=True)
    workers = {row[0] for row in store.db.execute("SELECT worker FROM matches")}
    assert f"{socket.gethostname()}:{os.getpid()}" not in workers  # played on the workers
    for record in summary.ledger.records():
        verify(Path(record.replay or ""))


RAWBOT = Path(__file__).resolve().parent.parent / "bots" / "rawbot.py"


def test_a_crashed_bot_forfeits_and_its_next_match_gets_a_fresh_process(tmp_path: Path) -> None:
    bots = [
        {"spec": "example:random"},
        {"spec": f"cmd:{sys.executable} {RAWBOT} exit", "name": "crasher"},
        {"spec": f"cmd:{sys.executable} -c 'raise SystemExit(3)'", "name": "dud"},
    ]
    # One match at a time: with two, how many random processes are needed depends on which
    # match ends first (a dud's ends at once), up to 3 (concurrency + seats - 1).
    one_at_a_time = {"concurrency": 1}
    summary = play(tmp_path, config("opposing-force", bots, games_per_pairing=2, run=one_at_a_time))
    assert summary.state == "finished" and len(summary.ledger.finished) == 6
    causes = Counter(
        (r.bots[seat], cause) for r in summary.ledger.records() for seat, cause, _ in r.forfeits
    )
    # The dud never joins: every match of it is its no-show. The crasher exits mid-match.
    assert causes[("dud", "no_show")] == 4
    assert causes[("crasher", "crash")] == 2  # its match with the dud ends at the no-show
    detail = next(d for r in summary.ledger.records() for _, c, d in r.forfeits if c == "no_show")
    assert "exited with code 3 before joining" in detail
    started = processes_started(tmp_path)
    # A crashed process is never seated again: two crashed, and later matches need another.
    assert started["crasher"] >= 3 and started["dud"] == 4 and started["random"] <= 2


def test_a_tournament_in_the_bubblewrap_sandbox(tmp_path: Path) -> None:
    why_not = probe_bubblewrap()
    if why_not is not None:
        pytest.skip(f"bubblewrap cannot run here: {why_not}")
    cfg = config("opposing-force", THREE[:2], games_per_pairing=2).model_copy(
        update={"sandbox": Sandbox(tier=Tier.BUBBLEWRAP, memory_mb=1024)}
    )
    summary = play(tmp_path, cfg)
    assert summary.state == "finished" and len(summary.ledger.finished) == 2
    assert not any(r.forfeits for r in summary.ledger.records())


def test_a_replay_that_cannot_be_written_loses_no_result(tmp_path: Path) -> None:
    cfg = config("opposing-force", THREE[:2], games_per_pairing=2)
    store = Store.create(tmp_path, cfg)
    (tmp_path / "replays").write_text("a file where the replays' folder should be")
    try:
        quiet = NoProgress()
        summary = run_tournament(tmp_path, store, quiet)
    finally:
        store.close()
    assert summary.state == "finished" and not summary.failed
    records = Store.open(tmp_path, read_only=True).ledger().records()
    assert len(records) == 2 and all(r.replay is None for r in records)
    assert sorted(r.ranks for r in records) == sorted(r.ranks for r in summary.ledger.records())
