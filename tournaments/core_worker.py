"""One referee process of the cores executor (tournaments/cores_executor.py): a JobHost, as
each Dask worker keeps, fed matches over a socket its parent hands it.

Started as `python -m tournaments.core_worker FD`, FD being its end of a socket pair. Messages
both ways are pickled tuples (multiprocessing.connection framing). The parent sends the
JobHostSpec and this process's number first (so the deal secret never shows in a command line),
then ("play", MatchJob), ("drop", bot name) when a live ladder's bot no longer plays, and
finally ("stop",). This process answers ("ready", address) or
("error", why) once, ("bot", pid, alive) as its bot processes start and end, so that the parent
can end them if this process is killed, and ("played", match_id, Played) or ("failed",
match_id, why) for every match.

Ctrl-C reaches every process of the terminal's group: this one ignores it and lets its parent
stop it. A parent that is gone shows as the end of the socket: the matches in flight are
abandoned (a resume plays them again) and every bot process is stopped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import signal
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from types import FrameType

from referee import log_config as arena_logging
from referee.owner_only import keep_state_private
from tournaments.match_jobs import JobHost, JobHostSpec, Played


class Link:
    """The parent's end, written from this process's main thread and its host's loop."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.lock = threading.Lock()

    def send(self, message: tuple[object, ...]) -> None:
        # OSError: the parent is gone, and this process is stopping anyway.
        with self.lock, contextlib.suppress(OSError):
            self.connection.send(message)

    def bot(self, pid: int, alive: bool) -> None:
        self.send(("bot", pid, alive))

    def outcome(self, match_id: str, future: concurrent.futures.Future[Played]) -> None:
        if future.cancelled():
            self.send(("failed", match_id, "abandoned: its referee process was stopped"))
        elif (error := future.exception()) is not None:
            self.send(("failed", match_id, repr(error)))
        else:
            self.send(("played", match_id, future.result()))


def own_folder(spec: JobHostSpec, number: int) -> JobHostSpec:
    """Each referee process keeps its bots' logs, and its own, in a folder of its own under the
    tournament's logs: two processes both start a `random-1`."""
    if spec.logs is None:
        return spec
    return dataclasses.replace(spec, logs=str(Path(spec.logs) / f"referee-{number}"))


def serve(connection: Connection, host: JobHost, link: Link) -> None:
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if message[0] == "stop":
            return
        if message[0] == "drop":  # each busy process stops when its match ends: not waited for
            asyncio.run_coroutine_threadsafe(host.host.drop_pool(message[1]), host.loop)
            continue
        job = message[1]
        future = host.submit(job)
        future.add_done_callback(functools.partial(link.outcome, job.match_id))


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # through serve's finally: the bots are stopped too


def main() -> int:
    keep_state_private()  # its logs and its bots' logs and replays: started by hand too
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)
    connection = Connection(int(sys.argv[1]))
    spec, number = connection.recv()
    spec = own_folder(spec, number)
    log_file = Path(spec.logs) / "referee.log" if spec.logs else None
    arena_logging.configure("warning" if log_file is None else "info", log_file)
    link = Link(connection)
    try:
        host = JobHost(spec, on_process=link.bot)
    except Exception as exc:  # cannot listen, a bad sandbox: the parent says so and stops
        link.send(("error", f"{type(exc).__name__}: {exc}"))
        return 1
    link.send(("ready", host.host.address))  # where its bots connect
    try:
        serve(connection, host, link)
    finally:
        host.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
