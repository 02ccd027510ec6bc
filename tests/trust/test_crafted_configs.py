"""Tests tournaments.config and tournaments.ladder.config_file through the `arena` commands.

Crafted tournament and ladder files (too deep, too long, of the wrong types) against `arena
tournament run` and `arena ladder list` and `serve`: each ends with exit code 2 and an error
naming the file and the line or the key, never a traceback. Beside each, the control: what the
unguarded path (a plain read, tomllib, the old number checks) does with the same file."""

from __future__ import annotations

import math
import os
import shutil
import threading
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.tournaments.web.harness import arena
from tournaments.cli.arena_app import app
from tournaments.config import MAX_FILE_BYTES, ConfigError, load_config, read_toml

DEEP = 100_000
TOURNAMENT = """name = "t"
game = "opposing-force"
[[bots]]
spec = "example:first"
[[bots]]
spec = "example:random"
[format]
kind = "round-robin"
games_per_pairing = 2
[run]
concurrency = 1
"""

Edit = Callable[[str], str | bytes]

# name -> (how the file is made from a good one, what the unguarded path raises or None when
# it takes the file, the words of the guarded error).
CASES: dict[str, tuple[Edit, type[BaseException] | None, str]] = {
    "deep_array": (
        lambda good: f"x = {'[' * DEEP}{']' * DEEP}\n{good}",
        RecursionError,
        ":1: tables or arrays nested deeper than 16 levels",
    ),
    "deep_inline_table": (
        lambda good: good + "[options]\nx = " + "{a=" * DEEP + "1" + "}" * DEEP + "\n",
        RecursionError,
        ": tables or arrays nested deeper than 16 levels",
    ),
    "nested_40": (
        lambda good: good + "[options]\nx = " + "[" * 40 + "]" * 40 + "\n",
        None,
        ": options.x.0.0.0.0.0.0.0.0.0.0.0.0.0.0: tables or arrays nested deeper than 16",
    ),
    "long": (
        lambda good: good + "#" + "x" * MAX_FILE_BYTES + "\n",
        None,
        ": longer than 1024 KiB: not a config file",
    ),
    "huge_number": (
        lambda good: good.replace("concurrency = 1", "concurrency = " + "9" * 5000),
        ValueError,
        ":11: a number of thousands of digits",
    ),
    "not_utf8": (
        lambda good: good.encode().replace(b"first", b"f\xffirst"),
        UnicodeDecodeError,
        ":4: not UTF-8",
    ),
    "infinite_timeout": (
        lambda good: good + "connect_timeout_s = inf\n",
        None,
        "run.connect_timeout_s: Input should be a finite number",
    ),
    "nan_elo": (
        lambda good: good.replace('kind = "round-robin"', 'kind = "sprt"\nelo0 = nan').replace(
            "games_per_pairing = 2", 'candidate = "first"\nbaseline = "random"'
        ),
        None,
        "elo0: Input should be a finite number",
    ),
    "string_for_number": (
        lambda good: good.replace("games_per_pairing = 2", 'games_per_pairing = "two"'),
        None,
        "format.round-robin.games_per_pairing: Input should be a valid integer",
    ),
    "bots_a_string": (
        lambda good: good.split("[[bots]]")[0] + 'bots = "all"\n[format]\nkind = "round-robin"\n',
        None,
        "bots: Input should be a valid list",
    ),
    "negative_concurrency": (
        lambda good: good.replace("concurrency = 1", "concurrency = -4"),
        None,
        "run.concurrency: Input should be greater than or equal to 1",
    ),
}


def _make(name: str, folder: Path, file_name: str = "t.toml", good: str = TOURNAMENT) -> Path:
    path = folder / file_name
    made = CASES[name][0](good)
    if isinstance(made, bytes):
        path.write_bytes(made)
    else:
        path.write_text(made)
    return path


