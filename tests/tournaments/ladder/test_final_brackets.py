"""Issue 34's end of a contest, for real: a ladder of a three-seat game frozen, its top 8 written
by `arena ladder final --top 8` as a knockout and as a double elimination (8 at tables of three:
byes for the top seeds, and a wide table that sends two on, since every table sending one on
knocks out two and seven must go), each run with `arena tournament run FINAL_DIR`, killed with
SIGKILL mid-bracket, resumed, and played to its champion: every match the plan holds played
once (none repeated, none lost), a tie broken by further deals, the double elimination's grand
final won from the losers' side and its reset. The bots are scripted (tests/tournaments/
bracket_script.py): identical, so a table nobody is told to lose is tied after its deals, each
told where to forfeit. One ladder for both formats; the scheduler's own control (a scheduler
blind to the matches in flight repeats them) is in tests/tournaments/test_knockout.py."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
import structlog
from typer.testing import CliRunner

from tests.tournaments.bracket_script import scripted_bots
from tests.tournaments.test_knockout_resume import played_once, standings, sweep_orphans
from tests.tournaments.test_knockout_runs import ARENA
from tests.tournaments.test_resume import bot_processes, finished, marked, wait_for
from tournaments.cli.arena_app import app
from tournaments.config import load_config
from tournaments.schedule import BracketSchedule

# Seeds b1..b8 (the ladder's order: equal ratings, then the name). Knockout: W1-T3 (3, 6, 7)
# is tied after deal 0 (b3 forfeits, b6 and b7 mirror each other), b7 forfeits deal 1: b6 by
# a tie-break deal; W1-T4 (4, 5, 8) to b8; the wide W2-T2 (2, 6, 8) sends b6 and b8 on; the
# final (b1 resting twice, b6, b8) to b8. The double elimination's winners' side is the same;
# on the losers' side b5, then b2 and b7, then b1 go on, and b1 wins the grand final from the
# losers' side (b8 and b6 forfeit): the reset, which b8 wins.
LOSING = {
    "b1": {"W3-T1": 0, "GF2": 0},
    "b2": {"W2-T2": 0, "L3-T2": 0},
    "b3": {"W1-T3": 0, "L1-T2": 0},
    "b4": {"W1-T4": 0, "L1-T2": 0},
    "b5": {"W1-T4": 0, "L2-T1": 0},
    "b6": {"W3-T1": 0, "GF": 0, "GF2": 0},
    "b7": {"W1-T3": 3, "L3-T2": 0},
    "b8": {"GF": 0},
}
KNOCKOUT = {"W1-T3": 2, "W1-T4": 1, "W2-T2": 1, "W3-T1": 1}  # table -> deals played
DOUBLE = KNOCKOUT | {"L1-T2": 1, "L2-T1": 1, "L3-T2": 1, "GF": 1, "GF2": 1}

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="a ladder's final runs in bwrap"),
]


def arena(*args: str | Path) -> None:
    """An `arena` command run in this process (a fresh interpreter each would cost more than
    the brackets' matches); it must succeed."""
    saved = structlog.get_config()
    try:  # the command configures structlog onto the stderr CliRunner lends, closed after it
        ran = CliRunner().invoke(app, [str(a) for a in args])
    finally:  # put back here too: a module fixture runs outside conftest's restore
        structlog.configure(**saved)
    assert ran.exit_code == 0, ran.output


def matches(deals: dict[str, int]) -> list[str]:
    return sorted(f"{table}-g{game}" for table, count in deals.items() for game in range(3 * count))


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A frozen three-seat ladder of the eight scripted bots."""
    root = tmp_path_factory.mktemp("ladder")
    folder = root / "ladder"
    root.chmod(0o755)  # the bots run as another uid (bubblewrap): they must read their files
    game = ("--game", "capture-the-commander", "--seats", "3", "--listen", "127.0.0.1:0")
    arena("ladder", "init", folder, *game)
    for bot in scripted_bots(root, LOSING):
        arena("ladder", "add", folder, "--name", bot["name"], "--spec", bot["spec"])
    arena("ladder", "freeze", folder)
    return folder


def killed_and_resumed(final: Path, kill_after: int, total: int) -> Path:
    """`arena tournament run FINAL_DIR` killed with SIGKILL once `kill_after` matches have
    finished (fewer than `total`), then `arena tournament resume` to the end; the run folder."""
    folder = final / "run"
    runner = subprocess.Popen(
        [*ARENA, "tournament", "run", str(final), "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=marked(folder, ARENA_SCRIPTED_S="0.02"),  # slow enough for the kill to land mid-way
    )
    try:
        wait_for(lambda: len(finished(folder)) >= kill_after, 120, f"{kill_after} matches")
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(10)
    finally:
        if runner.poll() is None:
            runner.kill()
    before = {row[0] for row in finished(folder)}
    assert kill_after <= len(before) < total, "the kill must land mid-bracket"
    sweep_orphans(folder)
    resumed = subprocess.run(
        [*ARENA, "tournament", "resume", str(folder), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=240,
        env=marked(folder),
    )
    assert resumed.returncode == 0, resumed.stderr
    wait_for(lambda: not bot_processes(folder), 20, "the resumed runner's bots to end")
    return folder


@pytest.mark.parametrize(
    ("kind", "deals", "kill_after"), [("knockout", KNOCKOUT, 5), ("double-elimination", DOUBLE, 8)]
)
def test_a_ladders_top_8_at_three_seats_killed_mid_bracket_plays_every_match_once(
    ladder: Path, tmp_path: Path, kind: str, deals: dict[str, int], kill_after: int
) -> None:
    final = tmp_path / "final"
    arena("ladder", "final", ladder, "--top", "8", "--format", kind, "-o", final)
    config = load_config(final / "tournament.toml")
    assert config.bot_names() == [f"b{n}" for n in range(1, 9)]
    assert (config.format.kind, config.format.seats, config.format.deals) == (kind, 3, 1)  # type: ignore[union-attr]
    plan = BracketSchedule(config, config.format)  # type: ignore[arg-type]
    expected = matches(deals)
    # The plan's count known in advance, plus W1-T3's tie-break deal (and the reset).
    assert len(expected) == plan.total + 3 * (1 + (kind != "knockout"))  # type: ignore[operator]

    folder = killed_and_resumed(final, kill_after, len(expected))
    assert played_once(folder) == expected

    bracket = standings(folder)
    assert bracket["champion"] == "b8"
    tables = {t["table_id"]: t for r in bracket["rounds"] for t in r["tables"]}
    byes = [t["entrants"][0]["bot"] for t in tables.values() if t["status"] == "bye"]
    assert byes[:3] == ["b1", "b2", "b1"]  # the top seeds rest (b1 twice: 8 is no 3 ** k)
    assert (tables["W1-T3"]["decided_by"], tables["W1-T3"]["deals"]) == ("tie-break deals", 2)
    through = {e["bot"] for e in tables["W2-T2"]["entrants"] if e["through"]}
    assert through == {"b6", "b8"}  # the wide table: two of three go on
    if kind == "double-elimination":
        grand = [e["bot"] for e in tables["GF"]["entrants"]]
        assert grand == ["b1", "b6", "b8"] and tables["GF"]["feeds"] == "GF2"
        assert [e["bot"] for e in tables["GF2"]["entrants"] if e["through"]] == ["b8"]
