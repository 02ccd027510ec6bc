"""A hostile bot on the raw wire: each mode attacks the referee one way, and everything the
referee answers is written to a record file, one JSON object a line, for the tests to check.

Usage: python hostile.py MODE RECORD, with ARENA_ADDRESS and ARENA_TOKEN set. MODE is one of
  play     random legal choices (and records any refusal, e.g. of a reused token)
  flood    at its first decision, thousands of messages that answer nothing, never the decision
  huge     answers its first decision with a message over the referee's size limit
  garbage  bytes that are no protobuf: first as its opening message, then mid-session
  junk     writes junk bytes to the referee's socket outside gRPC, then plays normally
  unasked  before each answer, answers decisions nobody asked (another id, another match):
           a protocol mistake
  stale    before each answer, sends its previous answer again
  zeroid   answers with decision_id left at 0 (an id the referee never gives)
  twice    at its first decision, joins a second time with the same token, then plays on
  silent   opens its stream and never says Hello
  badtoken says Hello with a token that is not its own
  fork     starts children that ignore SIGTERM, joins, and exits at its first decision
  rejoin   at its third decision, drops its stream unanswered and joins again with its token
"""

from __future__ import annotations

import json
import os
import queue
import random
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc

FLOOD_MESSAGES = 5000
OVERSIZED_BYTES = 300 * 1024  # the referee's limit is 256 KiB
GARBAGE = b"\xff\xff\xff\xff\x0f" * 8  # field tags of wire type 7, which does not exist
JUNK = b"GET / HTTP/1.0\r\n\r\n" + bytes(range(256))  # not the HTTP/2 connection preface
CHILDREN = 3
# A child outlives a SIGTERM and its parent; it ends on its own after a while, so a failed test
# cannot leave it behind for long.
CHILD_CODE = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(90)"

Outgoing = queue.SimpleQueue[pb.PlayRequest | bytes | None]
Play = Callable[[Iterator[pb.PlayRequest | bytes]], Iterator[pb.PlayResponse]]


class Recorder:
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, **fields: object) -> None:
        with self.path.open("a") as sink:
            sink.write(json.dumps(fields) + "\n")

    def status(self, error: grpc.RpcError, call: str = "play") -> None:
        self.write(kind="status", call=call, code=error.code().name, details=error.details())


def requests(outgoing: Outgoing) -> Iterator[pb.PlayRequest | bytes]:
    while (message := outgoing.get()) is not None:
        yield message


def hello(token: str | None = None) -> pb.PlayRequest:
    token = os.environ["ARENA_TOKEN"] if token is None else token
    return pb.PlayRequest(hello=pb.Hello(token=token, bot_name="hostile"))


def answer(request: pb.DecisionRequest, rng: random.Random) -> pb.PlayRequest:
    decision = pb.Decision(
        match_id=request.match_id,
        decision_id=request.decision_id,
        index=rng.randrange(len(request.legal_actions)),
    )
    return pb.PlayRequest(decision=decision)


def flood(outgoing: Outgoing, request: pb.DecisionRequest) -> None:
    """Empty messages and second Hellos, as fast as the stream takes them. (An answer to a
    decision never asked would end the match at once, as a protocol mistake, before the flood
    could be measured: the mode `unasked` tries that.)"""
    for n in range(FLOOD_MESSAGES):
        outgoing.put(pb.PlayRequest() if n % 2 else hello())


