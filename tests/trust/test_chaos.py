"""Tests tournaments.runner and referee.hosting, and under them referee.wire and referee.matches.

Chaos: a tournament of 224 matches in which bots crash, hang, flood, answer the wrong
decision, choose illegal actions, and drop their stream and rejoin, while a storm of spectators
that never read and a storm of idle connections run against the same referee. Every match ends
with a result and the right cause, nothing reaches the referee's log as an error, every replay
verifies, and the innocent bots lose no match, on time or otherwise.

Real referee, real bot processes, real SQLite; 127.0.0.1 only."""

from __future__ import annotations

import shlex
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
import structlog
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc

from referee.replays.verify import verify
from tournaments.config import TournamentConfig, parse_config
from tournaments.executors import LocalExecutor
from tournaments.match_jobs import JobHostSpec
from tournaments.run_progress import NoProgress
from tournaments.runner import run_tournament
from tournaments.store import Store

# Honest bots held to deadlines of a few hundred ms, or floods and refusals timed: these run
# alone, after the rest of the suite (make test), where no other test takes their cores.
pytestmark = pytest.mark.realtime
BOTS = Path(__file__).resolve().parent.parent / "bots"
INNOCENT = {"strategy", "random"}
# Each misbehaving bot and the cause its forfeits must carry; the rejoiner forfeits nothing.
EXPECTED = {
    "crasher": "crash",
    "hanger": "timeout",
    "flooder": "malformed",
    "wrong": "protocol",
    "illegal": "illegal_action",
    "rejoiner": None,
}
SPECTATORS = 60
IDLE_CONNECTIONS = 300


def chaos_config(records: Path) -> TournamentConfig:
    def cmd(script: str, *args: str) -> str:
        return "cmd:" + shlex.join([sys.executable, str(BOTS / script), *args])

    bots = [
        {"name": "strategy", "spec": "example:opposing-force"},
        {"name": "random", "spec": "example:random"},
        {"name": "crasher", "spec": cmd("rawbot.py", "exit")},
        {"name": "hanger", "spec": cmd("rawbot.py", "hang")},
        {"name": "illegal", "spec": cmd("rawbot.py", "illegal")},
        {"name": "flooder", "spec": cmd("hostile.py", "flood", str(records / "flood.jsonl"))},
        {"name": "wrong", "spec": cmd("hostile.py", "unasked", str(records / "wrong.jsonl"))},
        {"name": "rejoiner", "spec": cmd("hostile.py", "rejoin", str(records / "rejoin.jsonl"))},
    ]
    return parse_config(
        {
            "name": "chaos",
            "game": "opposing-force",
            "bots": bots,
            "format": {"kind": "round-robin", "seats": 2, "games_per_pairing": 8},
            "time_control": {"decision_ms": 500, "time_bank_ms": 500},
            "run": {"concurrency": 4},
        }
    )


class Storms:
    """Spectators that open Watch and never read, and TCP connections that never speak,
    against the host's server for as long as the tournament runs."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.stop = threading.Event()
        self.watching = 0
        self.idle = 0

    def run(self, address: str, token: str) -> None:
        host, _, port = address.rpartition(":")
        sockets = []
        for _ in range(IDLE_CONNECTIONS):
            sockets.append(socket.create_connection((host, int(port)), timeout=5))
        self.idle = len(sockets)
        channels = [grpc.insecure_channel(address) for _ in range(SPECTATORS)]
        calls = [
            referee_pb2_grpc.RefereeServiceStub(c).Watch(pb.WatchRequest(token=token))
            for c in channels
        ]
        self.watching = len(calls)
        self.started.set()
        self.stop.wait(600)
        for call in calls:
            call.cancel()
        for channel in channels:
            channel.close()
        for sock in sockets:
            sock.close()


@contextmanager
def errors_logged() -> Iterator[list[dict[str, object]]]:
    """Every structlog event at error level or above, from any thread, while inside."""
    with structlog.testing.capture_logs() as events:
        found: list[dict[str, object]] = []
        yield found
        found += [e for e in events if e.get("log_level") in ("error", "critical", "exception")]


@pytest.mark.timeout(420)
def test_a_tournament_under_chaos_ends_every_match_with_the_right_cause(tmp_path: Path) -> None:
    records = tmp_path / "records"
    records.mkdir()
    config = chaos_config(records)
    folder = tmp_path / "chaos"
    store = Store.create(folder, config)
    token = store.get("spectator_token")
    assert token is not None
    storms = Storms()
    storm_threads: list[threading.Thread] = []

    def executor(spec: JobHostSpec, _: TournamentConfig) -> LocalExecutor:
        local = LocalExecutor(spec)
        thread = threading.Thread(
            target=storms.run, args=(local.host.host.server.address, token), daemon=True
        )
        thread.start()
        storm_threads.append(thread)
        assert storms.started.wait(60), "the storms did not start"
        return local

    quiet = NoProgress()
    try:
        with errors_logged() as errors:
            summary = run_tournament(folder, store, quiet, executor)
    finally:
        storms.stop.set()
        for thread in storm_threads:
            thread.join(30)
        store.close()

    assert storms.watching == SPECTATORS and storms.idle == IDLE_CONNECTIONS
    assert summary.state == "finished" and not summary.failed
    finished = summary.ledger.records()
    assert len(finished) == 8 * 7 // 2 * 8 == 224
    for record in finished:
        assert record.replay is not None
        verify(Path(record.replay))
        for seat, cause, detail in record.forfeits:
            bot = record.bots[seat]
            assert bot not in INNOCENT, (record.match_id, bot, cause, detail)
            assert EXPECTED[bot] == cause, (record.match_id, bot, cause, detail)
        misbehaving = [b for b in record.bots if EXPECTED.get(b)]
        if misbehaving and not set(record.bots) - set(misbehaving) - {"rejoiner"}:
            continue  # two misbehaving bots: the first to misbehave forfeits
        # An innocent (or the rejoiner) against a misbehaving bot: the misbehaving one forfeits.
        assert [record.bots[s] for s, _, _ in record.forfeits] == misbehaving, record
    assert not errors, errors
    # The rejoiner really dropped and rejoined, and played on.
    rejoins = (records / "rejoin.jsonl").read_text().count('"kind": "rejoining"')
    assert rejoins >= 1
