"""Tests referee.replays (verify, walk, viewer), referee.commands and tournaments.web.

Crafted replays (tests/trust/crafted.py: too deep, too long, of the wrong types, naming seats
the match has not) against every command that reads one: `arena replay verify`, `show`, `step`
and `html` end with their error code and one line on stderr naming the file and the line, never
a traceback; `arena web` refuses the match in one line and goes on serving. Beside each, the
control: what the unguarded path (json.loads, a plain read, the engine) does with the file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from arena_games import replay_file as replay
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from referee.commands.stepper import steps
from referee.replays.verify import Divergence, verify
from referee.replays.viewer import model
from referee.replays.walk import text, view
from tests.commands.test_replay_and_cli import _replay
from tests.tournaments.web.harness import arena, get, get_json, web_server
from tests.trust.crafted import CORPUS, check_unguarded, craft
from tournaments.cli.arena_app import app


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real replay: a match of Opposing Force between two random bots."""
    return _replay(tmp_path_factory.mktemp("real"))


@pytest.fixture(scope="module")
def corpus(real: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("crafted")
    return {name: craft(name, real, folder) for name in CORPUS}


def _commands(path: Path, out: Path) -> dict[str, list[str]]:
    return {
        "show": ["replay", "show", str(path), "--as", "referee"],
        "html": ["replay", "html", str(path), "--out", str(out), "--as", "referee"],
        "step": ["replay", "step", str(path)],
        "verify": ["replay", "verify", str(path)],
    }


def _one_line_error(stderr: str, path: Path) -> str:
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, stderr
    assert str(path) in lines[0], lines[0]
    return lines[0]


def test_the_real_replay_passes_every_command(real: Path, tmp_path: Path) -> None:
    """The control of the whole file: the guards refuse nothing a real match writes."""
    runner = CliRunner()
    for name, args in _commands(real, tmp_path / "page.html").items():
        if name != "step":  # the stepper runs full screen: its loading is checked below
            result = runner.invoke(app, args)
            assert result.exit_code == 0, (name, result.output)
    assert steps(real, "referee")[1]
    assert verify(real).state.is_over()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_each_crafted_replay_is_one_line_in_every_command(
    name: str, corpus: dict[str, Path], tmp_path: Path
) -> None:
    path = corpus[name]
    for command, args in _commands(path, tmp_path / "page.html").items():
        result = CliRunner().invoke(app, args)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            command,
            result.exception,
        )
        assert result.exit_code == (1 if command == "verify" else 2), (command, result.output)
        line = _one_line_error(result.stderr, path)
        assert line.startswith("FAIL " if command == "verify" else "error: "), line
        assert "\x1b" not in line and "\x07" not in line
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_control_each_crafted_replay_defeats_the_unguarded_path(
    name: str, corpus: dict[str, Path]
) -> None:
    check_unguarded(name, corpus[name])


def test_the_guarded_errors_name_the_line(corpus: dict[str, Path]) -> None:
    expected = {
        "deep_header": ":1: nested deeper than 32 levels",
        "deep_event": ":3: nested deeper than 32 levels",
        "long_line": ":2: longer than 1024 KiB",
        "long_file": ": longer than 64 MiB",
        "fifo": ": cannot read: not a regular file",
        "huge_number": ": a number of thousands of digits",
        "lone_surrogate": ": a string holds a lone surrogate",
        "seat_out_of_range": ": seat 7, in a match of 2 seats",
        "header_seat_numbers": ":1: the seats are not numbered 0 to 1 once each",
        "record_after_result": ": a record after the result",
        "forfeit_cause": ":3: forfeit cause 'bogus' is none of",
    }
    for name, words in expected.items():
        with pytest.raises(replay.ReplayError) as refused:
            replay.read(corpus[name])
        assert str(refused.value).startswith(str(corpus[name])), refused.value
        assert words in str(refused.value), (name, refused.value)


@pytest.mark.timeout(120)
def test_real_processes_refuse_the_deepest_and_the_longest(
    corpus: dict[str, Path], tmp_path: Path
) -> None:
    """`arena replay ...` in its own process, as an organiser runs it."""
    cases = ["deep_header", "deep_event", "huge_number", "lone_surrogate", "long_line", "fifo"]
    verified = arena("replay", "verify", *(corpus[name] for name in cases))
    assert verified.returncode == 1 and "Traceback" not in verified.stderr
    fails = verified.stderr.strip().splitlines()
    assert [line.split(":")[0] for line in fails] == [f"FAIL {corpus[name]}" for name in cases]
    for command in ("show", "html", "step"):
        path = corpus["deep_options"]
        ran = arena(*_commands(path, tmp_path / "page.html")[command])
        assert ran.returncode == 2, ran.stderr
        assert _one_line_error(ran.stderr, path).endswith(":1: nested deeper than 32 levels")


