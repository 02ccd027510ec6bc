"""Where matches run, behind one small interface: `submit(job) -> future`.

The local executor hosts every match in this process (one core); the cores one
(tournaments/cores_executor.py) in N referee processes of this machine, one per core by default;
the Dask one (tournaments/dask_executor.py) on the workers of a Dask cluster.
"""

from __future__ import annotations

import concurrent.futures
from typing import Protocol

from tournaments.cores_executor import CoresExecutor
from tournaments.match_jobs import JobHost, JobHostSpec, Played
from tournaments.schedule import MatchJob


class Executor(Protocol):
    def submit(self, job: MatchJob) -> concurrent.futures.Future[Played]: ...

    def drop_bot(self, key: str) -> None:
        """Stop the processes the executor keeps of a bot (a live ladder's bot paused, retired
        or updated); a later match of it starts fresh ones."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    def __init__(self, spec: JobHostSpec) -> None:
        self.host = JobHost(spec)

    def submit(self, job: MatchJob) -> concurrent.futures.Future[Played]:
        return self.host.submit(job)

    def drop_bot(self, key: str) -> None:
        self.host.drop_bot(key)

    def close(self) -> None:
        self.host.close()


class RunChoice(Protocol):
    """The [run] settings that choose an executor, the tournament's and the ladder's alike."""

    @property
    def executor(self) -> str: ...
    @property
    def concurrency(self) -> int: ...
    @property
    def processes(self) -> int | None: ...
    @property
    def dask_address(self) -> str | None: ...
    @property
    def dask_workers(self) -> int: ...


def executor_for(spec: JobHostSpec, run: RunChoice) -> Executor:
    if run.executor == "dask":
        from tournaments.dask_executor import DaskExecutor  # dask loads only when asked for

        per_worker = max(1, -(-run.concurrency // run.dask_workers))
        return DaskExecutor(spec, run.dask_address, run.dask_workers, per_worker)
    if run.executor == "cores":
        return CoresExecutor(spec, run.processes)
    return LocalExecutor(spec)
