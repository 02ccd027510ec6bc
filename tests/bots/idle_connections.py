"""Opens many connections to a referee and says nothing on them, as an attacker who wants its
file descriptors would.

Usage: python idle_connections.py HOST PORT COUNT [--send raw|preface|settings] [--reopen]

Waits until HOST:PORT accepts, opens COUNT connections, prints `holding N`, then keeps them
until its standard input closes, printing `closed N` whenever the count of connections the
referee has closed changes. --send says what each connection sends: nothing (raw), the
HTTP/2 preface, or the preface and an empty SETTINGS frame (a finished handshake, no call).
With --reopen every connection the referee closes is opened again at once.
"""

from __future__ import annotations

import argparse
import selectors
import socket
import sys
import threading
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
SENT = {"raw": b"", "preface": PREFACE, "settings": PREFACE + EMPTY_SETTINGS}
WAIT_FOR_PORT_S = 60.0


def connect(host: str, port: int, send: bytes) -> socket.socket | None:
    conn = socket.socket()
    try:
        conn.settimeout(2.0)
        conn.connect((host, port))
        conn.sendall(send)
        conn.setblocking(False)
        return conn
    except OSError:
        conn.close()
        return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("--send", choices=sorted(SENT), default="raw")
    parser.add_argument("--reopen", action="store_true")
    args = parser.parse_args()
    send = SENT[args.send]
    deadline = time.monotonic() + WAIT_FOR_PORT_S
    while (first := connect(args.host, args.port, send)) is None:
        if time.monotonic() > deadline:
            sys.exit("the port never accepted")
        time.sleep(0.01)
    watched = selectors.DefaultSelector()
    watched.register(first, selectors.EVENT_READ)
    while len(watched.get_map()) < args.count:
        if (conn := connect(args.host, args.port, send)) is not None:
            watched.register(conn, selectors.EVENT_READ)
    print(f"holding {len(watched.get_map())}", flush=True)
    stop = threading.Event()

    def wait_for_stdin() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=wait_for_stdin, daemon=True).start()
    closed = 0
    while not stop.is_set():
        ended = 0
        for key, _ in watched.select(0.1):
            held = key.fileobj
            assert isinstance(held, socket.socket)
            try:
                data = held.recv(65536)
            except OSError:
                data = b""
            if not data:  # the referee closed it (what it sends otherwise is ignored)
                watched.unregister(held)
                held.close()
                ended += 1
        if ended:
            closed += ended
            print(f"closed {closed}", flush=True)
        while args.reopen and len(watched.get_map()) < args.count:
            if (conn := connect(args.host, args.port, send)) is None:
                break
            watched.register(conn, selectors.EVENT_READ)


if __name__ == "__main__":
    main()
