"""How many concurrent matches the referee serves on one process and on every core: N seats
(100, 500, 1,000 by default) in N/2 two-seat matches of a short game, all at once, against
lightweight seats (bench.seat_client: one process of many grpc.aio streams answering at once),
so the referee is what is measured. Each size runs on one referee process, then on one per core
(--processes), each with its own server, socket and seat client, the tables spread over them as
the cores executor spreads a tournament's matches (tournaments/cores_executor.py).
Turn latency is from when the match asks a seat to when its answer is in (the replay's
queued_ms + time_ms); the seat's clock is charged only time_ms, from when the request left the
referee. The seat clients run on the same machine: their CPU is reported apart. Memory is the
referee processes' RSS.

Each size runs in fresh processes, so one size's peak memory is not the next one's floor, and
the load average is taken as each size starts (a figure at a load over 1 is not evidence).

Run: .venv/bin/python -m bench.scale [--quick] [--seats N ...] [--processes P] [--rounds R]
Writes bench/results/scale.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from arena_games import GAMES, get_game
from arena_games import replay_file as replay
from arena_games.deals import DealKey, practice_secret
from arena_games.match_settings import MatchSettings

from bench.bench_report import (
    Goal,
    Report,
    emit,
    load_label,
    machine_load,
    percentile,
    settle,
)
from referee import log_config as arena_logging
from referee.matches.match import Match, MatchOutcome
from referee.wire.server import RefereeServer, start_server
from referee.wire.sessions import BotSession, SessionSeat

SIZES = (100, 500, 1000)
# Issue 21's goal, for one referee process and for all cores: a turn's p99 at this many seats.
GOAL_SEATS = 1000
GOAL_P99_MS = 150.0
QUICK_SIZES = (100, 500)
JOIN_TIMEOUT_S = 60.0
SHARD_TIMEOUT_S = 600.0
SETTLE_S = 120.0  # the longest wait, with --settle, for the last size's load to pass
# Generous clocks: a seat that waits in the referee's queue must not be timed out, or the
# figures would mix in the substitute policy.
SETTINGS = MatchSettings(decision_ms=30_000, time_bank_ms=30_000)


@dataclass
class ShardResult:
    """What one referee process measured of its share of the seats."""

    seats: int
    matches: int
    decisions: int
    started: float  # wall clock (time.time) when its matches began, and when the last ended
    ended: float
    turns_ms: list[float]  # asked to answered, for every answered decision
    charged_ms: list[float]  # what the seats' clocks were charged
    rss_before_mib: float
    rss_joined_mib: float
    rss_peak_mib: float
    substituted: int
    forfeits: int
    referee_cpu_s: float  # while the matches ran
    clients_cpu_s: float  # its seat clients' whole lives


@dataclass
class SizeResult:
    """One size on one or several referee processes, their shards put together."""

    seats: int
    processes: int
    load: float  # the 1-minute load average as this size started
    shards: list[ShardResult]

    def total(self, name: str) -> float:
        return float(sum(getattr(shard, name) for shard in self.shards))

    @property
    def seconds(self) -> float:
        return max(s.ended for s in self.shards) - min(s.started for s in self.shards)

    def rate(self) -> float:
        """Decisions a second."""
        return self.total("decisions") / self.seconds

    @property
    def turns(self) -> list[float]:
        return [t for s in self.shards for t in s.turns_ms]

    @property
    def p99_ms(self) -> float:
        return percentile(self.turns, 0.99)

    def row(self, cores: int) -> dict[str, object]:
        seconds, decisions = self.seconds, self.total("decisions")
        referee_cpu, clients_cpu = self.total("referee_cpu_s"), self.total("clients_cpu_s")
        grown = sum(s.rss_peak_mib - s.rss_before_mib for s in self.shards)
        return {
            "seats": self.seats,
            "referee processes": self.processes,
            "matches/s": self.total("matches") / seconds,
            "decisions/s": self.rate(),
            "turn p50 ms": percentile(self.turns, 0.5),
            "turn p99 ms": self.p99_ms,
            "charged p99 ms": percentile([c for s in self.shards for c in s.charged_ms], 0.99),
            "referee CPU us/decision": referee_cpu * 1e6 / decisions,
            # Of the whole machine's CPU while the matches ran: the rest went to the seat
            # clients, other work on the machine, or nothing.
            "referee % of machine": 100 * referee_cpu / (seconds * cores),
            "clients CPU s": clients_cpu,
            "clients % of machine": 100 * clients_cpu / (seconds * cores),
            "KiB per match": grown * 1024 / self.total("matches"),
            "load": load_label(self.load),
        }


def status_mib(field: str) -> float:
    """A memory figure of this process from /proc/self/status (VmRSS now, VmHWM its peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


async def start_seats(
    server: RefereeServer, sessions: list[BotSession], clients: int, per_connection: int
) -> list[asyncio.subprocess.Process]:
    """Client processes, each given its share of the tokens on standard input."""
    processes = []
    for part in range(clients):
        tokens = "".join(f"{s.token}\n" for s in sessions[part::clients])
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.seat_client",
            server.address,
            "--seats-per-connection",
            str(per_connection),
            stdin=asyncio.subprocess.PIPE,
        )
        assert process.stdin is not None
        process.stdin.write(tokens.encode())
        await process.stdin.drain()
        process.stdin.close()
        processes.append(process)
    return processes


