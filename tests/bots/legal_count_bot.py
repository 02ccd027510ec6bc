"""A raw-wire bot that plays randomly and writes, for every decision request it receives, the
number of legal actions offered to $ARENA_RECORD_DIR/<pid>.jsonl: what reached the bot, with
no SDK in between that could answer for it.

Usage: python legal_count_bot.py, with ARENA_ADDRESS, ARENA_TOKEN and ARENA_RECORD_DIR set.
"""

from __future__ import annotations

import json
import os
import queue
import random
import sys
from pathlib import Path

import grpc
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc


def record(path: Path, request: pb.DecisionRequest) -> None:
    line = {
        "match": request.match_id,
        "seat": request.seat,
        "decision_id": request.decision_id,
        "legal": len(request.legal_actions),
    }
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def main() -> int:
    rng = random.Random(5)
    path = Path(os.environ["ARENA_RECORD_DIR"]) / f"{os.getpid()}.jsonl"
    outgoing: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
    hello = pb.Hello(token=os.environ["ARENA_TOKEN"], bot_name="legal-count")
    outgoing.put(pb.PlayRequest(hello=hello))
    with grpc.insecure_channel(os.environ["ARENA_ADDRESS"]) as channel:
        stub = referee_pb2_grpc.RefereeServiceStub(channel)
        try:
            for response in stub.Play(iter(outgoing.get, None)):
                kind = response.WhichOneof("message")
                if kind == "decision_request":
                    request = response.decision_request
                    record(path, request)
                    decision = pb.Decision(
                        match_id=request.match_id,
                        decision_id=request.decision_id,
                        index=rng.randrange(len(request.legal_actions)),
                    )
                    outgoing.put(pb.PlayRequest(decision=decision))
                elif kind == "session_end":
                    break
        except grpc.RpcError as error:
            print(f"legal_count_bot: {error.code().name}: {error.details()}", file=sys.stderr)
            return 1
        finally:
            outgoing.put(None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