class Player:
    """Plays one session in its mode, writing what the referee says to the record."""

    def __init__(self, mode: str, record: Recorder, play: Play) -> None:
        self.mode = mode
        self.record = record
        self.play = play
        self.rng = random.Random(7)
        self.outgoing: Outgoing = queue.SimpleQueue()
        self.asked = 0
        self.previous: pb.PlayRequest | None = None
        self.drop_now = False  # rejoin: end this stream and open another
        self.rejoined = False

    def run(self, channel: grpc.Channel) -> int:
        code = self.stream(channel)
        while self.drop_now:
            self.drop_now, self.rejoined = False, True
            self.outgoing = queue.SimpleQueue()
            self.record.write(kind="rejoining", asked=self.asked)
            code = self.stream(channel)
        return code

    def stream(self, channel: grpc.Channel) -> int:
        self.outgoing.put(
            hello("not-" + os.environ["ARENA_TOKEN"]) if self.mode == "badtoken" else hello()
        )
        try:
            responses = self.play(requests(self.outgoing))
            for response in responses:
                kind = response.WhichOneof("message")
                if kind == "decision_request":
                    self.asked += 1
                    self.decide(response.decision_request, channel)
                    if self.drop_now:
                        responses.cancel()  # type: ignore[attr-defined]
                        return 0
                elif kind == "notice":
                    self.record.write(kind="notice", message=response.notice.message)
                elif kind == "match_end":
                    self.record.write(kind="match_end", match_id=response.match_end.match_id)
                elif kind == "session_end":
                    reason = response.session_end.reason
                    self.record.write(kind="session_end", reason=reason, asked=self.asked)
                    return 0
        except grpc.RpcError as error:
            self.record.status(error)
            return 1
        finally:
            self.outgoing.put(None)
        return 0

    def decide(self, request: pb.DecisionRequest, channel: grpc.Channel) -> None:
        first = self.asked == 1
        if self.mode == "rejoin" and self.asked == 3 and not self.rejoined:
            self.drop_now = True  # unanswered: the rejoined stream is sent it again
            return
        if self.mode == "flood" and first:
            flood(self.outgoing, request)
            self.record.write(kind="flooded", messages=FLOOD_MESSAGES)
            return
        if self.mode == "huge" and first:
            oversized = pb.Decision(match_id="x" * OVERSIZED_BYTES, decision_id=request.decision_id)
            self.outgoing.put(pb.PlayRequest(decision=oversized))
            return
        if self.mode == "garbage" and first:
            self.outgoing.put(GARBAGE)
            return
        if self.mode == "fork" and first:
            os._exit(3)
        if self.mode == "twice" and first:
            self.join_again(channel)
        if self.mode == "unasked":
            for match_id, decision_id in (
                (request.match_id, request.decision_id + 1000),
                ("no-such-match", request.decision_id),
            ):
                bogus = pb.Decision(match_id=match_id, decision_id=decision_id, index=0)
                self.outgoing.put(pb.PlayRequest(decision=bogus))
        if self.mode == "stale" and self.previous is not None:
            self.outgoing.put(self.previous)
        self.previous = answer(request, self.rng)
        if self.mode == "zeroid":
            self.previous.decision.decision_id = 0
        self.outgoing.put(self.previous)

    def join_again(self, channel: grpc.Channel) -> None:
        """A second stream with this session's token, while the first one plays on."""
        second = referee_pb2_grpc.RefereeServiceStub(channel).Play(iter([hello()]), timeout=20)
        try:
            for response in second:
                self.record.write(kind="second_stream", got=response.WhichOneof("message"))
        except grpc.RpcError as error:
            self.record.status(error, call="second")


def raw_play(channel: grpc.Channel) -> Play:
    """Play, sending messages as they are and bytes as bytes."""
    multi = channel.stream_stream(
        "/arena.v1.RefereeService/Play",
        request_serializer=lambda m: m if isinstance(m, bytes) else m.SerializeToString(),
        response_deserializer=pb.PlayResponse.FromString,
    )

    def play(requests: Iterator[pb.PlayRequest | bytes]) -> Iterator[pb.PlayResponse]:
        responses: Iterator[pb.PlayResponse] = iter(multi(requests))
        return responses

    return play


def garbage_first(channel: grpc.Channel, record: Recorder) -> None:
    """An opening message that is no protobuf at all."""
    raw = channel.stream_stream(
        "/arena.v1.RefereeService/Play",
        request_serializer=None,
        response_deserializer=pb.PlayResponse.FromString,
    )
    try:
        for _ in raw(iter([GARBAGE]), timeout=20):
            pass
    except grpc.RpcError as error:
        record.status(error, call="garbage_first")


def write_junk(address: str, record: Recorder) -> None:
    """Junk on a fresh connection to the referee's socket, below gRPC: what comes back, and
    whether the referee closed the connection."""
    if address.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX)
        target: str | tuple[str, int] = address[5:]
    else:
        host, port = address.rsplit(":", 1)
        sock = socket.socket()
        target = (host, int(port))
    with sock:
        sock.settimeout(20)
        sock.connect(target)
        sock.sendall(JUNK)
        received = b""
        while chunk := sock.recv(4096):
            received += chunk
    record.write(kind="junk", reply_bytes=len(received), closed=True)


def never_hello(channel: grpc.Channel, record: Recorder) -> None:
    silence: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
    stub = referee_pb2_grpc.RefereeServiceStub(channel)
    try:
        for _ in stub.Play(iter(silence.get, None), timeout=60):
            pass
    except grpc.RpcError as error:
        record.status(error)
    finally:
        silence.put(None)


def start_children(record: Recorder) -> None:
    """Children in this bot's process group that ignore SIGTERM, started before any gRPC object
    exists (forking after is unsafe)."""
    pids = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD_CODE], stdin=subprocess.DEVNULL, start_new_session=False
        ).pid
        for _ in range(CHILDREN)
    ]
    record.write(kind="children", pids=pids, group=os.getpgrp())


def main() -> int:
    mode, record = sys.argv[1], Recorder(Path(sys.argv[2]))
    address = os.environ["ARENA_ADDRESS"]
    if mode == "fork":
        start_children(record)
    if mode == "junk":
        write_junk(address, record)
    with grpc.insecure_channel(address) as channel:
        if mode == "silent":
            never_hello(channel, record)
            return 1
        if mode == "garbage":
            garbage_first(channel, record)
        return Player(mode, record, raw_play(channel)).run(channel)


if __name__ == "__main__":
    sys.exit(main())
