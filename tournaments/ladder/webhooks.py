"""Serve's delivery of the ladder's events (ladder/notices.py queued them in `deliveries`): a
thread of its own with its own database connection, so a slow or dead receiver never stalls a
match.

Each due delivery is POSTed as its stored body, byte for byte, with the headers

    Content-Type: application/json
    X-Arena-Event: version live          (notices.EVENTS)
    X-Arena-Delivery: 42                 the same on every attempt: a receiver drops a repeat
    X-Arena-Signature: sha256=HEX        HMAC-SHA256 of the body, keyed with the hook's secret

A 2xx answer is delivered; anything else (another status, a redirect, which is never followed,
a timeout, a refused connection, an author's host now resolving to a private address) is tried
again after [webhooks] backoff_s, doubled each time up to backoff_max_s, until give_up_after_s
from the event: then `gave-up`. Delivery is at least once: an answer lost on its way back means
the event comes again. A receiver's answer is never read beyond its status, and only the status
(or the error's kind) is kept. An owner's queue holds queue_per_owner deliveries at most: the
oldest beyond are given up.

Owners are served apart, WORKERS at once, each owner's deliveries in order and one owner's at a
time: a receiver that holds every connection to its timeout delays its own owner's events, not
another's (unless WORKERS such receivers are set at once)."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import socket
import ssl
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import structlog

from tournaments.ladder.config_file import Webhooks
from tournaments.ladder.database import LadderStore
from tournaments.ladder.hook_urls import HookRefused, Target, target
from tournaments.ladder.notices import OPERATOR

log = structlog.get_logger("tournaments.ladder.webhooks")
POLL_S = 0.5
BATCH = 200  # due deliveries read in one round
WORKERS = 4  # owners delivered to at once


def signature(secret: str, body: bytes) -> str:
    """The X-Arena-Signature header's value: what a receiver recomputes and compares."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def stamp(moment: datetime) -> str:
    # Microseconds: a backoff under a second must order after the second it began in.
    return moment.isoformat(timespec="microseconds")


@dataclass(frozen=True)
class Due:
    id: int
    owner: str
    event: str
    body: str
    attempts: int
    made_at: str
    url: str
    secret: str


def post(where: Target, body: bytes, headers: dict[str, str], timeout_s: float) -> int:
    """POST body to the target's path at one of its checked addresses (never a fresh lookup's:
    DNS may answer otherwise the second time); the answer's status. OSError on no answer."""
    last: OSError = OSError("no address")
    for address in where.addresses:
        try:
            sock = socket.create_connection((address, where.port), timeout_s)
            break
        except OSError as exc:
            last = exc
    else:
        raise last
    connection = http.client.HTTPConnection(where.host, where.port, timeout=timeout_s)
    try:
        if where.scheme == "https":
            context = ssl.create_default_context()
            sock = context.wrap_socket(sock, server_hostname=where.host)
        connection.sock = sock  # connected already: http.client sends on it as it is
        connection.request("POST", where.path, body, headers)
        answer = connection.getresponse()
        return int(answer.status)  # its body is never read: nothing of it is kept or shown
    finally:
        connection.close()


