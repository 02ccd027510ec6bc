"""What spectators cost the bots: the same matches with no spectator, then with N Watch streams
(1,000 by default) that never read, on tight clocks (100 ms a decision, no bank), so a referee
that makes a bot wait for its spectators shows as timeouts. Seats are lightweight
(bench.seat_client: index 0 the moment they are asked), the spectators one process of many
grpc.aio streams (bench.watch_client), so the referee is what is measured.

Decision time is what the seat's clock was charged (the replay's time_ms): from when the request
left the referee to when the answer came off the stream, less the referee's standstills.
Every phase runs in a fresh process; the load average is read before each.

Run: .venv/bin/python -m bench.spectator_load [--watchers N] [--matches M] [--repeat R]
     [--one-at-a-time] [--game NAME] [--connections K]
Writes bench/results/spectator_load.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import asdict, dataclass

from arena_games import GAMES, get_game
from arena_games import replay_file as replay
from arena_games.deals import DealKey, practice_secret
from arena_games.match_settings import MatchSettings, Misbehaviour

from bench.bench_report import Goal, Report, child_result, emit, percentile
from bench.scale import joined, start_seats
from referee import log_config as arena_logging
from referee.matches.match import Match, MatchOutcome
from referee.wire.server import RefereeServer, start_server
from referee.wire.sessions import BotSession, SessionSeat

READY_TIMEOUT_S = 120.0


@dataclass
class Phase:
    watchers: int
    matches: int
    decisions: int
    median_ms: float
    p99_ms: float
    max_ms: float
    timeouts: int  # forfeits for timeout: every seat here answers at once, so each is innocent
    other_forfeits: int
    streams_open_at_end: int
    seconds: float
    load_before: float
    referee_cpu_s: float

    def row(self) -> dict[str, object]:
        return {
            "spectators": self.watchers,
            "matches": self.matches,
            "decisions": self.decisions,
            "median ms": self.median_ms,
            "p99 ms": self.p99_ms,
            "max ms": self.max_ms,
            "timeouts": self.timeouts,
            "other forfeits": self.other_forfeits,
            "streams left": self.streams_open_at_end,
            "seconds": self.seconds,
            "referee CPU s": self.referee_cpu_s,
            "load before": self.load_before,
        }


async def start_watchers(
    server: RefereeServer, streams: int, connections: int
) -> asyncio.subprocess.Process:
    """The watch client, once every one of its streams has been let in."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.watch_client",
        server.address,
        server.spectator_token,
        "--streams",
        str(streams),
        "--connections",
        str(connections),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), READY_TIMEOUT_S)
    if line.strip() != b"ready":
        raise RuntimeError(f"the watch client did not get its streams in: {line!r}")
    return process


async def play(
    game: str, pair: list[BotSession], number: int, settings: MatchSettings, server: RefereeServer
) -> MatchOutcome:
    match = Match(
        get_game(game),
        [SessionSeat(s) for s in pair],
        deal=DealKey.of(practice_secret(1), f"d{number}"),
        match_id=f"spectated-{number}",
        settings=settings,
        spectators=server.hub,
    )
    return await match.run()


