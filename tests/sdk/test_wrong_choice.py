"""An act() that returns no legal choice reaches the referee as what it is: an illegal action
with the index it chose (the SDK sends it on, and says in the bot's log what act() returned),
not a crash of a bot that exited. Real bot processes over gRPC."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from arena_games import get_game
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings

from referee.bots.launcher import parse_spec
from referee.hosting.series import SeriesPlan, run_series

BOT = Path(__file__).resolve().parent.parent / "bots" / "wrong_index_bot.py"


def first_forfeit(mode: str, replays: Path) -> tuple[str, str, str]:
    """The cause and detail of the wrong bot's forfeit in one match, and its output."""
    bots = [parse_spec(f"cmd:{sys.executable} {BOT} {mode}"), parse_spec("example:random")]
    plan = SeriesPlan(
        get_game("opposing-force"),
        bots,
        1,
        secret=practice_secret(3),
        settings=MatchSettings(decision_ms=10_000, time_bank_ms=10_000),
        replays=replays,
    )
    [(outcome, _lineup)] = asyncio.run(run_series(plan))
    [forfeit] = outcome.forfeits
    assert forfeit.seat == 0
    log = "".join(p.read_text() for p in sorted((replays / "logs").rglob("*.log")))
    return forfeit.cause.value, forfeit.detail, log


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("mode", "itself", "said"),
    [
        ("past", True, "outside 0.."),
        ("negative", False, "act() returned index -1"),
        ("text", False, "act() returned 'the second one', not an index"),
    ],
    ids=["past", "negative", "text"],
)
def test_a_choice_that_is_not_legal_is_an_illegal_action_with_its_index(
    tmp_path: Path, mode: str, itself: bool, said: str
) -> None:
    cause, detail, log = first_forfeit(mode, tmp_path)
    assert cause == "illegal_action", (cause, detail, log)
    sent = int(detail.split("index ")[1].split(" ")[0])
    legal = int(detail.split(" of ")[1].split(" ")[0])
    # The index itself when the wire can carry it; else the first past the legal list.
    assert sent == (legal + 7 if itself else legal), detail
    assert said in log and f"sent as index {sent}" in log, log


@pytest.mark.timeout(120)
def test_control_an_act_that_raises_is_a_crash(tmp_path: Path) -> None:
    """The control: the bot's own exception (as the SDK's was, for a wrong index) ends the bot,
    and the referee can only record a crash."""
    cause, detail, log = first_forfeit("raise", tmp_path)
    assert cause == "crash", (cause, detail)
    assert "outside 0.." in log
