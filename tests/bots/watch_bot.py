"""A bot that tries to watch the referee's matches, as a bot in a sandbox would to see the
other seating of its own deal, and says on its output how each try went. It plays nothing.

Usage: python watch_bot.py --token TOKEN [--tcp HOST:PORT], with ARENA_ADDRESS set (the Unix
socket, for a sandboxed bot). It opens Watch with TOKEN over ARENA_ADDRESS and, with --tcp,
over TCP, and prints one line for each: `watch: NAME: WATCHED: WHAT` when a message came,
`watch: NAME: refused: CODE: DETAIL` when the referee said no, or `watch: NAME: blocked: WHY`
when the referee could not be reached at all.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

import grpc
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc

WAIT_S = 10.0


async def watch(target: str, token: str) -> str:
    """What one Watch over target got: its first message, a refusal, or no connection."""
    async with grpc.aio.insecure_channel(target) as channel:
        call = referee_pb2_grpc.RefereeServiceStub(channel).Watch(pb.WatchRequest(token=token))
        try:
            message = await asyncio.wait_for(call.read(), WAIT_S)
        except grpc.aio.AioRpcError as exc:
            # UNAVAILABLE is grpc's word for "could not connect": the referee never saw us.
            if exc.code() == grpc.StatusCode.UNAVAILABLE:
                return f"blocked: {exc.code().name}: {exc.details()}"
            return f"refused: {exc.code().name}: {exc.details()}"
        except TimeoutError:
            call.cancel()
            return f"blocked: nothing within {WAIT_S:.0f} s"
        if message is grpc.aio.EOF:
            return "refused: the stream ended without a message"
        call.cancel()
        kind = message.WhichOneof("message")
        match = f" of {message.match_start.match_id}" if kind == "match_start" else ""
        return f"WATCHED: {kind}{match}"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--token", required=True)
    parser.add_argument("--tcp")
    args = parser.parse_args()
    address = os.environ["ARENA_ADDRESS"]
    print(f"watch: address: {address.partition(':')[0]}", flush=True)
    print(f"watch: own: {await watch(address, args.token)}", flush=True)
    if args.tcp:
        print(f"watch: tcp: {await watch(args.tcp, args.token)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
