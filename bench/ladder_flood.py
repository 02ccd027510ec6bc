"""How much an anonymous flood of page requests slows the live ladder: `arena ladder serve`
(a real process) plays the example random bots while this process counts the matches it
finishes a minute, first with no visitor, then while client processes request its page as fast
as they can from one address. Run twice in the same bench: with the ladder's per-client request
limit (`[web] requests_per_second`, 40 by default) and with it lifted. Each line prints the
flood's rate against the quiet rate measured just before it, by the same serve.

Run: .venv/bin/python -m bench.ladder_flood [--seconds 15] [--clients 8] [--bots 4] [--limit 40]
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event as EventType
from pathlib import Path

ARENA = [sys.executable, "-m", "tournaments.cli.arena_app"]
UNLIMITED = 1_000_000


def arena(*args: str) -> None:
    done = subprocess.run([*ARENA, *args], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(done.stderr)


def make_ladder(folder: Path, bots: int, requests_per_second: int) -> None:
    arena("ladder", "init", str(folder), "--game", "opposing-force", "--listen", "127.0.0.1:0")
    toml = folder / "ladder.toml"
    text = toml.read_text().replace('address = "127.0.0.1:8061"', 'address = "127.0.0.1:0"')
    text = text.replace("[web]\n", f"[web]\nrequests_per_second = {requests_per_second}\n")
    toml.write_text(text)
    for n in range(bots):
        arena("ladder", "add", str(folder), "--name", f"random{n}", "--spec", "example:random")


def finished(folder: Path) -> int:
    with sqlite3.connect(f"file:{folder / 'ladder.sqlite'}?mode=ro", uri=True) as db:
        sql = "SELECT COUNT(*) FROM matches WHERE status = 'finished'"
        return int(db.execute(sql).fetchone()[0])


def per_minute(folder: Path, seconds: float) -> float:
    start, at = finished(folder), time.monotonic()
    time.sleep(seconds)
    return (finished(folder) - start) * 60 / (time.monotonic() - at)


def flood(port: int, stop: EventType, results: Queue[dict[int, int]]) -> None:
    """GET / again and again on one keep-alive connection (a new one when it is closed), in a
    process of its own as an outside client is; the statuses it got, counted, at the end."""
    answers: dict[int, int] = {}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    while not stop.is_set():
        try:
            connection.request("GET", "/")
            answer = connection.getresponse()
            answer.read()
            answers[answer.status] = answers.get(answer.status, 0) + 1
        except (OSError, http.client.HTTPException):
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.close()
    results.put(answers)


def measure(folder: Path, seconds: float, clients: int) -> tuple[float, float, dict[int, int]]:
    out = folder / "serve.out"
    with out.open("wb") as sink:
        serve = subprocess.Popen([*ARENA, "ladder", "serve", str(folder)], stdout=sink, stderr=sink)
    try:
        deadline = time.monotonic() + 60
        while not (
            found := re.search(r"its page is at http://127\.0\.0\.1:(\d+)/", out.read_text())
        ):
            if serve.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(out.read_text())
            time.sleep(0.2)
        port = int(found.group(1))
        time.sleep(3)  # the bots start
        quiet = per_minute(folder, seconds)
        stop = multiprocessing.Event()
        results: Queue[dict[int, int]] = multiprocessing.Queue()
        floods = [
            multiprocessing.Process(target=flood, args=(port, stop, results))
            for _ in range(clients)
        ]
        for process in floods:
            process.start()
        flooded = per_minute(folder, seconds)
        stop.set()
        answers: dict[int, int] = {}
        for _ in floods:
            for status, n in results.get(timeout=60).items():
                answers[status] = answers.get(status, 0) + n
        for process in floods:
            process.join(30)
        return quiet, flooded, answers
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=15.0, help="each measure's length")
    parser.add_argument("--clients", type=int, default=8, help="flooding processes")
    parser.add_argument("--bots", type=int, default=4)
    parser.add_argument("--limit", type=int, default=40, help="[web] requests_per_second")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for label, limit in ((f"{args.limit} req/s per client", args.limit), ("no limit", UNLIMITED)):
        root = Path(tempfile.mkdtemp(prefix="ladder-flood-"))
        try:
            folder = root / "ladder"
            make_ladder(folder, args.bots, limit)
            quiet, flooded, answers = measure(folder, args.seconds, args.clients)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        served = sum(answers.values()) / args.seconds
        print(
            f"{label:>22}: {quiet:7.0f} matches/min quiet, {flooded:7.0f} flooded "
            f"(ratio {flooded / quiet:.2f}); flood {served:.0f} req/s answered {answers}"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
