"""Where matches run, behind one small interface: `submit(job) -> future`.

The local executor hosts every match in this process; the Dask one (tournaments/dask_executor.py)
on the workers of a Dask cluster.
"""

from __future__ import annotations

import concurrent.futures
from typing import Protocol

from tournaments.host import HostSpec, Played, ThreadedHost
from tournaments.schedule import MatchJob


class Executor(Protocol):
    def submit(self, job: MatchJob) -> concurrent.futures.Future[Played]: ...

    def drop_bot(self, key: str) -> None:
        """Stop the processes the executor keeps of a bot (a live ladder's bot paused, retired
        or updated); a later match of it starts fresh ones."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    def __init__(self, spec: HostSpec) -> None:
        self.host = ThreadedHost(spec)

    def submit(self, job: MatchJob) -> concurrent.futures.Future[Played]:
        return self.host.submit(job)

    def drop_bot(self, key: str) -> None:
        self.host.drop_bot(key)

    def close(self) -> None:
        self.host.close()


def executor_for(
    spec: HostSpec, kind: str, concurrency: int, address: str | None, workers: int
) -> Executor:
    if kind == "dask":
        from tournaments.dask_executor import DaskExecutor  # dask loads only when asked for

        per_worker = max(1, -(-concurrency // workers))
        return DaskExecutor(spec, address, workers, per_worker)
    return LocalExecutor(spec)
