"""Spectators that never read, for bench.spectator_load: N Watch streams with the referee's token,
spread over K connections, each let in (its headers came) and then never read again. Prints
`ready` once every stream is in, then holds them until its standard input closes.

Run: python -m bench.watch_client ADDRESS TOKEN --streams N [--connections K]
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import grpc
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc

ADMIT_TIMEOUT_S = 60.0


async def hold(address: str, token: str, streams: int, connections: int) -> None:
    # A local subchannel pool per channel, so that K channels are K connections.
    channels = [
        grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(connections)
    ]
    stubs = [referee_pb2_grpc.RefereeServiceStub(channel) for channel in channels]
    calls = [stubs[i % connections].Watch(pb.WatchRequest(token=token)) for i in range(streams)]
    try:
        await asyncio.wait_for(
            asyncio.gather(*(call.initial_metadata() for call in calls)), ADMIT_TIMEOUT_S
        )
        print("ready", flush=True)
        # Never read: wait for the benchmark to close our standard input.
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    finally:
        for call in calls:
            call.cancel()
        await asyncio.gather(*(channel.close(None) for channel in channels))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("address")
    parser.add_argument("token")
    parser.add_argument("--streams", type=int, required=True)
    parser.add_argument("--connections", type=int, default=100)
    args = parser.parse_args()
    asyncio.run(hold(args.address, args.token, args.streams, min(args.connections, args.streams)))


if __name__ == "__main__":
    main()
