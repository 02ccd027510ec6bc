"""A Python file bot's name (referee/bots/launcher.py bot_name): the class the SPEC names, else
the one Bot class the file defines, else its only class, else the file's stem; a class's
`name = "..."` when it is a plain word. Two folders' `bot.py` are no longer both "bot"."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee.bots import launcher
from referee.bots.launcher import parse_spec

BOT = """from arena_sdk.bot import Bot


class Helper:
    pass


class {cls}(Bot):
{body}
    def act(self, observation, legal_actions):
        return 0
"""


def bot_file(folder: Path, cls: str, body: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "bot.py"
    path.write_text(BOT.format(cls=cls, body=body or "    pass\n"), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("cls", "body", "spec_class", "name"),
    [
        ("Greedy", "", None, "Greedy"),  # the one Bot class, beside a helper class
        ("Greedy", '    name = "greedy-v2"\n', None, "greedy-v2"),  # the name it gives itself
        ("Greedy", "", "Helper", "Helper"),  # FILE.py:Class names it
        ("Greedy", '    name = "../../escape"\n', None, "Greedy"),  # not a plain word
        ("Greedy", '    name = "\\x1b[2Jboo"\n', None, "Greedy"),  # an escape sequence
    ],
)
def test_a_bot_py_is_named_after_its_class(
    tmp_path: Path, cls: str, body: str, spec_class: str | None, name: str
) -> None:
    path = bot_file(tmp_path / "mine", cls, body)
    spec = f"{path}:{spec_class}" if spec_class else str(path)
    assert parse_spec(spec).name == name


def test_without_one_bot_class_or_readable_source_the_stem_names_it(tmp_path: Path) -> None:
    two = tmp_path / "two" / "bot.py"
    two.parent.mkdir()
    two.write_text("from arena_sdk.bot import Bot\nclass A(Bot): ...\nclass B(Bot): ...\n")
    assert parse_spec(str(two)).name == "bot"
    broken = tmp_path / "broken" / "bot.py"
    broken.parent.mkdir()
    broken.write_text("class Greedy(Bot:\n")
    assert parse_spec(str(broken)).name == "bot"


@pytest.mark.timeout(120)
def test_two_folders_bot_py_play_under_their_own_names(tmp_path: Path) -> None:
    """A real `arena play`: each bot.py shows as its class; the logs stay in the log folder.
    The same two files with the file's stem as their name (the control) are bot#1 and bot#2."""
    first = bot_file(tmp_path / "a", "Greedy", '    name = "../../../escaped"\n')
    second = bot_file(tmp_path / "b", "Careful")
    play = ["play", "opposing-force", "--bot", str(first), "--bot", str(second), "--seed", "1"]
    done = subprocess.run(
        [sys.executable, "-m", "tournaments.cli.arena_app", *play, "--games", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [b["bot"] for b in report["bots"]] == ["Greedy", "Careful"]
    logs = [Path(log).resolve() for b in report["bots"] for log in b["logs"]]
    assert logs and all(log.parent == (tmp_path / "replays" / "logs").resolve() for log in logs)
    assert not list(tmp_path.rglob("escaped*"))


def test_the_stem_as_name_makes_every_bot_py_bot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: naming by the stem, as before, calls both files "bot"."""
    monkeypatch.setattr(launcher, "bot_name", lambda path, class_name: path.stem)
    first, second = bot_file(tmp_path / "a", "Greedy"), bot_file(tmp_path / "b", "Careful")
    assert parse_spec(str(first)).name == parse_spec(str(second)).name == "bot"


def test_an_unchecked_given_name_would_lead_a_log_out_of_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control of the plain-word check: any name taken as given walks out of the logs."""
    monkeypatch.setattr(launcher, "_FILE_SAFE_NAME", re.compile(r".*", re.DOTALL))
    name = parse_spec(str(bot_file(tmp_path / "a", "Greedy", '    name = "../../../x"\n'))).name
    logs = tmp_path / "replays" / "logs"
    assert name == "../../../x" and not (logs / f"1-{name}.log").resolve().is_relative_to(logs)
