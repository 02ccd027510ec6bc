"""The cores executor: a tournament over 2 referee processes plays the same matches with the same
results as the local executor; a referee process killed mid-tournament has its bots ended and
its matches played again elsewhere; Ctrl-C, SIGTERM or a killed runner leave no referee or bot
process behind; a live ladder plays on them too."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from arena_games import replay_file as replay
from arena_games.match_settings import MatchSettings

from referee.replays.verify import verify
from tests.tournaments.ladder.test_live import arena as ladder_arena
from tests.tournaments.ladder.test_live import finished as ladder_finished
from tests.tournaments.ladder.test_live import make_ladder, rows
from tests.tournaments.ladder.test_live import wait_for as ladder_wait
from tests.tournaments.test_resume import (
    ARENA,
    MARK,
    bot_processes,
    finished,
    marked,
    wait_for,
    write_config,
)
from tests.tournaments.test_runner import THREE, config, play
from tournaments.config import TournamentConfig
from tournaments.cores_executor import CoresExecutor
from tournaments.match_jobs import JobHostSpec
from tournaments.run_progress import NoProgress
from tournaments.runner import RunSummary, run_tournament
from tournaments.schedule import Ledger, MatchJob, scheduler_for
from tournaments.store import Store

SLEEPY = Path(__file__).resolve().parent.parent / "bots" / "sleepy_bot.py"


def outcomes(summary: RunSummary) -> dict[str, tuple[object, ...]]:
    return {
        r.match_id: (r.deal, r.bots, r.ranks, r.scores, r.reason, r.decisions, r.forfeits)
        for r in summary.ledger.records()
    }


def actions(path: str | None) -> list[tuple[int, int]]:
    """Every decision of a replay: the seat and the action it chose."""
    assert path is not None
    records = replay.read(Path(path))
    return [(r.seat, r.action) for r in records if isinstance(r, replay.DecisionRecord)]


def workers(folder: Path) -> set[str]:
    store = Store.open(folder, read_only=True)
    try:
        return {row[0] for row in store.db.execute("SELECT worker FROM matches")}
    finally:
        store.close()


def test_two_referee_processes_play_what_the_local_executor_plays(tmp_path: Path) -> None:
    local = play(tmp_path / "local", config("opposing-force", THREE, games_per_pairing=4))
    cores_run = {"executor": "cores", "processes": 2, "concurrency": 4}
    cfg = config("opposing-force", THREE, games_per_pairing=4, run=cores_run)
    cores = play(tmp_path / "cores", cfg)
    assert local.state == cores.state == "finished" and not cores.failed
    assert len(cores.ledger.finished) == 12
    assert outcomes(cores) == outcomes(local)
    for ours, theirs in zip(cores.ledger.records(), local.ledger.records(), strict=True):
        assert actions(ours.replay) == actions(theirs.replay), ours.match_id
        verify(Path(ours.replay or ""))
    # Played on both referee processes, neither of them this one.
    played_on = workers(tmp_path / "cores")
    assert len(played_on) == 2 and not any(w.endswith(f":{os.getpid()}") for w in played_on)
    # Each keeps its own bots (and their logs): two processes' `random-1` never share a file.
    logs = tmp_path / "cores" / "logs"
    assert sorted(p.name for p in logs.iterdir()) == ["referee-0", "referee-1"]
    assert all((logs / f"referee-{n}" / "referee.log").is_file() for n in (0, 1))


def slow_config(tmp_path: Path) -> TournamentConfig:
    bots = [{"spec": "example:random"}, {"spec": str(SLEEPY)}, {"spec": "example:first"}]
    return config(
        "opposing-force",
        bots,
        games_per_pairing=4,
        # Bots that lose their referee wait this long (up to the SDK's 30 s) to join again:
        # only their referee's parent ending them makes them go sooner.
        run={"executor": "cores", "processes": 2, "concurrency": 4, "rejoin_grace_s": 60},
    )


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended


def test_a_referee_process_killed_mid_tournament_loses_no_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_SLEEPY_S", "0.02")  # matches last long enough to be cut
    monkeypatch.setenv(MARK, str(tmp_path))  # its bots, for bot_processes
    made: list[CoresExecutor] = []
    killed: dict[str, object] = {}

    def make(spec: JobHostSpec, cfg: TournamentConfig) -> CoresExecutor:
        made.append(CoresExecutor(spec, 2))
        return made[0]

    def kill_one() -> None:
        def busy() -> bool:
            if not made:
                return False
            with made[0].lock:
                victim = made[0].referees[0]
                return len(victim.jobs) > 0 and len(victim.bots) > 0

        wait_for(busy, 120, "a referee process with a match and bots")
        with made[0].lock:
            victim = made[0].referees[0]
            killed.update(pid=victim.popen.pid, bots=set(victim.bots), jobs=set(victim.jobs))
        os.kill(victim.popen.pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_one)
    killer.start()
    cfg = slow_config(tmp_path)
    store = Store.create(tmp_path, cfg)
    try:
        quiet = NoProgress()
        summary = run_tournament(tmp_path, store, quiet, make)
    finally:
        store.close()
        killer.join(120)
    assert killed, "the kill must land mid-tournament"
    # Every match finished once, the ones the killed process held played again elsewhere.
    assert summary.state == "finished" and not summary.failed
    expected = scheduler_for(cfg, b"s" * 32).next_jobs(Ledger()) or []
    assert sorted(summary.ledger.finished) == sorted(job.match_id for job in expected)
    retried = killed["jobs"]
    assert isinstance(retried, set) and retried
    for record in summary.ledger.records():
        verify(Path(record.replay or ""))
        assert not record.forfeits, record
    # A fresh referee process took the killed one's place; the killed one's bots were ended.
    assert made[0].serial == 3
    assert (tmp_path / "logs" / "referee-2" / "referee.log").is_file()
    bots = killed["bots"]
    assert isinstance(bots, set)
    wait_for(lambda: not any(alive(pid) for pid in bots), 10, "the killed process's bots to end")
    assert all(r.popen.returncode is not None for r in made[0].referees)
    assert not bot_processes(tmp_path)


def children(pid: int) -> set[int]:
    """The live processes whose parent is pid."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


