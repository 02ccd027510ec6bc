"""A tournament's or a ladder's matches on the referee's host (referee/hosting/venue.py): a
MatchJob becomes the host's Fixture, its deal keyed by the tournament's secret or its book of
deals, and the match the host played becomes the tournament's MatchRecord."""

from __future__ import annotations

import concurrent.futures
import hashlib
from dataclasses import dataclass, field

from referee.hosting.bot_pool import ProcessWatch
from referee.hosting.venue import Fixture, Hosted, HostSpec, MatchHost, ThreadedHost, Tls
from referee.matches.match import MatchOutcome
from tournaments.deal_book import deal_key
from tournaments.records import MatchRecord
from tournaments.schedule import MatchJob


@dataclass(frozen=True)
class JobHostSpec(HostSpec):
    """A host's spec with what turns a job's deal name into its key; travels with it."""

    # The tournament's secret: every deal's key derives from it (arena_games.deals). Kept out of
    # repr, so that logging a spec never shows it.
    deal_secret: bytes = field(default=b"", repr=False)
    # The book of deals, when the tournament has one (tournaments/deal_book.py): hex keys.
    deal_book: tuple[str, ...] = field(default=(), repr=False)

    def key(self) -> str:
        """Equal only for equal specs: a worker shares a host between tournaments only when
        everything (options, clocks, sandbox, secret too) is the same."""
        book = "\n".join(self.deal_book).encode()
        return repr(self) + hashlib.sha256(self.deal_secret + book).hexdigest()

    def fixture(self, job: MatchJob) -> Fixture:
        key = deal_key(self.deal_secret, self.deal_book, job.deal)
        return Fixture(job.match_id, job.deal, key, job.bots, job.specs, job.content_hashes)


@dataclass(frozen=True)
class Played:
    record: MatchRecord
    worker: str
    seconds: float
    # Bot name -> why it was absent from this match, for the referee's console (paths and all).
    absent: dict[str, str] = field(default_factory=dict)

    def log_fields(self) -> dict[str, object]:
        """What a runner logs of a finished match."""
        record = self.record
        return {
            "match_id": record.match_id,
            "bots": record.bots,
            "ranks": record.ranks,
            "reason": record.reason,
            "forfeits": record.forfeits,
            "replay": record.replay,
            "worker": self.worker,
            "seconds": round(self.seconds, 3),
        }


def record_of(job: MatchJob, outcome: MatchOutcome) -> MatchRecord:
    result = outcome.result
    return MatchRecord(
        match_id=job.match_id,
        deal=job.deal,
        bots=job.bots,
        ranks=tuple(result.ranks),
        scores=tuple(result.scores),
        reason=result.reason,
        forfeits=tuple((f.seat, f.cause.value, f.detail) for f in outcome.forfeits),
        replay=str(outcome.replay_path) if outcome.replay_path else None,
        decisions=outcome.decisions,
        substituted=outcome.substituted(),
        times=tuple(outcome.seat_times()),
    )


class JobHost(ThreadedHost):
    """A ThreadedHost that plays MatchJobs: what the executors and the ladder submit to."""

    def __init__(
        self,
        spec: JobHostSpec,
        listen: str = "127.0.0.1:0",
        on_process: ProcessWatch | None = None,
        tls: Tls | None = None,
        opening: bool = False,
    ) -> None:
        self.spec = spec
        super().__init__(spec, listen, on_process, tls, opening)

    def submit(self, job: MatchJob) -> concurrent.futures.Future[Played]:
        return self.run(lambda host: self._play(host, job))

    async def _play(self, host: MatchHost, job: MatchJob) -> Played:
        hosted: Hosted = await host.play(self.spec.fixture(job))
        return Played(record_of(job, hosted.outcome), hosted.worker, hosted.seconds, hosted.absent)
