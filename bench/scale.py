"""How many concurrent matches one referee process serves: N seats (100, 500, 1,000 by default)
in N/2 two-seat matches of a short game, all at once, against lightweight seats (bench.seat_client:
one process of many grpc.aio streams answering at once), so the referee is what is measured.
Turn latency is from when the match asks a seat to when its answer is in (the replay's
queued_ms + time_ms); the seat's clock is charged only time_ms, from when the request left the
referee. Memory is the referee process's RSS.

Each size runs in a fresh process, so one size's peak memory is not the next one's floor.

Run: .venv/bin/python -m bench.scale [--quick] [--seats N ...] [--rounds R] [--game NAME]
Writes bench/results/scale.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from arena_games import GAMES, get_game
from arena_games import replay_file as replay
from arena_games.deals import DealKey, practice_secret
from arena_games.match_settings import MatchSettings

from bench.bench_report import Goal, Report, child_result, emit, percentile
from referee.console import logging as arena_logging
from referee.matches.match import Match, MatchOutcome
from referee.wire.server import RefereeServer, start_server
from referee.wire.sessions import BotSession, SessionSeat

SIZES = (100, 500, 1000)
# Issue 21's goal for one referee process: a turn's p99 at this many seats.
GOAL_SEATS = 1000
GOAL_P99_MS = 150.0
QUICK_SIZES = (100, 500)
JOIN_TIMEOUT_S = 60.0
# Generous clocks: a seat that waits in the referee's queue must not be timed out, or the
# figures would mix in the substitute policy.
SETTINGS = MatchSettings(decision_ms=30_000, time_bank_ms=30_000)


@dataclass
class SizeResult:
    seats: int
    matches: int
    decisions: int
    seconds: float
    p50_ms: float
    p99_ms: float
    charged_p99_ms: float
    rss_before_mib: float
    rss_joined_mib: float
    rss_peak_mib: float
    substituted: int
    forfeits: int
    referee_cpu_s: float  # while the matches ran
    clients_cpu_s: float  # the seat clients' whole lives

    def row(self) -> dict[str, object]:
        streams = self.rss_joined_mib - self.rss_before_mib
        return {
            "seats": self.seats,
            "matches": self.matches,
            "matches/s": self.matches / self.seconds,
            "decisions/s": self.decisions / self.seconds,
            "turn p50 ms": self.p50_ms,
            "turn p99 ms": self.p99_ms,
            "charged p99 ms": self.charged_p99_ms,
            "referee CPU us/decision": self.referee_cpu_s * 1e6 / self.decisions,
            "referee CPU share": self.referee_cpu_s / self.seconds,
            "clients CPU s": self.clients_cpu_s,
            "KiB per seat stream": streams * 1024 / self.seats,
            "KiB per match": (self.rss_peak_mib - self.rss_before_mib) * 1024 / self.matches,
            "peak RSS MiB": self.rss_peak_mib,
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


async def one_size(
    seats: int, game: str, rounds: int, clients: int, per_connection: int
) -> SizeResult:
    before = status_mib("VmRSS")
    server = await start_server("127.0.0.1:0")
    sessions = [server.lobby.register(f"seat-{i}") for i in range(seats)]
    processes = await start_seats(server, sessions, clients, per_connection)
    try:
        await joined(sessions)
        joined_rss = status_mib("VmRSS")
        started, cpu = time.perf_counter(), time.process_time()
        tables = await asyncio.gather(
            *(table(game, sessions[i : i + 2], i // 2, rounds, server) for i in range(0, seats, 2))
        )
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
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
    turns = [r.queued_ms + r.time_ms for r in answered]  # asked to answered
    charged = [r.time_ms for r in answered]  # what the seats' clocks were charged
    return SizeResult(
        seats=seats,
        matches=len(outcomes),
        decisions=len(decisions),
        seconds=seconds,
        p50_ms=percentile(turns, 0.5),
        p99_ms=percentile(turns, 0.99),
        charged_p99_ms=percentile(charged, 0.99),
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


def run_size(seats: int, args: argparse.Namespace) -> SizeResult:
    """One size in a fresh interpreter: its JSON is the last line it prints."""
    command = [
        sys.executable,
        "-m",
        "bench.scale",
        "--one",
        str(seats),
        "--game",
        args.game,
        "--rounds",
        str(args.rounds),
        "--clients",
        str(args.clients),
        "--seats-per-connection",
        str(args.seats_per_connection),
    ]
    return SizeResult(**child_result(command, f"{seats} seats", 600))  # type: ignore[arg-type]


def measure(sizes: list[int], args: argparse.Namespace) -> Report:
    results = []
    for seats in sizes:
        results.append(run_size(seats, args))
        print(f"{seats} seats done", file=sys.stderr, flush=True)
    smallest = results[0]
    rows = [r.row() for r in results]
    for row, result in zip(rows, results, strict=True):
        row["p99 vs smallest"] = result.p99_ms / smallest.p99_ms
    report = Report(
        "scale",
        f"One referee process, concurrent {args.game} matches ({args.rounds} per table), "
        f"seats answering at once from {args.clients} client process(es)",
        rows,
    )
    report.facts["substituted decisions (timeouts)"] = sum(r.substituted for r in results)
    report.facts["forfeits"] = sum(r.forfeits for r in results)
    deadline = MatchSettings().decision_ms
    report.facts[f"charged p99 under the {deadline} ms deadline at"] = [
        r.seats for r in results if r.charged_p99_ms < deadline
    ]
    goal = next((r for r in results if r.seats == GOAL_SEATS), None)
    report.goals.append(
        Goal(
            f"turn p99 under {GOAL_P99_MS:.0f} ms at {GOAL_SEATS:,} seats",
            goal is not None and goal.p99_ms < GOAL_P99_MS,
            f"{goal.p99_ms:.0f} ms"
            if goal is not None
            else f"{GOAL_SEATS:,} seats not measured in this run",
        )
    )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, action="append", help="even; default 100 500 1000")
    parser.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES} only")
    parser.add_argument("--rounds", type=int, default=1, help="matches each table plays in turn")
    parser.add_argument("--game", choices=sorted(GAMES), default="capture-the-commander")
    parser.add_argument("--clients", type=int, default=1, help="seat client processes")
    parser.add_argument("--seats-per-connection", type=int, default=1)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child run of one size
    args = parser.parse_args()
    sizes = args.seats or list(QUICK_SIZES if args.quick else SIZES)
    if any(n < 2 or n % 2 for n in sizes) or args.rounds < 1 or args.clients < 1:
        parser.error("seats must be even and at least 2; rounds and clients at least 1")
    arena_logging.configure("warning")
    try:
        if args.one is not None:
            result = asyncio.run(
                one_size(args.one, args.game, args.rounds, args.clients, args.seats_per_connection)
            )
            print(json.dumps(asdict(result)))
            return
        emit(measure(sizes, args))
    except RuntimeError as exc:  # seats that never joined, a failed client or size
        sys.exit(f"bench.scale: {exc}")


if __name__ == "__main__":
    main()