class Courier:
    """The delivery thread: start() it with serve, stop() it when serve stops."""

    def __init__(self, settings: Webhooks, folder: Path, workers: int = WORKERS) -> None:
        self.settings = settings
        self.folder = folder
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="webhooks", daemon=True)
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="webhook")
        self.busy: set[str] = set()  # owners whose deliveries a worker has in hand
        self.lock = threading.Lock()

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout_s: float = 30.0) -> None:
        """Stop; an attempt under way ends within [webhooks] timeout_s (and counts)."""
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(timeout_s)
        self.pool.shutdown(wait=True, cancel_futures=True)

    def _run(self) -> None:
        store = LadderStore.open(self.folder)
        try:
            while not self.stopping.wait(POLL_S):
                try:
                    self.round(store)
                except Exception as exc:  # a full disk, a locked file: next round again
                    log.warning("webhooks_round_failed", error=repr(exc))
        finally:
            store.close()

    def round(self, store: LadderStore, settle: bool = False) -> None:
        """Bound each queue, then hand each owner's due deliveries (oldest first) to a worker,
        unless one has that owner's in hand already; settle: wait for those handed now."""
        self._bound(store)
        by_owner: dict[str, list[Due]] = {}
        for due in self._due(store):
            by_owner.setdefault(due.owner, []).append(due)
        handed: list[Future[None]] = []
        for owner, dues in by_owner.items():
            with self.lock:
                if owner in self.busy:
                    continue
                self.busy.add(owner)
            handed.append(self.pool.submit(self._deliver, owner, dues))
        if settle:
            wait(handed)

    def _deliver(self, owner: str, dues: list[Due]) -> None:
        """The owner's due deliveries in order, until one fails: the rest wait with it."""
        try:
            store = LadderStore.open(self.folder)  # a connection per thread: SQLite's rule
            try:
                for listed in dues:
                    due = _still_due(store, listed)
                    if due is None:
                        continue
                    if self.stopping.is_set() or not self._attempt(store, due):
                        return
            finally:
                store.close()
        except Exception as exc:  # a full disk, a locked file: its next round again
            log.warning("webhooks_delivery_failed", owner=owner, error=repr(exc))
        finally:
            with self.lock:
                self.busy.discard(owner)

    def _bound(self, store: LadderStore) -> None:
        most = self.settings.queue_per_owner
        with store.write() as db:
            over = db.execute(
                "SELECT owner FROM deliveries WHERE state = 'pending' GROUP BY owner "
                "HAVING COUNT(*) > ?",
                (most,),
            ).fetchall()
            for (owner,) in over:
                db.execute(
                    "UPDATE deliveries SET state = 'gave-up', last_outcome = ? WHERE id IN "
                    "(SELECT id FROM deliveries WHERE owner = ? AND state = 'pending' "
                    "ORDER BY id DESC LIMIT -1 OFFSET ?)",
                    (f"dropped: more than {most} waiting", owner, most),
                )

    def _due(self, store: LadderStore) -> list[Due]:
        rows = store.db.execute(
            "SELECT d.id, d.owner, d.event, d.body, d.attempts, d.made_at, w.url, w.secret "
            "FROM deliveries d JOIN webhooks w ON w.owner = d.owner "
            "WHERE d.state = 'pending' AND d.next_at <= ? ORDER BY d.id LIMIT ?",
            (stamp(datetime.now(UTC)), BATCH),
        ).fetchall()
        return [Due(*row) for row in rows]

    def _attempt(self, store: LadderStore, due: Due) -> bool:
        """One try of the delivery, its outcome stored; whether it was delivered."""
        body = due.body.encode()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "arena-ladder-webhooks",
            "X-Arena-Event": due.event,
            "X-Arena-Delivery": str(due.id),
            "X-Arena-Signature": signature(due.secret, body),
        }
        trusted = due.owner == OPERATOR or self.settings.allow_private
        try:
            status = post(target(due.url, trusted), body, headers, self.settings.timeout_s)
            outcome, ok = f"HTTP {status}", 200 <= status < 300
        except HookRefused as exc:
            outcome, ok = exc.kind, False
        except (OSError, http.client.HTTPException) as exc:
            outcome, ok = _kind(exc), False
        self._record(store, due, ok, outcome)
        log.info("webhook_attempt", delivery=due.id, owner=due.owner, outcome=outcome)
        return ok

    def _record(self, store: LadderStore, due: Due, ok: bool, outcome: str) -> None:
        moment = datetime.now(UTC)
        with store.write() as db:
            if ok:
                db.execute(
                    "UPDATE deliveries SET state = 'delivered', attempts = attempts + 1, "
                    "last_outcome = ?, delivered_at = ? WHERE id = ? AND state = 'pending'",
                    (outcome, moment.isoformat(timespec="seconds"), due.id),
                )
                return
            wait = min(self.settings.backoff_s * 2**due.attempts, self.settings.backoff_max_s)
            then = moment + timedelta(seconds=wait)
            made = datetime.fromisoformat(due.made_at)
            over = then - made > timedelta(seconds=self.settings.give_up_after_s)
            db.execute(
                "UPDATE deliveries SET state = ?, attempts = attempts + 1, last_outcome = ?, "
                "next_at = ? WHERE id = ? AND state = 'pending'",
                ("gave-up" if over else "pending", outcome, stamp(then), due.id),
            )
            # The owner's other deliveries wait with it: a dead receiver costs one try a wait.
            db.execute(
                "UPDATE deliveries SET next_at = MAX(next_at, ?) "
                "WHERE owner = ? AND state = 'pending'",
                (stamp(then), due.owner),
            )


def _still_due(store: LadderStore, due: Due) -> Due | None:
    """The delivery as it stands now, if it is still pending and due: a round may have listed
    it just before the worker that had it recorded it (sent twice else)."""
    row = store.db.execute(
        "SELECT attempts FROM deliveries WHERE id = ? AND state = 'pending' AND next_at <= ?",
        (due.id, stamp(datetime.now(UTC))),
    ).fetchone()
    return None if row is None else replace(due, attempts=int(row[0]))


def _kind(exc: BaseException) -> str:
    """An error in short, nothing a receiver wrote in it."""
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timeout"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ssl.SSLError):
        return "TLS error"
    return type(exc).__name__
