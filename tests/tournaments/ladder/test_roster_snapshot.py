"""The roster is read in one snapshot: a bot registered from another connection between serve's
two reads (versions, then bots) cannot make `roster.bots` fail, over a real SQLite file."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tournaments.ladder import roster
from tournaments.ladder.config_file import write_new_ladder
from tournaments.ladder.database import LadderStore


@pytest.fixture
def ladder(tmp_path: Path) -> Path:
    write_new_ladder(tmp_path, "opposing-force", 2, "127.0.0.1:0")
    LadderStore.create(tmp_path).close()
    return tmp_path


def register_between_reads(monkeypatch: pytest.MonkeyPatch, ladder: Path) -> list[str]:
    """After serve's first read (the versions), another connection (as `ladder add` or the web
    would) registers a bot and commits, on its own thread, before the second read."""
    added: list[str] = []
    first_read = roster.versions

    def versions_then_register(
        store: LadderStore, bot: str | None = None
    ) -> list[roster.VersionRow]:
        read = first_read(store, bot)
        name = f"late{len(added)}"

        def register() -> None:
            other = LadderStore.open(ladder)
            try:
                roster.add_bot(other, name, None, remote=True)
            finally:
                other.close()

        writer = threading.Thread(target=register)
        writer.start()
        writer.join(30)
        assert not writer.is_alive()
        added.append(name)
        return read

    monkeypatch.setattr(roster, "versions", versions_then_register)
    return added


def test_a_bot_registered_between_the_reads_is_seen_by_both_or_neither(
    ladder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LadderStore.open(ladder)
    roster.add_bot(store, "first", "example:random")
    added = register_between_reads(monkeypatch, ladder)
    for _ in range(3):
        names = [b.name for b in roster.bots(store)]
        assert "first" in names and all(b in names for b in added[:-1])
        assert added[-1] not in names  # committed after the snapshot: the next read has it
    assert len(roster.remote_tokens(store)) == len(added) - 1


def test_control_the_two_reads_apart_fail_as_serve_did(
    ladder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    @contextlib.contextmanager
    def no_snapshot(self: LadderStore) -> Iterator[object]:
        yield self.db

    monkeypatch.setattr(LadderStore, "snapshot", no_snapshot)
    store = LadderStore.open(ladder)
    roster.add_bot(store, "first", "example:random")
    register_between_reads(monkeypatch, ladder)
    with pytest.raises(KeyError, match="late0"):
        roster.bots(store)


def test_registrations_in_a_loop_from_another_process_never_break_a_read(ladder: Path) -> None:
    """The issue's attack as it happened: `add` in a loop from another process against reads."""
    import subprocess
    import sys

    script = (
        "import sys; from pathlib import Path\n"
        "from tournaments.ladder import roster\n"
        "from tournaments.ladder.database import LadderStore\n"
        "store = LadderStore.open(Path(sys.argv[1]))\n"
        "for i in range(150): roster.add_bot(store, f'loop{i}', None, remote=True)\n"
    )
    writer = subprocess.Popen([sys.executable, "-c", script, str(ladder)])
    store = LadderStore.open(ladder)
    reads = 0
    try:
        while writer.poll() is None:
            roster.bots(store)
            reads += 1
    finally:
        writer.wait(60)
    assert writer.returncode == 0 and reads > 0
    assert len(roster.bots(store)) == 150
