"""Tests referee.matches.match over the wire: a forced decision is a decision.

Every game: forced decisions are still asked, over the wire, of real bot processes."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from pathlib import Path

import pytest
from arena_games import get_game
from arena_games import replay_file as replay
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings
from pydantic import BaseModel

from referee.hosting.series import SeriesPlan, run_series
from tests.e2e.conftest import rawbot

# Orc Pit Fighting: about two decisions in five have a single legal action (a forced pass,
# a lone card to play), so one short match has many of them.
GAME = get_game("orc-pit-fighting")


def _legal_counts_per_seat(records: list[BaseModel]) -> dict[int, list[int]]:
    """Replay the match in-process: the number of legal actions of every decision, per seat,
    in order. A round of several movers is counted before any of its answers is applied, as
    the match runner asks them."""
    state = GAME.new_state()
    decisions = [r for r in records if isinstance(r, replay.DecisionRecord)]
    counts: dict[int, list[int]] = defaultdict(list)
    for record in records:
        if isinstance(record, replay.ChanceRecord):
            state.apply_chance(record.outcome)
        elif isinstance(record, replay.DecisionRecord) and record is decisions[0]:
            movers = state.to_move()
            for seat in movers:
                counts[seat].append(len(state.legal_actions(seat)))
            for answer in decisions[: len(movers)]:
                state.apply(answer.seat, answer.action)
            del decisions[: len(movers)]
    assert state.is_over() and not decisions
    return counts


def _asked_per_seat(record_dir: Path) -> dict[int, list[int]]:
    """The legal-action count of every request each bot process received, in order."""
    asked: dict[int, list[int]] = defaultdict(list)
    for path in sorted(record_dir.glob("*.jsonl")):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for line in sorted(lines, key=lambda entry: entry["decision_id"]):
            asked[line["seat"]].append(line["legal"])
    return asked


@pytest.mark.timeout(120)
def test_forced_decisions_are_still_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Forced decisions are still asked. A decision with a single legal action goes to the bot
    like any other: answering for it at once would tell the other seats, through timing, what
    that seat could not do.

    Two raw-wire bot processes record every request they receive; the referee's own replay,
    played again in-process, says how many legal actions each decision had. The bots must have
    been asked every decision, the single-answer ones included, in the same order."""
    records = tmp_path / "records"
    records.mkdir()
    monkeypatch.setenv("ARENA_RECORD_DIR", str(records))
    bot = rawbot("count")
    plan = SeriesPlan(
        GAME,
        [bot, bot],
        1,
        secret=practice_secret(17),
        replays=tmp_path / "replays",
        settings=MatchSettings(decision_ms=5000),
    )
    [(outcome, _)] = asyncio.run(run_series(plan))
    assert not outcome.forfeits, outcome.forfeits
    expected = _legal_counts_per_seat(outcome.records)
    asked = _asked_per_seat(records)
    assert asked == expected
    forced = sum(count == 1 for seat in asked for count in asked[seat])
    assert forced >= 5, f"only {forced} single-answer decisions: pick a deal with more"
