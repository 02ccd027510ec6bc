"""Knockout and double elimination played by real bot processes through the runner, each
table's result scripted (tests/tournaments/bracket_script.py): who goes through, how each table
was decided, the champion and the placings, and every match played once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from referee.replays.verify import verify
from tests.tournaments.bracket_script import bracket_config, scripted_bots
from tournaments.bracket_models import BracketTable, BracketView
from tournaments.config import parse_config
from tournaments.run_progress import NoProgress
from tournaments.runner import RunSummary, run_tournament
from tournaments.standings import standings_report
from tournaments.store import Store

ARENA = [sys.executable, "-m", "tournaments.cli.arena_app"]


def play(folder: Path, raw: dict[str, Any]) -> tuple[RunSummary, BracketView]:
    config = parse_config(raw)
    store = Store.create(folder / "out", config)
    try:
        summary = run_tournament(folder / "out", store, NoProgress())
    finally:
        store.close()
    assert summary.state == "finished" and not summary.failed, summary
    bracket = standings_report(config, summary.ledger).bracket
    assert bracket is not None
    return summary, bracket


def tables(view: BracketView) -> dict[str, BracketTable]:
    return {t.table_id: t for r in view.rounds for t in r.tables}


def went_on(table: BracketTable) -> list[str | None]:
    return [e.bot for e in table.entrants if e.through]


def test_a_knockout_of_eight_decides_by_points_tie_breaks_and_seed(tmp_path: Path) -> None:
    # W1: 1 v 8 (8 forfeits), 2 v 7 (a mirror tie all through: the seed), 3 v 6 (tied after
    # deal 0, 6 forfeits the tie-break deal), 4 v 5 (4 forfeits: an upset).
    losing = {
        "s1": {"W3-T1": 0},
        "s2": {},
        "s3": {"W2-T2": 0},
        "s4": {"W1-T4": 0},
        "s5": {"W2-T1": 0},
        "s6": {"W1-T3": 2},
        "s7": {},
        "s8": {"W1-T1": 0},
    }
    raw = bracket_config(scripted_bots(tmp_path, losing), {"kind": "knockout", "tiebreak_deals": 2})
    summary, view = play(tmp_path, raw)
    by_id = tables(view)
    assert [r.label for r in view.rounds] == ["Quarter-finals", "Semi-finals", "Final"]
    assert went_on(by_id["W1-T1"]) == ["s1"] and by_id["W1-T1"].decided_by == "points"
    assert went_on(by_id["W1-T2"]) == ["s2"] and by_id["W1-T2"].decided_by == "seed"
    assert by_id["W1-T2"].deals == 3  # 1 deal, then both tie-break deals, still tied
    assert [e.points for e in by_id["W1-T2"].entrants] == [3.0, 3.0]
    assert went_on(by_id["W1-T3"]) == ["s3"] and by_id["W1-T3"].decided_by == "tie-break deals"
    assert by_id["W1-T3"].deals == 2
    assert went_on(by_id["W1-T4"]) == ["s5"] and by_id["W1-T4"].decided_by == "points"
    # Seeds 1 and 2 were dealt to opposite halves: they meet in the final, not before.
    assert {e.bot for e in by_id["W2-T1"].entrants} == {"s1", "s5"}
    assert {e.bot for e in by_id["W2-T2"].entrants} == {"s2", "s3"}
    assert went_on(by_id["W3-T1"]) == ["s2"]
    assert view.champion == "s2"
    assert view.placings == [["s2"], ["s1"], ["s3", "s5"], ["s4", "s6", "s7", "s8"]]
    report = standings_report(parse_config(raw), summary.ledger)
    assert [row.bot for row in report.standings[:2]] == ["s2", "s1"]
    assert [row.place for row in report.standings] == [1, 2, 3, 3, 5, 5, 5, 5]
    # Every match once: 4 + 2 + 1 tables of 1 deal in 2 seatings, plus 2 + 1 tie-break deals.
    ids = list(summary.ledger.scheduled)
    assert len(ids) == len(set(ids)) == 2 * 7 + 2 * 3
    assert "W1-T2-g5" in ids and "W1-T2-g6" not in ids and "W1-T3-g4" not in ids
    for record in summary.ledger.records():
        assert {f[1] for f in record.forfeits} <= {"illegal_action"}
        verify(Path(record.replay or ""))


def test_a_knockout_of_six_gives_the_top_two_seeds_byes(tmp_path: Path) -> None:
    losing = {f"s{n}": {} for n in range(1, 7)}
    losing["s1"] = {"W3-T1": 0}
    raw = bracket_config(scripted_bots(tmp_path, losing), {"kind": "knockout", "tiebreak_deals": 0})
    summary, view = play(tmp_path, raw)
    by_id = tables(view)
    assert by_id["W1-T1"].status == "bye" and by_id["W1-T1"].matches == []
    assert by_id["W1-T2"].status == "bye" and went_on(by_id["W1-T2"]) == ["s2"]
    assert {e.bot for e in by_id["W1-T3"].entrants} == {"s3", "s6"}
    assert {e.bot for e in by_id["W1-T4"].entrants} == {"s4", "s5"}
    # No tie-break deals: a mirror tie goes to the better seed at once.
    assert by_id["W1-T3"].decided_by == "seed" and by_id["W1-T3"].deals == 1
    assert view.champion == "s2" and len(summary.ledger.scheduled) == 2 * 5


def test_four_seat_tables_send_their_top_two_on(tmp_path: Path) -> None:
    # W1-T1 holds seeds 1, 4, 5, 8 and W1-T2 seeds 2, 3, 6, 7 (the snake); in each the two
    # told to lose forfeit, the two others go on; in the final all but s6 forfeit.
    losing = {f"s{n}": {"W2-T1": 0} for n in range(1, 9)}
    for name in ("s1", "s8", "s2", "s7"):
        losing[name] = {"W1-T1": 0, "W1-T2": 0}
    del losing["s6"]["W2-T1"]
    bots = scripted_bots(tmp_path, losing)
    raw = bracket_config(bots, {"kind": "knockout", "seats": 4}, game="strato-sphere")
    summary, view = play(tmp_path, raw)
    by_id = tables(view)
    assert view.through == 2 and [r.label for r in view.rounds] == ["Semi-finals", "Final"]
    assert [e.seed for e in by_id["W1-T1"].entrants] == [1, 4, 5, 8]
    assert sorted(went_on(by_id["W1-T1"])) == ["s4", "s5"]  # type: ignore[type-var]
    assert sorted(went_on(by_id["W1-T2"])) == ["s3", "s6"]  # type: ignore[type-var]
    assert {e.bot for e in by_id["W2-T1"].entrants} == {"s3", "s4", "s5", "s6"}
    assert went_on(by_id["W2-T1"]) == ["s6"] and view.champion == "s6"
    assert view.placings[0] == ["s6"] and len(view.placings[-1]) == 4
    assert len(summary.ledger.scheduled) == 3 * 4  # three tables, one deal in four seatings


def test_four_seat_byes_rest_the_top_seeds_together(tmp_path: Path) -> None:
    # Six bots at four seats, two through: seeds 1 and 2 rest at a bye table, 3-6 play the
    # other first-round table (s3 and s4 forfeit), and the final's four meet.
    losing = {"s1": {"W2-T1": 0}, "s2": {}, "s3": {"W1-T2": 0}, "s4": {"W1-T2": 0}}
    losing |= {"s5": {"W2-T1": 0}, "s6": {"W2-T1": 0}}
    bots = scripted_bots(tmp_path, losing)
    raw = bracket_config(bots, {"kind": "knockout", "seats": 4}, game="strato-sphere")
    summary, view = play(tmp_path, raw)
    by_id = tables(view)
    assert by_id["W1-T1"].status == "bye" and went_on(by_id["W1-T1"]) == ["s1", "s2"]
    assert [e.seed for e in by_id["W1-T2"].entrants] == [3, 4, 5, 6]
    assert sorted(went_on(by_id["W1-T2"])) == ["s5", "s6"]  # type: ignore[type-var]
    assert went_on(by_id["W2-T1"]) == ["s2"] and view.champion == "s2"
    assert len(summary.ledger.scheduled) == 2 * 4


def test_three_seat_tables_send_their_winner_on(tmp_path: Path) -> None:
    # The snake over three tables: 1, 6, 7 / 2, 5, 8 / 3, 4, 9. The two told to lose at each
    # first-round table forfeit (s7, s5 and s9 go on), and s7 wins the final.
    losing = {f"s{n}": {"W1-T1": 0, "W1-T2": 0, "W1-T3": 0} for n in range(1, 10)}
    for name in ("s7", "s5", "s9"):
        losing[name] = {"W2-T1": 0}
    losing["s7"] = {}
    bots = scripted_bots(tmp_path, losing)
    summary, view = play(tmp_path, bracket_config(bots, {"kind": "knockout", "seats": 3}))
    by_id = tables(view)
    assert view.through == 1 and [r.label for r in view.rounds] == ["Semi-finals", "Final"]
    assert [[e.seed for e in by_id[f"W1-T{t}"].entrants] for t in (1, 2, 3)] == [
        [1, 6, 7],
        [2, 5, 8],
        [3, 4, 9],
    ]
    assert [went_on(by_id[f"W1-T{t}"]) for t in (1, 2, 3)] == [["s7"], ["s5"], ["s9"]]
    assert went_on(by_id["W2-T1"]) == ["s7"] and view.champion == "s7"
    assert len(summary.ledger.scheduled) == 4 * 3


def test_double_elimination_reaches_the_bracket_reset(tmp_path: Path) -> None:
    # Five bots: seeds 1-3 get byes; s2 loses the winners' final to s1, wins the losers'
    # final, then beats s1 in the grand final (a reset) and again in the reset.
    losing = {
        "s1": {"GF": 0, "GF2": 0},
        "s2": {"W3-T1": 0},
        "s3": {"W2-T2": 0, "L4-T1": 0},
        "s4": {"W2-T1": 0, "L3-T1": 0},
        "s5": {"W1-T4": 0, "L2-T1": 0},
    }
    raw = bracket_config(scripted_bots(tmp_path, losing), {"kind": "double-elimination"})
    summary, view = play(tmp_path, raw)
    by_id = tables(view)
    assert went_on(by_id["W3-T1"]) == ["s1"] and by_id["W3-T1"].losers_feed == "L4-T1"
    assert went_on(by_id["L4-T1"]) == ["s2"]
    assert went_on(by_id["GF"]) == ["s2"] and by_id["GF"].feeds == "GF2"  # drawn to the reset
    assert [r.label for r in view.rounds][-2:] == ["Grand final", "Grand final reset"]
    assert went_on(by_id["GF2"]) == ["s2"] and view.champion == "s2"
    assert view.placings == [["s2"], ["s1"], ["s3"], ["s4"], ["s5"]]
    assert by_id["L1-T1"].status == "bye" and by_id["L1-T2"].entrants == []
    played = {m.rsplit("-g", 1)[0] for m in summary.ledger.scheduled}
    assert played == {"W1-T4", "W2-T1", "W2-T2", "L2-T1", "L3-T1", "W3-T1", "L4-T1", "GF", "GF2"}
    assert len(summary.ledger.scheduled) == 2 * 9


def test_standings_json_and_text_carry_the_bracket(tmp_path: Path) -> None:
    losing = {"s1": {}, "s2": {"W1-T2": 0}, "s3": {"W2-T1": 0}}
    (tmp_path / "cup.toml").write_text(_toml(scripted_bots(tmp_path, losing)))
    ran = subprocess.run(
        [*ARENA, "tournament", "run", str(tmp_path / "cup.toml"), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    shown = subprocess.run(
        [*ARENA, "tournament", "standings", str(tmp_path / "out"), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    bracket = json.loads(shown.stdout)["bracket"]
    assert BracketView.model_validate(bracket).champion == "s1"
    assert bracket["format"] == "knockout" and bracket["placings"] == [["s1"], ["s3"], ["s2"]]
    final = bracket["rounds"][-1]["tables"][0]
    assert final["table_id"] == "W2-T1" and final["decided_by"] == "points"
    assert final["matches"] == ["W2-T1-g0", "W2-T1-g1"]
    text = subprocess.run(
        [*ARENA, "tournament", "standings", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert "Semi-finals" in text and "Final" in text and "bye" in text
    assert "decided by points" in text and "champion: s1" in text


def _toml(bots: list[dict[str, str]]) -> str:
    entries = "".join(f'[[bots]]\nspec = "{b["spec"]}"\nname = "{b["name"]}"\n' for b in bots)
    return (
        'name = "cup"\ngame = "capture-the-commander"\nseed = 2\noutput = "out"\n'
        f'{entries}[format]\nkind = "knockout"\n'
    )
