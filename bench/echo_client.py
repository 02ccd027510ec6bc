"""The bare ping-pong's client process: answers every request message on one bidi stream, and
reads event messages without answering, as a bot does."""

from __future__ import annotations

import queue
import sys

import grpc


def main() -> None:
    address = sys.argv[1]
    outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    with grpc.insecure_channel(address) as channel:
        call = channel.stream_stream(
            "/bench.Echo/PingPong",
            request_serializer=lambda b: b,
            response_deserializer=lambda b: b,
        )
        outgoing.put(b"hello")
        for message in call(iter(outgoing.get, None)):
            if message == b"bye":
                break
            if message.startswith(b"e"):
                continue  # an event: the referee expects no answer to those
            outgoing.put(message[:64])  # answers are small, as a Decision is
        outgoing.put(None)


if __name__ == "__main__":
    main()
