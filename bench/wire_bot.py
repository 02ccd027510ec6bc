"""The wire benchmark's bot: a random legal index for every request, on the raw wire, in the
same shape as the bare ping-pong's client (bench/echo_client.py), noting the byte size of every
decision request so that the bare ping-pong can send messages of exactly those sizes.

Run by bench.wire as: python -m bench.wire_bot FOLDER, with ARENA_ADDRESS and ARENA_TOKEN set.
Writes the sizes, one per line, to FOLDER/<pid>.sizes when its session ends.
"""

from __future__ import annotations

import os
import queue
import random
import sys
from pathlib import Path

import grpc
from arena.v1 import referee_pb2 as pb


def main() -> None:
    sizes_file = Path(sys.argv[1]) / f"{os.getpid()}.sizes"
    rng = random.Random(7)
    sizes: list[int] = []
    outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    hello = pb.Hello(token=os.environ["ARENA_TOKEN"], bot_name="wire-bot")
    outgoing.put(pb.PlayRequest(hello=hello).SerializeToString())
    with grpc.insecure_channel(os.environ["ARENA_ADDRESS"]) as channel:
        # Raw bytes both ways, so the size of each request is known without encoding it again.
        play = channel.stream_stream(
            "/arena.v1.RefereeService/Play",
            request_serializer=lambda b: b,
            response_deserializer=lambda b: b,
        )
        for raw in play(iter(outgoing.get, None)):
            response = pb.PlayResponse.FromString(raw)
            kind = response.WhichOneof("message")
            if kind == "decision_request":
                asked = response.decision_request
                sizes.append(len(raw))
                decision = pb.Decision(
                    match_id=asked.match_id,
                    decision_id=asked.decision_id,
                    index=int(rng.random() * len(asked.legal_actions)),
                )
                outgoing.put(pb.PlayRequest(decision=decision).SerializeToString())
            elif kind == "session_end":
                break
        outgoing.put(None)
    sizes_file.write_text("".join(f"{size}\n" for size in sizes))


if __name__ == "__main__":
    main()
