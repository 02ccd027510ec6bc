"""Writing replays: never over a file that is there (an earlier run's replay is kept), and a
replay that cannot be written is a ReplayWriteError naming the file and why, leaving no part of
itself behind."""

from __future__ import annotations

import resource
import signal
from pathlib import Path

import pytest
from arena_games import replay_file as replay

RESULT = replay.ResultRecord(ranks=[0, 1], scores=[1.0, 0.0], reason="test")


def records(reason: str, lines: int = 1) -> list[replay.ResultRecord]:
    return [RESULT.model_copy(update={"reason": reason})] * lines


def test_a_replay_never_replaces_a_file_that_is_there(tmp_path: Path) -> None:
    path = tmp_path / "m-0000.jsonl"
    first = replay.write(path, records("first"))
    second = replay.write(path, records("second"))
    third = replay.write(path, records("third"))
    assert first == path
    assert (second.name, third.name) == ("m-0000.2.jsonl", "m-0000.3.jsonl")
    for written, reason in ((first, "first"), (second, "second"), (third, "third")):
        assert f'"reason":"{reason}"' in written.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "m-0000.2.jsonl",
        "m-0000.3.jsonl",
        "m-0000.jsonl",
    ]


def test_a_folder_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "replays").write_text("a file where the folder should be")
    with pytest.raises(replay.ReplayWriteError, match=r"cannot write .*replays/m\.jsonl: "):
        replay.write(tmp_path / "replays" / "m.jsonl", records("x"))


def test_a_disk_that_fills_up_mid_write_leaves_nothing_behind(tmp_path: Path) -> None:
    # A file-size limit fails writes past it with EFBIG, as a full disk fails them with ENOSPC.
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, limits[1]))
    try:
        with pytest.raises(replay.ReplayWriteError, match="File too large"):
            replay.write(tmp_path / "m.jsonl", records("x", lines=200))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, previous)
    assert list(tmp_path.iterdir()) == []