async def one_phase(args: argparse.Namespace, watchers: int) -> Phase:
    load = os.getloadavg()[0]
    server = await start_server("127.0.0.1:0", max_spectators=max(1, watchers))
    sessions = [server.lobby.register(f"seat-{i}") for i in range(2 * args.matches)]
    seats = await start_seats(server, sessions, 1, 1)
    watching = None
    try:
        await joined(sessions)
        if watchers:
            watching = await start_watchers(server, watchers, args.connections)
        settings = MatchSettings(decision_ms=args.decision_ms, time_bank_ms=0)
        started, cpu = time.perf_counter(), time.process_time()
        matches = [
            play(args.game, sessions[2 * i : 2 * i + 2], i, settings, server)
            for i in range(args.matches)
        ]
        if args.one_at_a_time:
            outcomes = [await match for match in matches]
        else:
            outcomes = list(await asyncio.gather(*matches))
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        left = server.hub.open_streams()
    finally:
        for session in sessions:
            session.end("the benchmark is over")
        if watching is not None and watching.stdin is not None:
            watching.stdin.close()
        await asyncio.gather(*(p.wait() for p in [*seats, *([watching] if watching else [])]))
        await server.stop()
    decisions = [r for o in outcomes for r in o.records if isinstance(r, replay.DecisionRecord)]
    charged = [r.time_ms for r in decisions if r.substituted_for is None]
    causes = [f.cause for o in outcomes for f in o.forfeits]
    timeouts = sum(1 for cause in causes if cause is Misbehaviour.TIMEOUT)
    return Phase(
        watchers=watchers,
        matches=len(outcomes),
        decisions=len(decisions),
        median_ms=percentile(charged, 0.5),
        p99_ms=percentile(charged, 0.99),
        max_ms=max(charged),
        timeouts=timeouts,
        other_forfeits=len(causes) - timeouts,
        streams_open_at_end=left,
        seconds=seconds,
        load_before=load,
        referee_cpu_s=cpu,
    )


def run_phase(args: argparse.Namespace, watchers: int) -> Phase:
    """One phase in a fresh interpreter: its JSON is the last line it prints."""
    command = [
        sys.executable,
        "-m",
        "bench.spectator_load",
        "--one",
        str(watchers),
        "--matches",
        str(args.matches),
        "--game",
        args.game,
        "--decision-ms",
        str(args.decision_ms),
        "--connections",
        str(args.connections),
        *(["--one-at-a-time"] if args.one_at_a_time else []),
    ]
    return Phase(**child_result(command, f"{watchers} spectators", 900))  # type: ignore[arg-type]


def measure(args: argparse.Namespace) -> Report:
    phases = []
    for _ in range(args.repeat):
        for watchers in (0, args.watchers):
            phases.append(run_phase(args, watchers))
            print(f"{watchers} spectators done", file=sys.stderr, flush=True)
    rows = [p.row() for p in phases]
    ratios = []
    for index, (row, phase) in enumerate(zip(rows, phases, strict=True)):
        # Against the phase without spectators of the same pair.
        base = phases[index - index % 2]
        row["median vs none"] = ratio = phase.median_ms / base.median_ms
        if phase.watchers:
            ratios.append(ratio)
    watched = [p for p in phases if p.watchers]
    order = "one after another" if args.one_at_a_time else "at once"
    report = Report(
        "spectator_load",
        f"{args.matches} {args.game} matches {order}, {args.decision_ms} ms a decision and no "
        f"bank, with no spectator and with {args.watchers} Watch streams that never read "
        f"(over {args.connections} connections)",
        rows,
    )
    timeouts = sum(p.timeouts for p in watched)
    report.goals.append(
        Goal(
            "no innocent bot times out because of spectators",
            timeouts == 0,
            f"{timeouts} timeouts in {sum(p.matches for p in watched)} spectated matches",
        )
    )
    report.goals.append(
        Goal(
            "median decision time with the spectators within 2x of the same run's without",
            max(ratios) <= 2.0,
            f"worst ratio {max(ratios):.2f}",
        )
    )
    report.facts["load average (1 min) before the first phase"] = phases[0].load_before
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watchers", type=int, default=1000)
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--game", choices=sorted(GAMES), default="capture-the-commander")
    parser.add_argument("--decision-ms", type=int, default=100)
    parser.add_argument("--connections", type=int, default=1000, help="the spectators' own")
    parser.add_argument("--repeat", type=int, default=1, help="pairs of phases, in turn")
    parser.add_argument("--one-at-a-time", action="store_true", help="matches in turn")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child run of one phase
    args = parser.parse_args()
    if args.watchers < 1 or args.matches < 1 or args.connections < 1:
        parser.error("watchers, matches and connections must be at least 1")
    arena_logging.configure("error")
    try:
        if args.one is not None:
            print(json.dumps(asdict(asyncio.run(one_phase(args, args.one)))))
            return
        emit(measure(args))
    except RuntimeError as exc:
        sys.exit(f"bench.spectator_load: {exc}")


if __name__ == "__main__":
    main()
