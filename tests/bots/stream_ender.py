"""A raw-wire bot that plays two decisions and then ends its stream one way, so that the tests
can read what the referee says of each end.

Usage: python stream_ender.py MODE, with ARENA_ADDRESS and ARENA_TOKEN set. MODE is one of
exit7      exits with code 7
sigkill    kills itself with SIGKILL
halfclose  ends its side of the stream and lives on, reading
cancel     cancels the call and lives on
huge       answers with a message over the referee's limit and lives on
Those that live on sleep LIVE_S, then exit 0 (a failed test cannot leave them behind for long).
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import time

import grpc
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc

PLAYED = 2  # decisions answered before the stream is ended
OVERSIZED_BYTES = 300 * 1024  # the referee's limit is 256 KiB
LIVE_S = 20.0


def end_stream(
    mode: str,
    call: grpc.Future,
    outgoing: queue.SimpleQueue[pb.PlayRequest | None],
    request: pb.DecisionRequest,
) -> None:
    if mode == "exit7":
        os._exit(7)
    if mode == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "halfclose":
        outgoing.put(None)
    if mode == "cancel":
        call.cancel()
    if mode == "huge":
        big = pb.Decision(match_id="x" * OVERSIZED_BYTES, decision_id=request.decision_id)
        outgoing.put(pb.PlayRequest(decision=big))


def main() -> int:
    mode = sys.argv[1]
    outgoing: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
    outgoing.put(pb.PlayRequest(hello=pb.Hello(token=os.environ["ARENA_TOKEN"], bot_name=mode)))
    asked = 0
    with grpc.insecure_channel(os.environ["ARENA_ADDRESS"]) as channel:
        call = referee_pb2_grpc.RefereeServiceStub(channel).Play(iter(outgoing.get, None))
        try:
            for response in call:
                if response.WhichOneof("message") != "decision_request":
                    continue
                request = response.decision_request
                asked += 1
                if asked > PLAYED:
                    end_stream(mode, call, outgoing, request)
                    continue
                decision = pb.Decision(
                    match_id=request.match_id, decision_id=request.decision_id, index=0
                )
                outgoing.put(pb.PlayRequest(decision=decision))
        except grpc.RpcError as error:
            print(f"stream_ender: {error.code().name}: {error.details()}", file=sys.stderr)
        time.sleep(LIVE_S)
    return 0


if __name__ == "__main__":
    sys.exit(main())
