"""`arena play` for a bot author practising: the same --seed repeats a series move for move,
example:random included, and the console says when the referee played for a bot and how often."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from arena_games import replay_file as replay

from tests.e2e.conftest import RAWBOT


def arena(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tournaments.cli.arena_app", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def moves(report: dict[str, object]) -> list[list[tuple[int, int]]]:
    """Each match's decisions, (seat, action), from its replay."""
    matches = report["matches"]
    assert isinstance(matches, list)
    return [
        [
            (r.seat, r.action)
            for r in replay.read(Path(m["replay"]))
            if isinstance(r, replay.DecisionRecord)
        ]
        for m in matches
    ]


@pytest.mark.timeout(240)
def test_the_same_seed_repeats_every_move_of_the_random_bot(tmp_path: Path) -> None:
    def series(seed: int, folder: str) -> list[list[tuple[int, int]]]:
        played = arena(
            "play", "strato-sphere", "--bot", "example:random", "--bot", "example:random",
            "--games", "2", "--seed", str(seed), "--replays", folder, "--json",
            cwd=tmp_path,
        )  # fmt: skip
        assert played.returncode == 0, played.stderr
        return moves(json.loads(played.stdout))

    first = series(7, "a")
    assert series(7, "b") == first
    assert series(8, "c") != first


@pytest.mark.timeout(120)
def test_the_console_counts_the_decisions_the_referee_played_for_a_bot(tmp_path: Path) -> None:
    illegal = f"cmd:{sys.executable} {RAWBOT} illegal"
    play = ["play", "opposing-force", "--bot", illegal, "--bot", "example:random", "--seed", "1"]
    play += ["--on-misbehaviour", "random", "--decision-ms", "2000"]
    scripted = arena(*play, "--replays", "json", "--json", cwd=tmp_path)
    assert scripted.returncode == 0, scripted.stderr
    report = json.loads(scripted.stdout)
    for match in report["matches"]:
        played_for = [
            r.seat
            for r in replay.read(Path(match["replay"]))
            if isinstance(r, replay.DecisionRecord) and r.substituted_for
        ]
        assert [s["substituted"] for s in match["seats"]] == [
            played_for.count(seat) for seat in range(2)
        ]
    [rawbot, random] = report["bots"]
    assert rawbot["substituted"] > 0 and random["substituted"] == 0

    text = arena(*play, "--replays", "text", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    # The same seed: the same matches, and the same decisions played for the bot.
    match_lines = [line for line in text.stdout.splitlines() if line.startswith("match")]
    for line, match in zip(match_lines, report["matches"], strict=True):
        count = next(s["substituted"] for s in match["seats"] if s["bot"] == "python")
        assert f"(the referee played {count} decision{'s' * (count != 1)} for python)" in line
    total = rawbot["substituted"]
    assert f"the referee played {total} decisions for python (--on-misbehaviour random)" in (
        text.stdout
    )


@pytest.fixture(scope="module")
def two_matches(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A real `arena play` of two matches: its folder and its match lines."""
    folder = tmp_path_factory.mktemp("play")
    play = ["play", "opposing-force", "--bot", "example:random", "--bot", "example:first"]
    shown = arena(*play, "--seed", "3", "--replays", "out", cwd=folder)
    assert shown.returncode == 0, shown.stderr
    return folder, [line for line in shown.stdout.splitlines() if line.startswith("match")]


@pytest.mark.timeout(120)
def test_each_match_line_names_its_own_replay_file(two_matches: tuple[Path, list[str]]) -> None:
    """Seats rotate between the two matches, so a line naming the other match's file would
    show the other seat order (the control: the lines' files swapped do not match)."""
    folder, lines = two_matches
    named = [folder / "out" / line.rsplit("  replay ", 1)[1] for line in lines]
    assert len(named) == 2 and named[0] != named[1]

    def matches(line: str, path: Path) -> bool:
        header, *_, result = replay.read(path)
        assert isinstance(header, replay.Header) and isinstance(result, replay.ResultRecord)
        seats = ", ".join(seat.name for seat in header.seats)
        return seats in line.replace("*", "") and result.reason in line

    assert all(matches(line, path) for line, path in zip(lines, named, strict=True))
    assert not any(matches(line, path) for line, path in zip(lines, named[::-1], strict=True))


def replay_shape(name: str) -> str:
    """A replay name with its series' hex and its number as placeholders."""
    return re.sub(r"-[0-9a-f]{8}-\d{4}\.jsonl$", "-SERIES-NNNN.jsonl", name)


def test_the_readmes_replay_names_have_the_shape_arena_play_writes(
    two_matches: tuple[Path, list[str]],
) -> None:
    """The README once showed `opposing-force-7-0000.jsonl`, a name no run makes (the control)."""
    folder, _ = two_matches
    written = {replay_shape(path.name) for path in (folder / "out").glob("*.jsonl")}
    assert written == {"opposing-force-SERIES-NNNN.jsonl"}
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"replays/([\w.-]+\.jsonl)", readme))
    assert shown and {replay_shape(name) for name in shown} <= written
    assert replay_shape("opposing-force-7-0000.jsonl") not in written
