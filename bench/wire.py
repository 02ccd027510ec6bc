"""Decision round trip over gRPC: the full referee (real bot processes, Opposing Force) against
a bare grpc.aio bidirectional ping-pong with messages of the same sizes (each request's own),
measured in the same run.

The CPU clock (`clock = "cpu"`) is timed in the same run, block by block beside the wall
clock, where this machine can account for CPU by control group (root, cgroup v1 cpuacct or v2):
what its reading of each bot's group costs the referee per decision, and the round trip.

Run: .venv/bin/python -m bench.wire [--games N] [--only referee]
Writes bench/results/wire.json.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import grpc
from arena.v1 import referee_pb2 as pb
from arena_games import get_game
from arena_games import replay_file as replay
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings
from arena_games.playout import resolve_chance

from bench.bench_report import Goal, Report, emit, latency, percentile
from referee import log_config as arena_logging
from referee.bots.cpu_group import cpu_accounting_problem, make_cpu_group
from referee.bots.launcher import parse_spec, start_bot, stop_bot
from referee.hosting.series import SeriesPlan, run_series
from referee.matches.decisions import EncodedRequest, encode_request
from referee.wire.server import start_server

WIRE_BOT = Path(__file__).resolve().parent / "wire_bot.py"
SEATS = 2  # Opposing Force
CPU_GOAL_MS = 0.15  # issue 21: a third of the referee's CPU per decision when it was set


async def bare_ping_pong(sizes: list[int], clients: int = 1, busy_s: float = 0.0) -> list[float]:
    """Milliseconds per round trip of a message to a client process and back, one round per
    size, with messages of those sizes. With several clients they take turns, round by round,
    as the seats of a match do; each round is timed from its own stream's send to the answer's
    arrival, as the referee times a decision. busy_s of pure CPU work between rounds stands in
    for a referee's game logic."""
    times: list[float] = []
    payloads = {size: b"x" * size for size in set(sizes)}
    turns: list[asyncio.Queue[int | None]] = []
    joined, answered = asyncio.Event(), asyncio.Queue[None]()

    async def handler(requests: AsyncIterator[bytes], context: object) -> AsyncIterator[bytes]:
        inbox: asyncio.Queue[tuple[bytes, float]] = asyncio.Queue()
        reader = asyncio.create_task(_drain(requests, inbox))
        await inbox.get()  # hello
        turn: asyncio.Queue[int | None] = asyncio.Queue()
        turns.append(turn)
        if len(turns) == clients:
            joined.set()
        while (size := await turn.get()) is not None:
            started = time.perf_counter()
            yield payloads[size]
            _, arrived = await inbox.get()
            times.append((arrived - started) * 1000)
            answered.put_nowait(None)
        yield b"bye"
        reader.cancel()

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((ping_pong_service(handler),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.echo_client", f"127.0.0.1:{port}"
        )
        for _ in range(clients)
    ]
    await joined.wait()
    for round_number, size in enumerate(sizes):
        _busy(busy_s)
        turns[round_number % clients].put_nowait(size)
        await answered.get()
    for turn in turns:
        turn.put_nowait(None)
    for process in processes:
        await process.wait()
    await server.stop(0.5)
    return times


def ping_pong_service(handler: Callable[..., object]) -> grpc.GenericRpcHandler[bytes, bytes]:
    """The bench's one bidi method, bytes both ways, served by handler (async or not)."""
    return grpc.method_handlers_generic_handler(
        "bench.Echo",
        {
            "PingPong": grpc.stream_stream_rpc_method_handler(
                handler, request_deserializer=None, response_serializer=None
            )
        },
    )