def _unguarded(path: Path) -> dict[str, Any]:
    """What load_config did before: a plain read, then tomllib."""
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _refusal(stderr: str, path: Path, words: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert stderr.startswith(f"error: {path}"), stderr
    assert words in stderr, stderr


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_crafted_tournament_file_is_refused_by_tournament_run(name: str, tmp_path: Path) -> None:
    path = _make(name, tmp_path)
    result = CliRunner().invoke(app, ["tournament", "run", str(path), "--no-progress"])
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    _refusal(result.stderr, path, CASES[name][2])


@pytest.mark.parametrize("name", sorted(CASES))
def test_control_a_crafted_tournament_file_defeats_the_unguarded_read(
    name: str, tmp_path: Path
) -> None:
    path = _make(name, tmp_path)
    expected = CASES[name][1]
    if expected is not None:
        with pytest.raises(expected):
            _unguarded(path)
        return
    raw = _unguarded(path)  # taken: only the guards refuse it
    if name == "long":
        assert path.stat().st_size > MAX_FILE_BYTES
    if name == "infinite_timeout":  # the old check, gt=0, holds for inf
        assert math.isinf(raw["run"]["connect_timeout_s"]) and raw["run"]["connect_timeout_s"] > 0


def test_a_fifo_is_refused_where_a_plain_read_blocks(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    os.mkfifo(path)
    with pytest.raises(ConfigError, match="not a regular file"):
        read_toml(path)
    # Control: the unguarded read waits for a writer; released by opening it for writing.
    reader = threading.Thread(target=path.read_bytes, daemon=True)
    reader.start()
    reader.join(1.0)
    blocked = reader.is_alive()
    os.close(os.open(path, os.O_WRONLY))
    reader.join(5.0)
    assert blocked


@pytest.mark.timeout(120)
def test_real_processes_refuse_crafted_tournament_and_ladder_files(tmp_path: Path) -> None:
    tournament = _make("deep_array", tmp_path)
    ran = arena("tournament", "run", tournament, "--no-progress")
    assert ran.returncode == 2
    _refusal(ran.stderr, tournament, CASES["deep_array"][2])
    assert len(ran.stderr.strip().splitlines()) == 1
    made = arena("ladder", "init", tmp_path / "ladder", "--game", "opposing-force")
    assert made.returncode == 0, made.stderr
    good = (tmp_path / "ladder" / "ladder.toml").read_text()
    crafted: dict[str, str | bytes] = {
        "deep": f"x = {'[' * DEEP}{']' * DEEP}\n{good}",
        "huge_number": good.replace("window = 10", "window = " + "9" * 5000),
        "not_utf8": good.encode().replace(b"opposing", b"opp\xffosing"),
        "long": good + "#" + "x" * MAX_FILE_BYTES + "\n",
    }
    for name, text in crafted.items():
        ladder = tmp_path / name
        shutil.copytree(tmp_path / "ladder", ladder)
        path = ladder / "ladder.toml"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        for command in ("list", "serve"):
            ran = arena("ladder", command, ladder, timeout=60)
            assert ran.returncode == 2, (name, command, ran.stdout, ran.stderr)
            assert len(ran.stderr.strip().splitlines()) == 1, ran.stderr
            _refusal(ran.stderr, path, "")


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda good: good.replace("seats = 2", 'seats = "two"'), "table.seats: Input should be"),
        (lambda good: good.replace("concurrency = 2", "concurrency = 2\nrejoin_grace_s = inf"),
         "run.rejoin_grace_s: Input should be a finite number"),
        (lambda good: good.replace("[options]", "[options]\nx = " + "[" * 40 + "]" * 40),
         "options.x.0.0.0"),
    ],
)  # fmt: skip
def test_a_crafted_ladder_file_is_refused_by_list_and_serve(
    edit: Callable[[str], str], words: str, tmp_path: Path
) -> None:
    runner = CliRunner()
    folder = tmp_path / "ladder"
    made = runner.invoke(app, ["ladder", "init", str(folder), "--game", "opposing-force"])
    assert made.exit_code == 0, made.output
    path = folder / "ladder.toml"
    path.write_text(edit(path.read_text()))
    for command in ("list", "serve"):
        result = runner.invoke(app, ["ladder", command, str(folder)])
        assert isinstance(result.exception, SystemExit), result.exception
        assert result.exit_code == 2, result.output
        _refusal(result.stderr, path, words)


# -- a property: any value at any key of a real tournament file ------------------------------

# Besides any JSON-like value, the strings a path or a spec breaks on: a NUL, a name longer
# than the OS takes, a device that never ends, a quote shlex cannot close.
AWKWARD = st.sampled_from(
    ["\x00", "a\x00.py", "x" * 5000 + ".py", "/dev/zero", "/tmp", "cmd:'", "example:", ".py"]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=8)
)
VALUES = st.one_of(
    AWKWARD,
    SCALARS,
    st.recursive(
        SCALARS | AWKWARD,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=6,
    ),
)


# Keys the good file leaves out, which a crafted one may set: each a path or a command.
OPTIONAL = {(): ["output", "deals", "seed"], ("bots", 0): ["python", "name"]}


@st.composite
def changed(draw: st.DrawFn) -> dict[str, Any]:
    """The good tournament file's table with one value, at any depth, set to anything, or one
    key it leaves out set."""
    raw = tomllib.loads(TOURNAMENT)
    if draw(st.booleans()):
        where, keys = draw(st.sampled_from(sorted(OPTIONAL.items())))
        table: Any = raw
        for key in where:
            table = table[key]
        table[draw(st.sampled_from(keys))] = draw(VALUES)
        return raw
    table = raw
    while True:
        key = draw(st.sampled_from(sorted(table) if isinstance(table, dict) else range(len(table))))
        inner = table[key]
        if not isinstance(inner, dict | list) or not inner or draw(st.booleans()):
            table[key] = draw(VALUES)
            return raw
        table = inner


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changed())
def test_no_value_at_any_key_escapes_as_anything_but_a_config_error(raw: dict[str, Any]) -> None:
    """The whole of load_config after the read (validation, paths made absolute, bot specs
    parsed, the deals file read) on the changed table: a tournament, or a ConfigError."""
    path = Path("/nonexistent/t.toml")
    with mock.patch("tournaments.config.read_toml", return_value=raw):
        try:
            load_config(path)
        except ConfigError as exc:
            assert str(path) in str(exc), exc


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from('[]{}="a1.,\n #x'), max_size=200))
def test_no_text_escapes_the_reader_as_anything_but_a_config_error(text: str) -> None:
    """Fragments of TOML's punctuation, read as a file: parsed or refused, nothing else."""
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"arena-crafted-{os.getpid()}.toml"
    path.write_text(text)
    try:
        read_toml(path)
    except ConfigError as exc:
        assert str(path) in str(exc), exc
    finally:
        path.unlink()


def test_control_without_the_shape_check_the_property_finds_an_escape() -> None:
    """The property can fail: with shape_problem off, a NUL or a name too long for the OS
    escapes load_config as a ValueError or an OSError, a traceback in `tournament run`."""
    with (
        mock.patch("tournaments.config.shape_problem", return_value=None),
        pytest.raises((ValueError, OSError, ExceptionGroup)) as escaped,
    ):
        test_no_value_at_any_key_escapes_as_anything_but_a_config_error()
    assert not isinstance(escaped.value, ConfigError), escaped.value