async def joined(sessions: list[BotSession]) -> None:
    waiting = [s.connected.wait() for s in sessions]
    try:
        await asyncio.wait_for(asyncio.gather(*waiting), JOIN_TIMEOUT_S)
    except TimeoutError:
        missing = sum(1 for s in sessions if not s.connected.is_set())
        raise RuntimeError(f"{missing} of {len(sessions)} seats did not join in time") from None


async def table(
    game: str, pair: list[BotSession], number: int, rounds: int, server: RefereeServer
) -> list[MatchOutcome]:
    """One table's matches, one after another on the same two sessions."""
    outcomes = []
    for round_ in range(rounds):
        match = Match(
            get_game(game),
            [SessionSeat(s) for s in pair],
            deal=DealKey.of(practice_secret(1), f"d{number * rounds + round_}"),
            match_id=f"scale-{number}-{round_}",
            settings=SETTINGS,
            spectators=server.hub,
        )
        outcomes.append(await match.run())
    return outcomes


async def one_shard(
    seats: int, first_table: int, game: str, rounds: int, clients: int, per_connection: int
) -> ShardResult:
    """Serve seats on a server of this process; say "joined" on standard output once every seat
    has joined, and start the matches when standard input says "go", so that every referee
    process of a size starts at once."""
    before = status_mib("VmRSS")
    server = await start_server("127.0.0.1:0")
    sessions = [server.lobby.register(f"seat-{i}") for i in range(seats)]
    processes = await start_seats(server, sessions, clients, per_connection)
    try:
        await joined(sessions)
        joined_rss = status_mib("VmRSS")
        print("joined", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        started, cpu = time.time(), time.process_time()
        tables = await asyncio.gather(
            *(
                table(game, sessions[i : i + 2], first_table + i // 2, rounds, server)
                for i in range(0, seats, 2)
            )
        )
        ended, cpu = time.time(), time.process_time() - cpu
        peak = status_mib("VmHWM")
    finally:
        for session in sessions:
            session.end("the benchmark is over")
        codes = await asyncio.gather(*(p.wait() for p in processes))
        await server.stop()
    if any(codes):
        raise RuntimeError(f"a seat client failed (exit codes {codes})")
    outcomes = [o for t in tables for o in t]
    decisions = [r for o in outcomes for r in o.records if isinstance(r, replay.DecisionRecord)]
    answered = [r for r in decisions if r.substituted_for is None]
    return ShardResult(
        seats=seats,
        matches=len(outcomes),
        decisions=len(decisions),
        started=started,
        ended=ended,
        turns_ms=[r.queued_ms + r.time_ms for r in answered],
        charged_ms=[r.time_ms for r in answered],
        rss_before_mib=before,
        rss_joined_mib=joined_rss,
        rss_peak_mib=peak,
        substituted=len(decisions) - len(answered),
        forfeits=sum(len(o.forfeits) for o in outcomes),
        referee_cpu_s=cpu,
        clients_cpu_s=_children_cpu_s(),
    )


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def split(seats: int, processes: int) -> list[int]:
    """Seats per referee process: whole tables, as even as they go."""
    tables = seats // 2
    return [2 * (tables // processes + (n < tables % processes)) for n in range(processes)]


def run_size(seats: int, processes: int, args: argparse.Namespace) -> SizeResult:
    """One size over `processes` fresh referee processes, each with its own seat clients;
    their matches start together once every seat of every process has joined."""
    load = settle(SETTLE_S) if args.settle else machine_load()
    shards, first_table = [], 0
    for share in split(seats, processes):
        command = [
            *(sys.executable, "-m", "bench.scale", "--shard", str(share)),
            *("--first-table", str(first_table), "--game", args.game),
            *("--rounds", str(args.rounds), "--clients", str(args.clients)),
            *("--seats-per-connection", str(args.seats_per_connection)),
        ]
        first_table += share // 2
        shards.append(
            subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        )
    try:
        return SizeResult(seats, processes, load, _gather(shards))
    finally:
        for shard in shards:
            if shard.poll() is None:
                shard.kill()
                shard.wait()


def _gather(shards: list[subprocess.Popen[str]]) -> list[ShardResult]:
    for shard in shards:
        assert shard.stdout is not None
        if shard.stdout.readline().strip() != "joined":
            code = shard.wait()
            raise RuntimeError(f"a referee process ended (code {code}) before its seats joined")
    for shard in shards:
        assert shard.stdin is not None
        shard.stdin.write("go\n")
        shard.stdin.flush()
    results = []
    for shard in shards:
        out, _ = shard.communicate(timeout=SHARD_TIMEOUT_S)
        if shard.returncode != 0:
            raise RuntimeError(f"a referee process failed (exit code {shard.returncode})")
        results.append(ShardResult(**json.loads(out.strip().splitlines()[-1])))
    return results


def measure(sizes: list[int], processes: int, args: argparse.Namespace) -> Report:
    cores = os.cpu_count() or 1
    results = []
    for seats in sizes:
        for count in dict.fromkeys((1, processes)):
            results.append(run_size(seats, count, args))
            print(f"{seats} seats on {count} process(es) done", file=sys.stderr, flush=True)
    alone = {r.seats: r for r in results if r.processes == 1}
    rows = []
    for result in results:  # the ratio against one process at the same size
        row = result.row(cores)
        row["decisions/s vs 1 process"] = result.rate() / alone[result.seats].rate()
        rows.append(row)
    report = Report(
        "scale",
        f"Referee processes serving concurrent {args.game} matches ({args.rounds} per table), "
        f"seats answering at once from {args.clients} client process(es) per referee process, "
        f"on a machine of {cores} cores",
        rows,
    )
    report.facts["substituted decisions (timeouts)"] = sum(
        s.substituted for r in results for s in r.shards
    )
    report.facts["forfeits"] = sum(s.forfeits for r in results for s in r.shards)
    for count in dict.fromkeys((1, processes)):
        report.goals.append(_goal(results, count))
    report.notes.append(
        "the seat clients share the machine with the referee: their CPU is counted apart, and "
        "'referee % of machine' is the referee processes' CPU over the run's wall time x cores"
    )
    return report


def _goal(results: list[SizeResult], processes: int) -> Goal:
    found = next((r for r in results if r.seats == GOAL_SEATS and r.processes == processes), None)
    on = "one referee process" if processes == 1 else f"{processes} referee processes"
    return Goal(
        f"turn p99 under {GOAL_P99_MS:.0f} ms at {GOAL_SEATS:,} seats, {on}",
        found is not None and found.p99_ms < GOAL_P99_MS,
        f"{found.p99_ms:.0f} ms, load {found.load:.2f} as that size started"
        if found is not None
        else f"{GOAL_SEATS:,} seats not measured in this run",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, action="append", help="even; default 100 500 1000")
    parser.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES} only")
    parser.add_argument(
        "--settle",
        action="store_true",
        help="before each size, wait (at most 2 minutes) for the load of the last to pass",
    )
    parser.add_argument("--rounds", type=int, default=1, help="matches each table plays in turn")
    parser.add_argument("--game", choices=sorted(GAMES), default="capture-the-commander")
    parser.add_argument(
        "--processes", type=int, help="referee processes of the all-cores rows; default: cores"
    )
    parser.add_argument(
        "--clients", type=int, default=1, help="seat client processes per referee process"
    )
    parser.add_argument("--seats-per-connection", type=int, default=1)
    parser.add_argument("--shard", type=int, help=argparse.SUPPRESS)  # one referee process
    parser.add_argument("--first-table", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = args.seats or list(QUICK_SIZES if args.quick else SIZES)
    processes = args.processes or len(os.sched_getaffinity(0))
    if any(n < 2 or n % 2 for n in sizes) or args.rounds < 1 or args.clients < 1:
        parser.error("seats must be even and at least 2; rounds and clients at least 1")
    if processes < 1 or any(n < 2 * processes for n in sizes):
        parser.error("processes must be at least 1, with a table (2 seats) for each")
    arena_logging.configure("warning")
    try:
        if args.shard is not None:
            shard = one_shard(
                args.shard,
                args.first_table,
                args.game,
                args.rounds,
                args.clients,
                args.seats_per_connection,
            )
            print(json.dumps(asdict(asyncio.run(shard))))
            return
        emit(measure(sizes, processes, args))
    except RuntimeError as exc:  # seats that never joined, a failed client or size
        sys.exit(f"bench.scale: {exc}")


if __name__ == "__main__":
    main()