async def echo_floor_cpu_ms(sizes: list[int]) -> float:
    """The server process's CPU per round trip of the simplest grpc.aio bidi server: each
    answer read makes it write the next message, no queue, task or timing of its own; one
    client process. The floor of any referee on grpc.aio's Python server."""
    payloads = [b"x" * size for size in sizes]

    async def handler(requests: AsyncIterator[bytes], context: object) -> AsyncIterator[bytes]:
        turns = iter(payloads)
        async for _ in requests:  # the hello, then each answer
            payload = next(turns, None)
            if payload is None:
                break
            yield payload
        yield b"bye"

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((ping_pong_service(handler),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    cpu = time.process_time()
    client = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.echo_client", f"127.0.0.1:{port}"
    )
    await client.wait()
    cpu = time.process_time() - cpu
    await server.stop(0.5)
    return cpu * 1000 / len(sizes)


def sync_echo_floor_cpu_ms(sizes: list[int]) -> float:
    """The same floor on grpcio's other Python server, the synchronous one (a thread pool over
    the C core, no asyncio): the process's CPU per round trip, one client process. Whether a
    referee on that server could reach the CPU goal where grpc.aio cannot."""
    payloads = [b"x" * size for size in sizes]

    def handler(requests: Iterator[bytes], context: object) -> Iterator[bytes]:
        turns = iter(payloads)
        for _ in requests:  # the hello, then each answer
            payload = next(turns, None)
            if payload is None:
                break
            yield payload
        yield b"bye"

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((ping_pong_service(handler),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    cpu = time.process_time()
    subprocess.run([sys.executable, "-m", "bench.echo_client", f"127.0.0.1:{port}"], check=True)
    cpu = time.process_time() - cpu
    server.stop(0.5).wait()
    return cpu * 1000 / len(sizes)


def _busy(seconds: float) -> None:
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


async def session_round_trips(rounds: int, tmp: Path) -> list[float]:
    """The referee's server and sessions with the benchmark's bots, but no match: the same
    request asked of the seats in turn, timed as the match times a decision. What the wire
    layer of the referee costs, without the game logic between turns."""
    server = await start_server("127.0.0.1:0")
    bot = parse_spec(f"cmd:{sys.executable} {WIRE_BOT} {tmp}")
    sessions = [server.lobby.register(f"seat-{seat}") for seat in range(SEATS)]
    processes = [await start_bot(bot, server.address, s.token, None) for s in sessions]
    times: list[float] = []
    try:
        for session in sessions:
            await asyncio.wait_for(session.connected.wait(), 30)
        clock = _Clock()
        requests = typical_requests(rounds)
        for number, request in enumerate(requests):
            await sessions[number % SEATS].decide(request, clock)
            times.append((clock.stopped - clock.started) * 1000)
    finally:
        for session in sessions:
            session.end("the benchmark is over")
        for process in processes:
            await stop_bot(process)
        await server.stop(0.5)
    return times


class _Clock:
    """Times a decision as the match does: from the request's send to the answer's arrival."""

    started = stopped = 0.0

    def sent(self) -> bool:
        self.started = time.perf_counter()
        return True

    def answered(self) -> None:
        self.stopped = time.perf_counter()


def typical_requests(count: int) -> list[EncodedRequest]:
    """The first Opposing Force decision request with events, as a match sends it, asked as
    decisions 1 to count."""
    state = get_game("opposing-force").new_state()
    events = resolve_chance(state, random.Random(1))
    seat = state.to_move()[0]
    seen = [e.message.SerializeToString() for e in events if e.visible_to(seat)]
    return [
        encode_request(state, pb.DecisionRequest(match_id="m-1", decision_id=n, seat=seat), seen)
        for n in range(1, count + 1)
    ]


async def _drain(requests: AsyncIterator[bytes], inbox: asyncio.Queue[tuple[bytes, float]]) -> None:
    async for message in requests:
        await inbox.put((message, time.perf_counter()))


@dataclass
class RefereeRun:
    decision_ms: list[float]  # as the referee times each decision, in the replay records
    request_sizes: list[int]  # bytes of each decision request, as the bots received them
    # A whole match's wall time over its decisions: adds applying the move, recording it and
    # building the next request, which the per-decision timing leaves out.
    wall_ms_per_decision: float
    events_per_request: float  # events a request carries, on average
    # The referee process's CPU time (all its threads) per decision over the matches after
    # the first, as the wall time: what a decision costs once the series runs.
    cpu_ms_per_decision: float
    # The same over the whole series: adds starting the server and the bot processes, waiting
    # for them to join, and stopping them, shared by the few matches of one block.
    series_cpu_ms_per_decision: float


def referee_round_trips(
    games: int, tmp: Path, seed: int = 1, clock: Literal["wall", "cpu"] = "wall"
) -> RefereeRun:
    sizes_folder = tmp / "sizes"
    sizes_folder.mkdir()
    bot = parse_spec(f"cmd:{sys.executable} {WIRE_BOT} {sizes_folder}")
    plan = SeriesPlan(
        get_game("opposing-force"),
        [bot] * SEATS,
        games,
        secret=practice_secret(seed),
        replays=tmp,
        settings=MatchSettings(decision_ms=5000, clock=clock),
    )
    finished: list[tuple[float, float]] = []  # (wall, CPU) as each match ends
    cpu = time.process_time()
    outcomes = asyncio.run(
        run_series(
            plan,
            on_match=lambda *_: finished.append((time.perf_counter(), time.process_time())),
        )
    )
    cpu = time.process_time() - cpu
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
    (first_wall, first_cpu), (last_wall, last_cpu) = finished[0], finished[-1]
    wall = (last_wall - first_wall) * 1000 / later if later else float("nan")
    later_cpu = (last_cpu - first_cpu) * 1000 / later if later else float("nan")
    sizes = [int(line) for f in sorted(sizes_folder.iterdir()) for line in f.read_text().split()]
    return RefereeRun(times, sizes, wall, sent / decisions, later_cpu, cpu * 1000 / decisions)


def measure(games: int, only: str | None, blocks: int = 10) -> Report:
    """The referee's decision round trips, each block followed by a bare ping-pong with as many
    rounds of the same sizes: alternating blocks share the machine's load, which on a busy
    machine drifts more between two long runs than between the two paths."""
    rows: list[dict[str, object]] = []
    runs: list[RefereeRun] = []
    bare_ms: list[float] = []
    turns_ms: list[float] = []
    sessions_ms: list[float] = []
    busy_ms: list[float] = []
    bare_cpu_s = 0.0  # the bare server's process CPU over its turns (2 clients taking turns)
    floor_cpu_ms: list[float] = []  # the simplest echo server's CPU per round trip, by block
    sync_floor_cpu_ms: list[float] = []  # the same on grpcio's synchronous server
    cpu_runs: list[RefereeRun] = []  # the same matches under the CPU clock
    no_cpu_clock = cpu_accounting_problem()
    for block in range(blocks):
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(referee_round_trips(max(2, games // blocks), Path(tmp), seed=block + 1))
        if no_cpu_clock is None:
            with tempfile.TemporaryDirectory() as tmp:
                games_now = max(2, games // blocks)
                cpu_runs.append(referee_round_trips(games_now, Path(tmp), block + 1, "cpu"))
        if only != "referee":
            sizes = runs[-1].request_sizes
            bare_ms += asyncio.run(bare_ping_pong(sizes))
            cpu = time.process_time()
            turns_ms += asyncio.run(bare_ping_pong(sizes, SEATS))
            bare_cpu_s += time.process_time() - cpu
            floor_cpu_ms.append(asyncio.run(echo_floor_cpu_ms(sizes)))
            sync_floor_cpu_ms.append(sync_echo_floor_cpu_ms(sizes))
            with tempfile.TemporaryDirectory() as tmp:
                rounds = session_round_trips(len(sizes), Path(tmp))
                sessions_ms += asyncio.run(rounds)
            busy_s = runs[-1].cpu_ms_per_decision / 1000
            busy_ms += asyncio.run(bare_ping_pong(sizes, SEATS, busy_s))
    referee_ms = [ms for run in runs for ms in run.decision_ms]
    sizes = [size for run in runs for size in run.request_sizes]
    if only != "referee":
        rows.append({"path": "bare grpc.aio ping-pong, one client", **latency(bare_ms)})
        rows.append({"path": f"bare, {SEATS} clients taking turns", **latency(turns_ms)})
        rows.append({"path": "referee sessions, no game logic", **latency(sessions_ms)})
        rows.append(
            {"path": "bare taking turns, referee's CPU time between turns", **latency(busy_ms)}
        )
    rows.append({"path": "referee decision (Opposing Force)", **latency(referee_ms)})
    report = Report("wire", "Decision round trip: referee against bare grpc.aio", rows)
    wall_ms_per_decision = statistics.median(run.wall_ms_per_decision for run in runs)
    report.facts["request bytes, median"] = statistics.median(sizes)
    report.facts["events per request, mean"] = round(
        statistics.fmean(run.events_per_request for run in runs), 3
    )
    report.facts["referee wall ms per decision (whole match loop)"] = round(wall_ms_per_decision, 4)
    cpu_ms = statistics.median(run.cpu_ms_per_decision for run in runs)
    report.facts["referee CPU ms per decision (matches after the first)"] = round(cpu_ms, 4)
    report.facts["referee CPU ms per decision, whole series (with its setup)"] = round(
        statistics.median(run.series_cpu_ms_per_decision for run in runs), 4
    )
    report.goals.append(
        Goal(
            f"referee CPU per decision <= {CPU_GOAL_MS} ms (all its threads)",
            cpu_ms <= CPU_GOAL_MS,
            f"{cpu_ms:.3f} ms",
        )
    )
    _cpu_clock_facts(report, runs, cpu_runs, no_cpu_clock)
    if only != "referee":
        report.facts["bare server CPU ms per turn (2 clients taking turns)"] = round(
            bare_cpu_s * 1000 / len(turns_ms), 4
        )
        report.facts["simplest grpc.aio echo server CPU ms per round trip (the floor)"] = round(
            statistics.median(floor_cpu_ms), 4
        )
        report.facts["simplest synchronous grpc echo server CPU ms per round trip"] = round(
            statistics.median(sync_floor_cpu_ms), 4
        )
        floor = statistics.median(turns_ms)
        ratio = statistics.median(referee_ms) / floor
        report.facts |= {
            "ratio of medians, referee / bare taking turns": round(ratio, 3),
            "ratio of p99, referee / bare taking turns": round(
                percentile(referee_ms, 0.99) / percentile(turns_ms, 0.99), 3
            ),
            "ratio of medians, referee / bare one client": round(
                statistics.median(referee_ms) / statistics.median(bare_ms), 3
            ),
            "ratio of medians, bare taking turns / bare one client": round(
                floor / statistics.median(bare_ms), 3
            ),
            "ratio of medians, sessions without game logic / bare taking turns": round(
                statistics.median(sessions_ms) / floor, 3
            ),
            "ratio of medians, bare with the referee's CPU between turns / bare taking turns": (
                round(statistics.median(busy_ms) / floor, 3)
            ),
            "ratio of wall per decision to bare taking turns": round(
                wall_ms_per_decision / floor, 3
            ),
        }
        report.goals.append(
            Goal(
                f"referee median <= 1.3 x bare ping-pong median ({SEATS} clients taking turns, "
                "as the seats do)",
                ratio <= 1.3,
                f"{ratio:.3g} x",
            )
        )
    return report


def cpu_reading_us(reads: int = 2000) -> float:
    """Microseconds of the referee's CPU for one reading of a bot group's CPU counter."""
    group = make_cpu_group()
    try:
        cpu = time.process_time()
        for _ in range(reads):
            group.cpu_s()
        return (time.process_time() - cpu) * 1e6 / reads
    finally:
        group.remove()


def _cpu_clock_facts(
    report: Report, runs: list[RefereeRun], cpu_runs: list[RefereeRun], missing: str | None
) -> None:
    """The CPU clock against the wall clock, the same matches in the same blocks."""
    if missing is not None:
        report.facts["cpu clock"] = f"not measured: {missing}"
        return
    wall_ms = [ms for run in runs for ms in run.decision_ms]
    cpu_ms = [ms for run in cpu_runs for ms in run.decision_ms]
    wall_cpu = statistics.median(run.cpu_ms_per_decision for run in runs)
    cpu_cpu = statistics.median(run.cpu_ms_per_decision for run in cpu_runs)
    report.facts |= {
        "cpu clock: referee CPU ms per decision (matches after the first)": round(cpu_cpu, 4),
        "cpu clock: its accounting's referee CPU ms per decision (cpu - wall clock)": round(
            cpu_cpu - wall_cpu, 4
        ),
        "cpu clock: one reading of a bot group's CPU, referee CPU us": round(cpu_reading_us(), 2),
        "ratio of referee CPU per decision, cpu clock / wall clock": round(cpu_cpu / wall_cpu, 3),
        "ratio of medians of the decision round trip, cpu clock / wall clock": round(
            statistics.median(cpu_ms) / statistics.median(wall_ms), 3
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--games", type=int, default=20, help="Opposing Force matches to time (at least 2)"
    )
    parser.add_argument(
        "--blocks", type=int, default=10, help="alternate referee and bare runs this many times"
    )
    parser.add_argument(
        "--only", choices=["referee"], help="skip the bare ping-pong (for profiling the referee)"
    )
    args = parser.parse_args()
    if args.games < 2:
        parser.error("--games must be at least 2: the first match also waits for bots to start")
    arena_logging.configure("warning")
    if args.blocks < 1:
        parser.error("--blocks must be at least 1")
    emit(measure(args.games, args.only, args.blocks))


if __name__ == "__main__":
    main()
