"""The Dask executor: each match goes to a worker of a Dask cluster (a LocalCluster, or a
scheduler's address for a real cluster). Each worker keeps one host, with its own referee server
and bot pools, for as long as it lives. Every match names its deal, whose key derives from the
spec's secret, so a match that Dask re-runs after losing a worker is the same match. The secret
travels to the workers with the spec: a cluster's workers are the organiser's machines. Replays
are written on the worker: on a real cluster the output folder must be on a filesystem every
worker shares.
"""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

from distributed import Client, LocalCluster
from distributed.diagnostics.plugin import WorkerPlugin

from referee.owner_only import keep_state_private
from tournaments.match_jobs import JobHost, JobHostSpec, Played
from tournaments.schedule import MatchJob

# One host per worker process and JobHostSpec, made on the first match that needs it.
_worker_hosts: dict[str, JobHost] = {}
_worker_lock = threading.Lock()


def play_on_worker(spec: JobHostSpec, job: MatchJob) -> Played:
    # A worker of a real cluster was started by dask-worker, not by `arena`: the replays and
    # logs it writes are kept private all the same.
    keep_state_private()
    with _worker_lock:
        host = _worker_hosts.get(spec.key())
        if host is None:
            host = _worker_hosts[spec.key()] = JobHost(spec)
    return host.submit(job).result()


def drop_on_worker(spec_key: str, bot: str) -> None:
    """Stop the bot's processes in this worker's host, if it has one."""
    with _worker_lock:
        host = _worker_hosts.get(spec_key)
    if host is not None:
        host.drop_bot(bot)


def close_worker_hosts() -> None:
    with _worker_lock:
        hosts = list(_worker_hosts.values())
        _worker_hosts.clear()
    for host in hosts:
        host.close()


class DaskExecutor:
    def __init__(
        self,
        spec: JobHostSpec,
        address: str | None = None,
        workers: int = 2,
        threads_per_worker: int = 2,
    ) -> None:
        self.spec = spec
        self.cluster: Any = None
        if address is None:
            self.cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=workers,
                threads_per_worker=threads_per_worker,
                processes=True,
                dashboard_address=None,
                silence_logs=40,
            )
            address = self.cluster.scheduler_address
        self.client: Any = Client(address, set_as_default=False)  # type: ignore[no-untyped-call]
        self.client.register_plugin(_HostTeardown(), name="arena-host-teardown")
        # Dask forgets a result whose future is dropped: hold each until it is handed over.
        self._held: dict[int, Any] = {}
        self._lock = threading.Lock()

    def submit(self, job: MatchJob) -> concurrent.futures.Future[Played]:
        result: concurrent.futures.Future[Played] = concurrent.futures.Future()
        remote = self.client.submit(
            play_on_worker, self.spec, job, key=f"match-{job.match_id}", pure=False
        )
        with self._lock:
            self._held[id(result)] = remote

        def hand_over(done: Any) -> None:
            with self._lock:
                self._held.pop(id(result), None)
            try:
                result.set_result(done.result())
            except BaseException as exc:
                result.set_exception(exc)

        remote.add_done_callback(hand_over)
        return result

    def drop_bot(self, key: str) -> None:
        """On every worker: a paused or retired bot keeps no process on the cluster."""
        self.client.run(drop_on_worker, self.spec.key(), key)

    def close(self) -> None:
        try:
            self.client.run(close_worker_hosts)
        finally:
            self.client.close()
            if self.cluster is not None:
                self.cluster.close()


class _HostTeardown(WorkerPlugin):
    """Stops a worker's bot processes when the worker itself shuts down."""

    def teardown(self, worker: object) -> None:
        close_worker_hosts()
