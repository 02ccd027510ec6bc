"""A bot's output, kept per match and capped: real tournaments of real bot processes whose
output comes through a pipe (referee/bots/output.py). A process that plays several matches
has each match's output in that match's file; a bot that writes far more than the caps keeps
its cap and a note of what was dropped, and is never blocked for it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee.bots.output import BotOutput
from tournaments.config import TournamentConfig, parse_config
from tournaments.run_progress import NoProgress
from tournaments.runner import RunSummary, run_tournament
from tournaments.store import Store

CHATTY = Path(__file__).resolve().parent.parent / "bots" / "chatty_bot.py"
MARKER = "CHATTY-7f3a"
KIB, MIB = 1024, 1024 * 1024


def config(games: int, **bot_output: int) -> TournamentConfig:
    return parse_config(
        {
            "name": "output",
            "game": "opposing-force",
            "seed": 5,
            "bots": [{"spec": str(CHATTY), "name": "chatty"}, {"spec": "example:first"}],
            "format": {"kind": "round-robin", "games_per_pairing": games},
            "time_control": {"decision_ms": 5000},
            "bot_output": bot_output,
            "run": {"concurrency": 1},
        }
    )


def play(folder: Path, cfg: TournamentConfig) -> RunSummary:
    store = Store.create(folder, cfg)
    try:
        quiet = NoProgress()
        summary = run_tournament(folder, store, quiet)
    finally:
        store.close()
    assert summary.state == "finished" and not summary.failed
    for record in summary.ledger.records():
        assert not record.forfeits, record  # a bot writing a lot is never blocked for it
    return summary


def match_logs(folder: Path, summary: RunSummary) -> dict[str, Path]:
    """Match id -> the chatty bot's log of that match."""
    found = {}
    for record in summary.ledger.records():
        seat = record.bots.index("chatty")
        found[record.match_id] = folder / "logs" / record.match_id / f"{seat}-chatty.log"
    return found


def matches_named(text: str) -> set[str]:
    return set(re.findall(rf"{MARKER} (\S+) (?:begins|hand:)", text))


@pytest.mark.timeout(180)
@pytest.mark.parametrize("split", [True, False], ids=["per-match", "control-one-file"])
def test_a_process_that_plays_two_matches_has_each_matchs_output_in_that_matchs_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, split: bool
) -> None:
    if not split:  # the guard off: the output stays in the process's own file
        monkeypatch.setattr(BotOutput, "playing", lambda self, path: None)
    summary = play(tmp_path, config(4))
    own = sorted((tmp_path / "logs").glob("chatty-*.log"))
    # 2 deals, each in both seatings: 2 processes, each playing one seating of each deal.
    assert len(own) == 2
    if not split:
        assert all(len(matches_named(p.read_text())) == 2 for p in own)  # both, mixed
        return
    for match_id, path in match_logs(tmp_path, summary).items():
        text = path.read_text()
        assert matches_named(text) == {match_id}, path
        assert f"{MARKER} {match_id} hand:" in text
    for path in own:  # what it wrote outside its matches: its start, and how it ended
        text = path.read_text()
        assert f"{MARKER} starting" in text and "[arena] the bot's process" in text
        assert matches_named(text) == set()


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("caps", "flood", "cut"),
    [
        ({"per_match_kib": 64}, 4 * MIB, "match"),
        ({"per_match_kib": 8 * 1024, "per_bot_mib": 5}, 4 * MIB, "bot"),
        ({"per_match_kib": 8 * 1024}, 4 * MIB, None),  # the control: room for it all
    ],
    ids=["match-cap", "bot-cap", "control-large-cap"],
)
def test_a_bot_writing_far_more_than_its_caps_keeps_its_cap_and_a_note(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caps: dict[str, int],
    flood: int,
    cut: str | None,
) -> None:
    monkeypatch.setenv("ARENA_CHATTY_BYTES", str(flood))
    summary = play(tmp_path, config(2, **caps))
    logs = list(match_logs(tmp_path, summary).items())
    sizes = [path.stat().st_size for _, path in logs]
    texts = [path.read_text() for _, path in logs]
    if cut is None:
        for (match_id, _), text, size in zip(logs, texts, sizes, strict=True):
            assert size > flood and f"{match_id} flooded {flood} bytes" in text
            assert "dropped" not in text
        return
    if cut == "match":
        for (match_id, _), text, size in zip(logs, texts, sizes, strict=True):
            assert 64 * KIB < size < 64 * KIB + 1024  # the cap, and the two notes
            assert text.count("[arena] output past 64 KiB here is dropped") == 1
            dropped = int(re.findall(r"\[arena\] (\d+) bytes of output were dropped here", text)[0])
            assert dropped > flood - 64 * KIB
            assert f"{match_id} flooded" not in text
        return
    # The bot's cap: 5 MiB for both matches; the first keeps its 4 MiB, the second the rest.
    first, second = sorted(zip(logs, texts, sizes, strict=True), key=lambda found: found[0][0])
    assert first[2] > flood and "dropped" not in first[1]
    assert second[2] < 5 * MIB - flood + 1024
    assert second[1].count("[arena] the bot has written its 5 MiB") == 1
    assert re.search(r"\[arena\] \d+ bytes of output were dropped here", second[1])