@pytest.mark.timeout(240)
def test_arena_web_refuses_a_crafted_replay_in_one_line_and_goes_on(
    corpus: dict[str, Path], tmp_path: Path
) -> None:
    config = tmp_path / "t.toml"
    config.write_text(
        'name = "t"\ngame = "opposing-force"\n[[bots]]\nspec = "example:first"\n'
        '[[bots]]\nspec = "example:random"\n[format]\nkind = "round-robin"\n'
        "games_per_pairing = 2\n"
    )
    folder = tmp_path / "out"
    ran = arena("tournament", "run", config, "--out", folder, "--no-progress")
    assert ran.returncode == 0, ran.stderr
    replays = sorted((folder / "replays").glob("*.jsonl"))
    assert len(replays) == 2
    crafted = {"deep_event": replays[0], "lone_surrogate": replays[1]}
    for name, target in crafted.items():
        shutil.copy(corpus[name], target)
    with web_server(folder, "--as", "referee") as url:
        for target in crafted.values():
            match = target.stem
            for viewer in ("public", "referee", "0"):
                status, answer = get_json(f"{url}/api/matches/{match}/replay?as={viewer}")
                assert status == 500
                error = answer["error"]
                # The file's name and line (its folder may be left out of a public answer).
                assert error.startswith(f"match {match}: its replay cannot be shown: "), error
                assert re.search(rf"{re.escape(target.name)}:\d+: ", error), error
                assert "\n" not in error and "Traceback" not in error
            status, _, body = get(f"{url}/matches/{match}")
            assert status == 500 and "cannot be shown" in body and "Traceback" not in body
        status, standings = get_json(f"{url}/api/standings")
        assert status == 200 and standings
    # web_server's exit checked that the server stopped on Ctrl-C with nothing on stderr.


# -- a property: any change to a real replay's records ---------------------------------------

VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


@st.composite
def mutations(draw: st.DrawFn, records: list[dict[str, object]]) -> list[str]:
    """The real replay's lines with one record changed: a field set to any JSON value, a
    field dropped, or the record moved, copied or removed."""
    records = [dict(r) for r in records]
    at = draw(st.integers(0, len(records) - 1))
    record = records[at]
    how = draw(st.sampled_from(["set", "drop", "move", "copy", "remove"]))
    field = draw(st.sampled_from(sorted(record)))
    if how == "set":
        record[field] = draw(VALUES | st.integers(-3, 5))
    elif how == "drop":
        del record[field]
    elif how == "remove":
        del records[at]
    else:
        to = draw(st.integers(0, len(records) - 1))
        records.insert(to, records.pop(at) if how == "move" else dict(record))
    return [json.dumps(r) for r in records]


@pytest.mark.timeout(300)
def test_no_change_to_a_real_replay_escapes_as_anything_but_a_clean_error(
    real: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every reader of a replay (verify, the text view, the stepper, the viewer's model) either
    reads a changed file or refuses it with ReplayError (verify: or Divergence) naming the
    file: the errors the commands turn into one line. The control is the corpus's: the same
    kinds of change defeat the unguarded path."""
    records = [json.loads(line) for line in real.read_text().splitlines()]
    folder = tmp_path_factory.mktemp("mutated")

    @settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(mutations(records))
    def check(lines: list[str]) -> None:
        path = folder / "mutated.jsonl"
        path.write_text("\n".join(lines) + "\n")
        try:
            verify(path)
        except (replay.ReplayError, Divergence) as exc:
            assert str(exc).startswith(str(path)), exc
        for viewer in ("referee", "1"):
            try:
                text(view(path, viewer, None, boards=True))
                steps(path, viewer)
                model.load(path, viewer)
            except replay.ReplayError as exc:
                assert str(exc).startswith(str(path)), exc
            except ValueError as exc:  # a viewer the changed header has not
                assert str(exc).startswith("--as takes"), exc

    check()


def test_control_a_changed_event_escapes_the_viewer_without_its_check(
    real: Path, tmp_path: Path
) -> None:
    """What the property found: an event record holding a field the wire has not. With the
    viewer's check of events off, the model's protobuf parse raises, which no command
    catches (a traceback in `replay html`, a 500 with no line in `arena web`)."""
    records = [json.loads(line) for line in real.read_text().splitlines()]
    at = next(i for i, r in enumerate(records) if r["type"] == "event")
    records[at]["event"] = {"bogus": 1}
    path = tmp_path / "changed.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    with pytest.raises(replay.ReplayError, match=rf"^{path}:{at + 1}: an event the viewer"):
        model.load(path, "referee")
    with (
        pytest.MonkeyPatch.context() as patch,
        pytest.raises(json_format.ParseError),
    ):
        patch.setattr(model, "_check_events", lambda opened: None)
        model.load(path, "referee")


def test_verify_and_show_name_the_files_own_line_past_blank_lines(
    real: Path, tmp_path: Path
) -> None:
    """Blank lines hold no record: the line named is the file's, as an editor numbers it."""
    lines = real.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"type":"decision"' in line)
    lines[at] = re.sub(r'"action":\d+', '"action":99999', lines[at])
    path = tmp_path / "blank.jsonl"
    path.write_text("\n".join([lines[0], "", "", *lines[1:]]) + "\n")
    line = at + 1 + 2  # 1-based, after the two blank lines
    with pytest.raises(Divergence, match=rf"^{path}:{line}: seat \d's .* is not legal"):
        verify(path)
    with pytest.raises(replay.ReplayError, match=rf"^{path}:{line}: action 99999 is not legal"):
        view(path, "referee", None)
