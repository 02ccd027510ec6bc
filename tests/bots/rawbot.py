"""A bot written against the raw wire, not the SDK, so it can misbehave on purpose.

Usage: python rawbot.py MODE, with ARENA_ADDRESS and ARENA_TOKEN set. MODE is one of
play (random legal choices), illegal (an index past the legal list), hang (stops answering at
its third decision), exit (exits at its third decision), typed (answers with typed actions),
count (plays randomly and writes, for every request, the number of legal actions offered to
$ARENA_RECORD_DIR/<pid>.jsonl: what reached the bot, with no SDK in between).
"""

from __future__ import annotations

import json
import os
import queue
import random
import sys
import time
from pathlib import Path

import grpc
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc


def record_count(request: pb.DecisionRequest) -> None:
    line = {
        "match": request.match_id,
        "seat": request.seat,
        "decision_id": request.decision_id,
        "legal": len(request.legal_actions),
    }
    path = Path(os.environ["ARENA_RECORD_DIR"]) / f"{os.getpid()}.jsonl"
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def choose(mode: str, request: pb.DecisionRequest, asked: int, rng: random.Random) -> pb.Decision:
    legal = request.legal_actions
    if mode == "count":
        record_count(request)
    decision = pb.Decision(match_id=request.match_id, decision_id=request.decision_id)
    if mode == "illegal":
        decision.index = len(legal) + 5
    elif mode == "hang" and asked >= 3:
        time.sleep(3600)
    elif mode == "exit" and asked >= 3:
        os._exit(3)
    elif mode == "typed":
        decision.action.CopyFrom(legal[rng.randrange(len(legal))].action)
    else:
        decision.index = rng.randrange(len(legal))
    return decision


def main() -> int:
    mode = sys.argv[1]
    rng = random.Random(7)
    outgoing: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
    outgoing.put(pb.PlayRequest(hello=pb.Hello(token=os.environ["ARENA_TOKEN"], bot_name=mode)))
    asked = 0
    with grpc.insecure_channel(os.environ["ARENA_ADDRESS"]) as channel:
        stub = referee_pb2_grpc.RefereeServiceStub(channel)
        try:
            for response in stub.Play(iter(outgoing.get, None)):
                kind = response.WhichOneof("message")
                if kind == "decision_request":
                    asked += 1
                    decision = choose(mode, response.decision_request, asked, rng)
                    outgoing.put(pb.PlayRequest(decision=decision))
                elif kind == "session_end":
                    break
        except grpc.RpcError as error:
            print(f"rawbot: {error.code().name}: {error.details()}", file=sys.stderr)
            return 1
        finally:
            outgoing.put(None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
