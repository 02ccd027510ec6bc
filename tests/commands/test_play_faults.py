"""`arena play` and `arena serve` under faults, run as a user runs them (their own process, real
bot processes, 127.0.0.1): a bot that dies before joining is reported at once with its log, bad
folders and busy ports are one-line errors, no replay is ever overwritten, and a series stopped
or short of disk keeps every result it has."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.replays.verify import verify
from tournaments.cli.arena_app import app

ARENA = [sys.executable, "-m", "tournaments.cli.arena_app"]
PAUSING = Path(__file__).resolve().parent.parent / "bots" / "pausing_bot.py"
RANDOM = ["--bot", "example:random"]
# Seats do not time out while a bot thinks on purpose.
PATIENT = ["--decision-ms", "60000", "--time-bank-ms", "0"]


def arena(*args: str | Path, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA, *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=cwd
    )


def our_lines(stderr: str) -> list[str]:
    """stderr without the quoted end of a bot's log (lines '  | ...')."""
    return [line for line in stderr.splitlines() if not line.startswith("  |")]


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: "), result.stderr
    assert "Traceback" not in "\n".join(our_lines(result.stderr)), result.stderr
    assert len(our_lines(result.stderr)) == 1, result.stderr


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("source", "name", "code", "said"),
    [
        ("import no_such_module_anywhere\n", "broken", 1, "ModuleNotFoundError"),
        ("x = (\n", "broken", 1, "SyntaxError"),
        ("import arena_sdk\n", "broken", 2, "must define exactly one Bot subclass"),
        (None, "sh", 3, "cannot start up"),
    ],
)
def test_a_bot_that_dies_before_joining_stops_play_at_once(
    tmp_path: Path, source: str | None, name: str, code: int, said: str
) -> None:
    if source is None:
        spec = "cmd:sh -c 'echo cannot start up >&2; exit 3'"
    else:
        (tmp_path / "broken.py").write_text(source)
        spec = "broken.py"
    started = time.monotonic()
    result = arena("play", "opposing-force", "--bot", spec, *RANDOM, cwd=tmp_path)
    # The join timeout is 20 s: the exit is seen as it happens.
    assert time.monotonic() - started < 10
    no_traceback(result)
    assert f"error: bot {name} ({spec}) exited with code {code} before joining" in result.stderr
    logs = tmp_path / "replays" / "logs"
    assert f"the end of its log {logs}/0-{name}" in result.stderr
    assert said in result.stderr
    assert not list((tmp_path / "replays").glob("*.jsonl"))


