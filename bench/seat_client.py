"""Many lightweight seats in one process, for bench.scale: one Play stream per token read from
standard input (one a line), each answering index 0 the moment it is asked, on the raw wire with
grpc.aio, so a thousand seats do not need a thousand Python processes.

Run: python -m bench.seat_client ADDRESS [--seats-per-connection N] < tokens
Exits 0 once every stream has ended; prints one line per stream that failed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import grpc
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc


async def play(stub: referee_pb2_grpc.RefereeServiceAsyncStub, token: str) -> str | None:
    """Play the session to its end; what went wrong, if anything."""
    # grpc-stubs wants a request iterator; grpc.aio takes none, and then the call is written to.
    call = stub.Play()  # type: ignore[call-arg]
    try:
        await call.write(pb.PlayRequest(hello=pb.Hello(token=token, bot_name="scale")))
        async for response in call:
            kind = response.WhichOneof("message")
            if kind == "decision_request":
                asked = response.decision_request
                decision = pb.Decision(
                    match_id=asked.match_id, decision_id=asked.decision_id, index=0
                )
                await call.write(pb.PlayRequest(decision=decision))
            elif kind == "session_end":
                break
        await call.done_writing()
        return None
    except grpc.aio.AioRpcError as error:
        return f"{error.code().name}: {error.details()}"


async def run(address: str, tokens: list[str], per_connection: int) -> list[str]:
    # A local subchannel pool per channel: otherwise channels to one address share one
    # connection, and real bots each have their own.
    channels = [
        grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(0, len(tokens), per_connection)
    ]
    try:
        stubs = [referee_pb2_grpc.RefereeServiceStub(channel) for channel in channels]
        outcomes = await asyncio.gather(
            *(play(stubs[i // per_connection], token) for i, token in enumerate(tokens))
        )
    finally:
        await asyncio.gather(*(channel.close(None) for channel in channels))
    return [f"seat {i}: {why}" for i, why in enumerate(outcomes) if why is not None]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("address")
    parser.add_argument("--seats-per-connection", type=int, default=1)
    args = parser.parse_args()
    tokens = [line.strip() for line in sys.stdin if line.strip()]
    if not tokens or args.seats_per_connection < 1:
        print("seat_client: no tokens on standard input, or a bad --seats-per-connection")
        return 2
    failures = asyncio.run(run(args.address, tokens, args.seats_per_connection))
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
