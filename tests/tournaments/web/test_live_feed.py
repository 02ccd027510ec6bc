"""The live updates' watcher on a real tournament database: however many pages listen, the
tables are read only when another connection has committed, every page is told, and the watcher
stops when the last page leaves."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from pathlib import Path

from tournaments.read_models.tournament_models import Progress
from tournaments.read_models.tournament_reads import TournamentFolder
from tournaments.store import Store
from tournaments.web.live import Feed


class CountingFolder(TournamentFolder):
    """Counts how often the watcher reads the tables."""

    reads = 0

    def progress(self) -> Progress:
        self.reads += 1
        return super().progress()


def test_the_tables_are_read_once_per_change_for_every_page(
    tournament: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(tournament, folder)
    watched = CountingFolder(folder)
    feed = Feed(watched, max_clients=8, interval_s=0.01)

    async def main() -> list[list[Progress]]:
        seen: list[list[Progress]] = []
        async with contextlib.AsyncExitStack() as stack:
            queues = [await stack.enter_async_context(feed.listen(f"page{i}")) for i in range(5)]
            seen.append([await q.get() for q in queues])
            await asyncio.sleep(0.3)  # some thirty looks at a database nobody changes
            assert watched.reads == 1
            writer = Store.open(folder)
            writer.set_state("interrupted")
            writer.close()
            seen.append([await q.get() for q in queues])
            assert feed.listening == 5
        assert feed.listening == 0 and feed._task is None  # nothing runs for no page
        return seen

    before, after = asyncio.run(main())
    assert {p.state for p in before} == {"finished"} and len(before) == 5
    assert {p.state for p in after} == {"interrupted"} and len(after) == 5
    assert watched.reads == 2
