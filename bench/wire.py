"""Decision round trip over gRPC: the full referee (real bot processes, Opposing Force) against
a bare grpc.aio bidirectional ping-pong with messages of the same size, measured in the same run.

Run: .venv/bin/python -m bench.wire [--games N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
from arena.v1 import referee_pb2 as pb

from referee import replay
from referee.decisions import legal_action_messages
from referee.games import get_game
from referee.games.playout import resolve_chance
from referee.host import SeriesPlan, run_series
from referee.launcher import parse_spec
from referee.settings import MatchSettings

RAWBOT = Path(__file__).resolve().parent.parent / "tests" / "bots" / "rawbot.py"


async def bare_ping_pong(rounds: int, size: int) -> list[float]:
    """Milliseconds per round trip of a size-byte message to a client process and back."""
    inbox: asyncio.Queue[bytes] = asyncio.Queue()
    times: list[float] = []
    payload = b"x" * size

    async def handler(requests: AsyncIterator[bytes], context: object) -> AsyncIterator[bytes]:
        reader = asyncio.create_task(_drain(requests, inbox))
        await inbox.get()  # hello
        for _ in range(rounds):
            started = time.perf_counter()
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


def referee_round_trips(games: int, tmp: Path) -> tuple[list[float], int]:
    """Milliseconds per decision as the referee measures it, and a typical request size."""
    bot = parse_spec(f"cmd:{sys.executable} {RAWBOT} play")
    plan = SeriesPlan(
        get_game("opposing-force"),
        [bot, bot],
        games,
        seed=1,
        replays=tmp,
        settings=MatchSettings(decision_ms=5000),
    )
    outcomes = asyncio.run(run_series(plan))
    times = []
    for outcome, _ in outcomes:
        assert outcome.replay_path is not None
        times += [
            r.time_ms
            for r in replay.read(outcome.replay_path)
            if isinstance(r, replay.DecisionRecord)
        ]
    state = get_game("opposing-force").new_state()
    resolve_chance(state, random.Random(1))
    request = pb.DecisionRequest(
        observation=state.observation(0), legal_actions=legal_action_messages(state, 0)
    )
    return times, len(pb.PlayResponse(decision_request=request).SerializeToString())


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--json", type=Path, default=Path("bench/results/wire.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        referee_ms, size = referee_round_trips(args.games, Path(tmp))
    bare_ms = asyncio.run(bare_ping_pong(len(referee_ms), size))
    rows = {
        "bare grpc.aio ping-pong": bare_ms,
        "referee decision (Opposing Force)": referee_ms,
    }
    print(f"{'':36} {'n':>6} {'median ms':>10} {'p99 ms':>8}")
    for name, values in rows.items():
        print(
            f"{name:36} {len(values):6d} {statistics.median(values):10.3f} {pct(values, 0.99):8.3f}"
        )
    ratio = statistics.median(referee_ms) / statistics.median(bare_ms)
    print(f"ratio of medians (referee / bare): {ratio:.2f}  (request size {size} bytes)")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {
                name: {"n": len(v), "median_ms": statistics.median(v), "p99_ms": pct(v, 0.99)}
                for name, v in rows.items()
            }
            | {"ratio": ratio, "request_bytes": size},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