@pytest.mark.timeout(60)
def test_play_says_where_each_bots_log_is(tmp_path: Path) -> None:
    result = arena("play", "opposing-force", "--bot", "example:first", *RANDOM, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    logs = tmp_path / "replays" / "logs"
    assert f"log of first: {logs}/0-first.log, {logs}/0-first-2.log" in result.stdout
    assert f"log of random: {logs}/1-random.log, {logs}/1-random-2.log" in result.stdout
    assert (logs / "0-first.log").is_file()


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield int(taken.getsockname()[1])


@pytest.mark.timeout(60)
def test_a_port_in_use_is_one_line(tmp_path: Path, busy_port: int) -> None:
    where = f"127.0.0.1:{busy_port}"
    for args in (
        ("play", "opposing-force", *RANDOM, *RANDOM, "--listen", where),
        ("serve", "--listen", where, "--connect-timeout-s", "1"),
    ):
        result = arena(*args, cwd=tmp_path)
        no_traceback(result)
        assert f"cannot listen on {where}: Address already in use" in result.stderr


@pytest.mark.timeout(60)
def test_an_unwritable_replays_folder_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where the folder should be")
    for command in (
        ("play", "opposing-force", *RANDOM, *RANDOM),
        ("serve", "--connect-timeout-s", "1"),
    ):
        result = arena(*command, "--replays", tmp_path / "taken" / "replays", cwd=tmp_path)
        no_traceback(result)
        assert "cannot write replays" in result.stderr
        assert f"{tmp_path / 'taken'}" in result.stderr and "Not a directory" in result.stderr


@pytest.mark.timeout(60)
def test_options_the_game_refuses_for_these_seats_are_one_line(tmp_path: Path) -> None:
    result = arena(
        "play", "capture-the-commander", *RANDOM, *RANDOM, *RANDOM, "--option", "teams=true",
        cwd=tmp_path,
    )  # fmt: skip
    no_traceback(result)
    assert "teams needs exactly 4 seats" in result.stderr


@pytest.mark.timeout(60)
def test_two_runs_into_one_folder_keep_every_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two series with one id name their matches alike: the second run must not replace the
    # first run's replays.
    monkeypatch.setattr("referee.hosting.series.secrets.token_hex", lambda _: "5e7e5")
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        ran = CliRunner().invoke(app, ["play", "opposing-force", *RANDOM, *RANDOM])
        assert ran.exit_code == 0, ran.output
    names = sorted(p.name for p in (tmp_path / "replays").glob("*.jsonl"))
    assert names == [
        "opposing-force-5e7e5-0000.2.jsonl",
        "opposing-force-5e7e5-0000.jsonl",
        "opposing-force-5e7e5-0001.2.jsonl",
        "opposing-force-5e7e5-0001.jsonl",
    ]
    for name in names:
        verify(tmp_path / "replays" / name)


def start_play(tmp_path: Path, pause_s: float, games: int) -> tuple[subprocess.Popen[str], Path]:
    """`arena play` of the pausing bot, which stops for pause_s in its second match (the third
    of the series); stdout goes to the returned file, line by line."""
    out = tmp_path / "stdout.txt"
    pausing = f"cmd:{sys.executable} {PAUSING} {pause_s}"
    play = subprocess.Popen(
        [
            *ARENA,
            "play",
            "opposing-force",
            "--bot",
            pausing,
            *RANDOM,
            "--games",
            str(games),
            *PATIENT,
        ],
        cwd=tmp_path,
        stdout=out.open("w"),
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    return play, out


def wait_for_text(path: Path, text: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while text not in path.read_text():
        assert time.monotonic() < deadline, f"no {text!r} after {timeout_s} s"
        time.sleep(0.02)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_series_stopped_mid_match_keeps_every_finished_result(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    play, out = start_play(tmp_path, pause_s=60, games=4)
    try:
        wait_for_text(out, "match   2", 30)
        time.sleep(0.3)  # match 3 is under way: its pausing seat thinks
        play.send_signal(sig)
        _, stderr = play.communicate(timeout=20)
    finally:
        if play.poll() is None:
            play.kill()
    assert play.returncode == code, stderr
    assert "stopped after 2 of 4 matches" in stderr and "Traceback" not in stderr
    shown = out.read_text()
    assert "match   3" not in shown
    assert "│ python │ 2 " in shown and "│ random │ 2 " in shown  # the standings so far
    assert "log of python: " in shown
    replays = sorted((tmp_path / "replays").glob("*.jsonl"))
    assert len(replays) == 2
    for path in replays:
        verify(path)


@pytest.mark.timeout(60)
def test_a_replay_that_cannot_be_written_mid_series_keeps_the_result(tmp_path: Path) -> None:
    play, out = start_play(tmp_path, pause_s=1, games=4)
    try:
        wait_for_text(out, "match   2", 30)
        # The disk goes away under the series: matches 3 and 4 have nowhere to go.
        (tmp_path / "replays").rename(tmp_path / "gone")
        (tmp_path / "replays").write_text("")
        _, stderr = play.communicate(timeout=30)
    finally:
        if play.poll() is None:
            play.kill()
    assert play.returncode == 0, stderr
    shown = out.read_text()
    for match in ("match   3", "match   4"):
        line = next(line for line in shown.splitlines() if line.startswith(match))
        assert line.endswith("(its replay was not saved: see the warning)")
    assert "│ python │ 4 " in shown and "│ random │ 4 " in shown
    assert stderr.count("replay_not_written") == 2
    assert f"cannot write {tmp_path / 'replays'}/" in stderr and "is not a folder" in stderr
    assert len(list((tmp_path / "gone").glob("*.jsonl"))) == 2
