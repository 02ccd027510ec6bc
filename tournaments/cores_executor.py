"""The cores executor: matches spread over N referee processes on this machine, one per core by
default, each with its own gRPC server, socket and bot pools (tournaments/core_worker.py, the
host a Dask worker keeps), results handed back to the runner, which commits them as it does
any other executor's.

A bot process lives in one referee process, whose pool never gives it two seatings of one
deal. A referee process that dies (killed, crashed) has its bot processes ended, a fresh
process takes its place, and its matches in flight are played again on the others: each names
its deal, so the replay is the same match. A match whose second referee process dies too fails
with WorkerLost, and a resume plays it again. close() stops every referee process, which stop
their bots; the ones that do not stop in time are killed, with their bots.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path

import structlog

from referee.bots.sandbox import describe_exit
from tournaments.match_jobs import JobHostSpec, Played
from tournaments.schedule import MatchJob

log = structlog.get_logger("tournaments.cores")
START_TIMEOUT_S = 60.0  # a referee process imports grpc and the games, then starts its server
STOP_TIMEOUT_S = 60.0  # it abandons its matches and stops its bots (JobHost.close: 30 s)
PLAYS_PER_MATCH = 2  # a match is played again once when its referee process dies


class WorkerLost(RuntimeError):
    """A referee process ended while a match was in its hands, and the match was not retried."""


class ExecutorError(RuntimeError):
    """The referee processes could not be started."""


def cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    return len(os.sched_getaffinity(0))


@dataclass(eq=False)
class RefereeProcess:
    number: int  # its folder under the tournament's logs is referee-NUMBER
    popen: subprocess.Popen[bytes]
    connection: Connection
    jobs: dict[str, tuple[MatchJob, concurrent.futures.Future[Played]]] = field(
        default_factory=dict
    )
    bots: set[int] = field(default_factory=set)  # pids of its live bot processes
    ready: bool = False
    bot_address: str = ""  # the ARENA_ADDRESS its bots are started with

    def end(self) -> int:
        """Kill it if it does not end on its own, and every bot process it reported; its exit
        code."""
        try:
            code = self.popen.wait(5)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            code = self.popen.wait()
        # Each bot leads its own process group (launcher.start_bot). One started just before
        # its referee process died was never reported: its environment names the address.
        for pid in self.bots | started_for(self.bot_address):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        self.bots.clear()
        self.connection.close()
        return code


def started_for(address: str) -> set[int]:
    """The processes started with ARENA_ADDRESS=address that lead their process group: the
    bots (or their sandboxes) a referee process started to connect there."""
    if not address:
        return set()
    wanted = f"ARENA_ADDRESS={address}".encode()
    found = set()
    for environ in Path("/proc").glob("[0-9]*/environ"):
        pid = int(environ.parent.name)
        try:
            if wanted in environ.read_bytes().split(b"\0") and os.getpgid(pid) == pid:
                found.add(pid)
        except OSError:  # ended meanwhile, or not ours to read
            continue
    return found


class CoresExecutor:
    def __init__(self, spec: JobHostSpec, processes: int | None = None) -> None:
        self.spec = spec
        self.lock = threading.Lock()
        self.closing = False
        self.serial = 0  # referee processes started, the replacements included
        self.plays: dict[str, int] = {}  # match id -> referee processes it was handed to
        self.referees: list[RefereeProcess] = []
        try:
            for _ in range(processes or cores()):
                self.referees.append(self._spawn())
            for referee in self.referees:
                self._await_ready(referee)
        except BaseException:
            for referee in self.referees:
                referee.end()
            raise
        self.collector = threading.Thread(target=self._collect, name="arena-cores", daemon=True)
        self.collector.start()
        log.info("referees_started", processes=len(self.referees))

    # --- the runner's side ------------------------------------------------------------------

    def submit(self, job: MatchJob) -> concurrent.futures.Future[Played]:
        future: concurrent.futures.Future[Played] = concurrent.futures.Future()
        with self.lock:
            if self.closing:
                raise RuntimeError("the cores executor is closed")
            lost = self._hand(job, future)
        if lost is not None:
            future.set_exception(lost)
        return future

    def drop_bot(self, name: str) -> None:
        """Stop a bot's processes in every referee process (a live ladder's bot that no longer
        plays), each busy one when its match ends."""
        with self.lock:
            for referee in self.referees:
                with contextlib.suppress(OSError):
                    referee.connection.send(("drop", name))

    def close(self) -> None:
        with self.lock:
            self.closing = True
            referees = list(self.referees)
        for referee in referees:
            with contextlib.suppress(OSError):
                referee.connection.send(("stop",))
        self.collector.join(STOP_TIMEOUT_S)
        if self.collector.is_alive():  # a referee process that does not stop: killed
            with self.lock:
                stuck = list(self.referees)
            for referee in stuck:
                log.error("referee_killed", number=referee.number, why="did not stop in time")
                with contextlib.suppress(ProcessLookupError):
                    referee.popen.kill()
            self.collector.join(STOP_TIMEOUT_S)

    # --- referee processes ------------------------------------------------------------------

    def _spawn(self) -> RefereeProcess:
        number, self.serial = self.serial, self.serial + 1
        ours, theirs = socket.socketpair()
        with ours, theirs:
            popen = subprocess.Popen(
                [sys.executable, "-m", "tournaments.core_worker", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
            connection = Connection(ours.detach())
        referee = RefereeProcess(number, popen, connection)
        with contextlib.suppress(OSError):  # it died at once: its end of the socket says so
            connection.send((self.spec, number))
        return referee

    def _await_ready(self, referee: RefereeProcess) -> None:
        if not referee.connection.poll(START_TIMEOUT_S):
            raise ExecutorError(f"referee process {referee.number} did not start in time")
        try:
            message = referee.connection.recv()
        except (EOFError, OSError):
            code = referee.popen.wait()
            raise ExecutorError(
                f"referee process {referee.number} {describe_exit(code, None)} as it started"
            ) from None
        if message[0] != "ready":
            raise ExecutorError(f"referee process {referee.number} could not start: {message[1]}")
        referee.ready, referee.bot_address = True, str(message[1])

    def _collect(self) -> None:
        """Hands each result to its future and replaces a referee process that dies, until the
        executor is closed and every referee process has ended."""
        while True:
            with self.lock:
                by_connection = {r.connection: r for r in self.referees}
            if not by_connection:
                return
            for connection in wait(list(by_connection)):
                referee = by_connection[connection]  # type: ignore[index]
                try:
                    message = referee.connection.recv()
                except (EOFError, OSError):
                    self._lost(referee)
                    continue
                except Exception as exc:  # unreadable: ended, and its matches played elsewhere
                    log.error("referee_unreadable", number=referee.number, error=repr(exc))
                    referee.popen.kill()
                    self._lost(referee)
                    continue
                self._take(referee, message)

    def _take(self, referee: RefereeProcess, message: tuple[object, ...]) -> None:
        kind = message[0]
        if kind == "bot":
            pid, alive = message[1], message[2]
            assert isinstance(pid, int)
            (referee.bots.add if alive else referee.bots.discard)(pid)
        elif kind == "ready":
            referee.ready, referee.bot_address = True, str(message[1])
        elif kind == "error":
            log.error("referee_not_started", number=referee.number, error=message[1])
        elif kind in ("played", "failed"):
            with self.lock:
                self.plays.pop(str(message[1]), None)
                entry = referee.jobs.pop(str(message[1]), None)
            if entry is None:  # not one of its matches: nobody waits for it
                return
            future = entry[1]
            if kind == "played":
                future.set_result(message[2])  # type: ignore[arg-type]
            else:
                future.set_exception(
                    RuntimeError(f"referee process {referee.number}: {message[2]}")
                )

    def _lost(self, referee: RefereeProcess) -> None:
        """A referee process ended: its bots too; a fresh one in its place unless closing, and
        its matches in flight handed to the others, or failed when already played twice."""
        code = referee.end()
        failed: list[tuple[concurrent.futures.Future[Played], WorkerLost]] = []
        with self.lock:
            self.referees.remove(referee)
            orphans = list(referee.jobs.values())
            if not self.closing and referee.ready:
                self.referees.append(self._spawn())
            if orphans and not self.closing:
                log.error(
                    "referee_lost",
                    number=referee.number,
                    how=describe_exit(code, None),
                    matches=[job.match_id for job, _ in orphans],
                )
            for job, future in orphans:
                why = f"its referee process {referee.number} {describe_exit(code, None)}"
                if self.closing or self.plays.get(job.match_id, 0) >= PLAYS_PER_MATCH:
                    failed.append((future, WorkerLost(f"match {job.match_id}: {why}")))
                elif (lost := self._hand(job, future)) is not None:
                    failed.append((future, lost))
        for future, error in failed:
            future.set_exception(error)

    def _hand(self, job: MatchJob, future: concurrent.futures.Future[Played]) -> WorkerLost | None:
        """Send the job to the referee process with the fewest matches (the lock held); the
        error to fail it with when none is left."""
        if not self.referees:
            return WorkerLost(f"match {job.match_id}: no referee process is left")
        referee = min(self.referees, key=lambda r: len(r.jobs))
        referee.jobs[job.match_id] = (job, future)
        self.plays[job.match_id] = self.plays.get(job.match_id, 0) + 1
        with contextlib.suppress(OSError):  # it died: its end of the socket says so soon
            referee.connection.send(("play", job))
        return None
