"""Decision round trip over gRPC: the full referee (real bot processes, Opposing Force) against
a bare grpc.aio bidirectional ping-pong with messages of the same size, measured in the same run.

Run: .venv/bin/python -m bench.wire [--games N] [--only referee]
Writes bench/results/wire.json.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
from arena.v1 import referee_pb2 as pb

from bench.report import Goal, Report, emit, latency, percentile
from referee import logging as arena_logging
from referee import replay
from referee.decisions import legal_action_messages
from referee.games import get_game
from referee.games.playout import resolve_chance
from referee.host import SeriesPlan, run_series
from referee.launcher import parse_spec
from referee.settings import MatchSettings

RAWBOT = Path(__file__).resolve().parent.parent / "tests" / "bots" / "rawbot.py"


EVENT = b"e" * 40  # about the size of a game event; the echo client does not answer these


async def bare_ping_pong(rounds: int, size: int, events_per_round: float = 0.0) -> list[float]:
    """Milliseconds per round trip of a size-byte message to a client process and back; with
    events_per_round, that many small one-way messages (on average) go just before each."""
    inbox: asyncio.Queue[bytes] = asyncio.Queue()
    times: list[float] = []
    payload = b"x" * size
    owed = 0.0

    async def handler(requests: AsyncIterator[bytes], context: object) -> AsyncIterator[bytes]:
        reader = asyncio.create_task(_drain(requests, inbox))
        await inbox.get()  # hello
        nonlocal owed
        for _ in range(rounds):
            started = time.perf_counter()
            owed += events_per_round
            while owed >= 1.0:
                owed -= 1.0
                yield EVENT
            yield payload
            await inbox.get()
            times.append((time.perf_counter() - started) * 1000)
        yield b"bye"
        reader.cancel()

    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "bench.Echo",
                {
                    "PingPong": grpc.stream_stream_rpc_method_handler(
                        handler, request_deserializer=None, response_serializer=None
                    )
                },
            ),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    client = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.echo_client", f"127.0.0.1:{port}"
    )
    await client.wait()
    await server.stop(0.5)
    return times


async def _drain(requests: AsyncIterator[bytes], inbox: asyncio.Queue[bytes]) -> None:
    async for message in requests:
        await inbox.put(message)


@dataclass
class RefereeRun:
    decision_ms: list[float]  # as the referee times each decision, in the replay records
    request_bytes: int
    # A whole match's wall time over its decisions: adds building each request, events,
    # spectator messages and the replay, which the per-decision timing leaves out.
    wall_ms_per_decision: float
    # Event messages each bot's stream carries per decision of the match, on average.
    events_per_decision: float


def referee_round_trips(games: int, tmp: Path) -> RefereeRun:
    bot = parse_spec(f"cmd:{sys.executable} {RAWBOT} play")
    plan = SeriesPlan(
        get_game("opposing-force"),
        [bot, bot],
        games,
        seed=1,
        replays=tmp,
        settings=MatchSettings(decision_ms=5000),
    )
    finished: list[float] = []
    outcomes = asyncio.run(
        run_series(plan, on_match=lambda *_: finished.append(time.perf_counter()))
    )
    times = [
        r.time_ms
        for outcome, _ in outcomes
        for r in outcome.records
        if isinstance(r, replay.DecisionRecord)
    ]
    decisions = sum(outcome.decisions for outcome, _ in outcomes)
    seats = len(plan.bots)
    sent = sum(
        seats if r.audience is None else len(r.audience)
        for outcome, _ in outcomes
        for r in outcome.records
        if isinstance(r, replay.EventRecord)
    )
    # The first match also waits for the bots to start: only later ones are timed whole.
    later = sum(outcome.decisions for outcome, _ in outcomes[1:])
    wall = (finished[-1] - finished[0]) * 1000 / later if later else float("nan")
    state = get_game("opposing-force").new_state()
    resolve_chance(state, random.Random(1))
    request = pb.DecisionRequest(
        observation=state.observation(0), legal_actions=legal_action_messages(state, 0)
    )
    size = len(pb.PlayResponse(decision_request=request).SerializeToString())
    return RefereeRun(times, size, wall, sent / seats / decisions)


def measure(games: int, only: str | None) -> Report:
    """The referee's decision round trips, then the bare ping-pong with as many rounds."""
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        run = referee_round_trips(games, Path(tmp))
    referee_ms, size = run.decision_ms, run.request_bytes
    if only != "referee":
        bare_ms = asyncio.run(bare_ping_pong(len(referee_ms), size))
        rows.append({"path": "bare grpc.aio ping-pong", **latency(bare_ms)})
        with_events = asyncio.run(bare_ping_pong(len(referee_ms), size, run.events_per_decision))
        rows.append({"path": "bare, with the events' messages", **latency(with_events)})
    rows.append({"path": "referee decision (Opposing Force)", **latency(referee_ms)})
    report = Report("wire", "Decision round trip: referee against bare grpc.aio", rows)
    report.facts["request bytes"] = size
    report.facts["event messages per decision per stream"] = round(run.events_per_decision, 3)
    report.facts["referee wall ms per decision (whole match loop)"] = round(
        run.wall_ms_per_decision, 4
    )
    if only != "referee":
        ratio = statistics.median(referee_ms) / statistics.median(bare_ms)
        p99_ratio = percentile(referee_ms, 0.99) / percentile(bare_ms, 0.99)
        wall_ratio = run.wall_ms_per_decision / statistics.median(bare_ms)
        report.facts |= {
            "ratio of medians": round(ratio, 3),
            "ratio of p99": round(p99_ratio, 3),
            "ratio of wall per decision to bare median": round(wall_ratio, 3),
            "ratio of medians, bare with events / bare": round(
                statistics.median(with_events) / statistics.median(bare_ms), 3
            ),
        }
        report.goals.append(
            Goal("referee median <= 1.3 x bare ping-pong median", ratio <= 1.3, f"{ratio:.3g} x")
        )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--games", type=int, default=20, help="Opposing Force matches to time (at least 2)"
    )
    parser.add_argument(
        "--only", choices=["referee"], help="skip the bare ping-pong (for profiling the referee)"
    )
    args = parser.parse_args()
    if args.games < 2:
        parser.error("--games must be at least 2: the first match also waits for bots to start")
    arena_logging.configure("warning")
    emit(measure(args.games, args.only))


if __name__ == "__main__":
    main()