@pytest.mark.parametrize(
    ("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -9)]
)
def test_stopping_or_killing_the_runner_leaves_no_process(
    tmp_path: Path, stop: signal.Signals, code: int
) -> None:
    config_file = tmp_path / "cores.toml"
    write_config(config_file, "cores")
    config_file.write_text(
        config_file.read_text().replace("concurrency = 2", 'concurrency = 4\nexecutor = "cores"')
    )
    folder = tmp_path / "out"
    runner = subprocess.Popen(
        [*ARENA, "tournament", "run", str(config_file), "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=marked(folder, ARENA_SLEEPY_S="0.05"),
    )
    try:
        wait_for(lambda: len(finished(folder)) >= 2, 120, "two finished matches")
        referees = children(runner.pid)
        assert referees and bot_processes(folder)
        if stop is signal.SIGINT:  # Ctrl-C reaches the terminal's whole group
            os.killpg(runner.pid, stop)
        else:
            runner.send_signal(stop)
        _, stderr = runner.communicate(timeout=90)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == code, stderr
    if stop is not signal.SIGKILL:
        assert "arena tournament resume" in stderr
    # A killed runner's referee processes see their socket end and stop their bots.
    wait_for(lambda: not any(alive(pid) for pid in referees), 60, "the referee processes to end")
    wait_for(lambda: not bot_processes(folder), 30, "the bots to end")


def test_a_ladder_bot_that_no_longer_plays_has_its_processes_stopped(tmp_path: Path) -> None:
    spec = JobHostSpec(
        game="opposing-force",
        options={},
        bots={},  # as a ladder's: each job brings its seats' SPECs
        settings=MatchSettings(),
        replays=str(tmp_path / "replays"),
        logs=str(tmp_path / "logs"),
        deal_secret=b"s" * 32,
    )
    executor = CoresExecutor(spec, 2)
    try:
        job = MatchJob("m1", 0, "d0", ("a@1", "b@1"), ("example:random", "example:first"))
        played = executor.submit(job).result(120)
        assert played.record.match_id == "m1" and not played.record.forfeits

        def bots() -> set[int]:
            with executor.lock:
                return {pid for referee in executor.referees for pid in referee.bots}

        kept = bots()
        assert len(kept) == 2  # persistent: they wait for the bot's next match
        executor.drop_bot("a@1")
        executor.drop_bot("b@1")
        wait_for(lambda: not bots(), 30, "the dropped bots' processes to stop")
        assert not any(alive(pid) for pid in kept)
    finally:
        executor.close()


@pytest.mark.timeout(300)
def test_a_live_ladder_plays_on_the_referee_processes(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    make_ladder(folder, executor="cores", processes=2, concurrency=4)
    ladder_arena("ladder", "add", str(folder), "--name", "a", "--spec", "example:random")
    ladder_arena("ladder", "add", str(folder), "--name", "b", "--spec", "example:first")
    # Four bots: two tables at once, so both referee processes have work (with two, a bot
    # plays one match at a time and one process could take every match).
    ladder_arena("ladder", "add", str(folder), "--name", "c", "--spec", "example:random")
    ladder_arena("ladder", "add", str(folder), "--name", "d", "--spec", "example:first")
    out = (folder / "serve.out").open("ab")
    serve = subprocess.Popen(
        [*ARENA, "ladder", "serve", str(folder)], stdout=out, stderr=out, env=marked(folder)
    )
    try:
        ladder_wait("matches", lambda: ladder_finished(folder) >= 8, serve)
        referees = children(serve.pid)
        assert len(referees) == 2
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(90) == 0
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait(30)
    played_on = {row[0] for row in rows(folder, "SELECT worker FROM matches WHERE worker > ''")}
    assert played_on == {f"{socket.gethostname()}:{pid}" for pid in referees}
    wait_for(lambda: not any(alive(pid) for pid in referees), 60, "the referee processes to end")
    wait_for(lambda: not bot_processes(folder), 30, "the bots to end")
