"""arena-bot.toml: each bad manifest refused with one line naming its key, nothing stored, each
beside the good manifest that the same archive is accepted with."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee.bots import launcher
from referee.bots.launcher import parse_spec
from tests.tournaments.submissions.crafting import BOT, regular, stored_names, tar_gz
from tournaments.submissions.archive_rules import SubmissionLimits, SubmissionRefused
from tournaments.submissions.intake import accept
from tournaments.submissions.manifest import BotManifest, parse_manifest

pytestmark = pytest.mark.timeout(60)


def archive(manifest: bytes | None, **files: bytes) -> bytes:
    members = [regular("arena-bot.toml", manifest)] if manifest is not None else []
    members += [regular(name, data) for name, data in files.items()]
    return tar_gz(members, with_good=False)


def refusal(archive: bytes, versions: Path) -> str:
    with pytest.raises(SubmissionRefused) as caught:
        accept(archive, SubmissionLimits(), versions)
    assert stored_names(versions) == []
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_no_manifest_is_refused(tmp_path: Path) -> None:
    assert refusal(archive(None, **{"bot.py": BOT}), tmp_path / "v") == (
        "no arena-bot.toml at the archive's root (nor in its one top folder)"
    )
    # CONTROL: the same files with a manifest are taken
    good = archive(b'python = "bot.py"\n', **{"bot.py": BOT})
    assert accept(good, SubmissionLimits(), tmp_path / "ok").fresh


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (
            b'python = "bot.py"\nlanguage = "c"\n',
            "language: not a key of arena-bot.toml (it takes python, class, command, build)",
        ),
        (
            b'python = "bot.py"\ncommand = ["./bot"]\n',
            "give python (a file with a Bot class) or command, exactly one",
        ),
        (b"", "give python (a file with a Bot class) or command, exactly one"),
        (b'python = "gone.py"\n', "python: no file 'gone.py'"),
        (b'python = "bot.txt"\n', "python: 'bot.txt' is not a .py file"),
        (b'python = "../bot.py"\n', "python: '../bot.py' is not a path inside the bot's folder"),
        (
            b'python = "/srv/bot.py"\n',
            "python: '/srv/bot.py' is not a path inside the bot's folder",
        ),
        (
            b'command = ["/bin/sh", "-c", "x"]\n',
            "command: '/bin/sh' is not a path inside the bot's folder",
        ),
        (b'command = ["./mybot"]\n', "command: no file './mybot' (and no build to make it)"),
        (b"command = []\n", "command: Tuple should have at least 1 item after validation, not 0"),
        (b'command = "./mybot --fast"\n', "command: Input should be a valid tuple"),
        (b'command = ["a\\u0000b"]\n', "command.0: String should match pattern '^[^\\x00]*$'"),
        (b'class = "Mine"\ncommand = ["x"]\n', "class: only with python (the Python file's class)"),
        (
            b'python = "bot.py"\nclass = "not a class"\n',
            "class: String should match pattern '^[A-Za-z_][A-Za-z0-9_]{0,99}$'",
        ),
        (b'python = "bot.py"\nbuild = "make"\n', "build: Input should be a valid tuple"),
        (b'python = "bot.py"\nbuild = [1]\n', "build.0: Input should be a valid string"),
        (b"python = \n", "arena-bot.toml is not valid TOML: Invalid value (at line 1, column 10)"),
        (b"\xff\xfe", "arena-bot.toml is not UTF-8 text"),
        (b"# " + b"x" * 17_000 + b"\n", "arena-bot.toml is over 16 KiB"),
    ],
)
def test_a_bad_manifest_is_refused_naming_its_key(
    tmp_path: Path, manifest: bytes, message: str
) -> None:
    found = refusal(archive(manifest, **{"bot.py": BOT}), tmp_path / "v")
    assert found.removeprefix("arena-bot.toml: ") == message


def test_a_manifest_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    refused = archive(None, **{"arena-bot.toml/x": b"", "bot.py": BOT})
    assert refusal(refused, tmp_path / "v") == "arena-bot.toml is not a file"


def test_the_good_manifests_are_taken_and_run(tmp_path: Path) -> None:
    """CONTROL for the refusals above: each way to run a bot is taken, and its SPEC is one the
    launcher starts."""
    python = accept(
        archive(b'python = "bots/mine.py"\nclass = "Mine"\n', **{"bots/mine.py": BOT}),
        SubmissionLimits(),
        tmp_path / "v",
    )
    assert python.manifest == BotManifest.model_validate(
        {"python": "bots/mine.py", "class": "Mine"}
    )
    assert parse_spec(python.manifest.spec_in(python.folder)).argv[-1].endswith("mine.py:Mine")
    built = accept(
        archive(
            b'command = ["./mybot", "--fast"]\nbuild = ["cc", "-o", "mybot", "mybot.c"]\n',
            **{"mybot.c": b"int main(void) { return 0; }\n"},
        ),
        SubmissionLimits(),
        tmp_path / "v",
    )
    assert built.manifest.build == ("cc", "-o", "mybot", "mybot.c")
    argv = parse_spec(built.manifest.spec_in(built.folder)).argv
    assert argv == (str(built.folder / "mybot"), "--fast")
    on_path = parse_manifest('command = ["node", "bot.js"]\n')
    assert parse_spec(on_path.spec_in(tmp_path)).argv == ("node", "bot.js")
    # A command runs in its folder: `node bot.js` finds bot.js there.
    assert parse_spec(on_path.spec_in(tmp_path)).workdir == tmp_path.resolve()
    # A folder whose name holds what a SPEC's FOLDER ends at, or what quotes it, is quoted.
    for name in FOLDER_NAMES:
        assert parse_spec(on_path.spec_in(tmp_path / name)).workdir == (tmp_path / name).resolve()
    # Control: written as it is, the FOLDER of a:b ends at its ':'.
    unquoted = f"cmd@{tmp_path / 'a:b'}:node bot.js"
    assert parse_spec(unquoted).workdir == tmp_path / "a"


# Folder names a ladder may be kept in: a ':' (which ends a cmd@ SPEC's FOLDER), quotes, a
# backslash, spaces, and the SPEC's other marks.
FOLDER_NAMES = (
    "a:b",
    "it's",
    'say "hi"',
    "back\\slash",
    "two  spaces: and:",
    "x@y.py:Z",
    "::",
    "a.py@b",
)


@pytest.mark.parametrize("longest", [True, False], ids=["guarded", "control"])
def test_a_python_bot_in_a_folder_of_any_name_runs_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, longest: bool
) -> None:
    """A ladder kept in a folder named like `a.py@b`: its SPEC reads FILE up to the last
    `.py` that names a file. Control: read up to the first, that folder's file is `a.py`, run
    on the Python `b/...` (a bot that is not there)."""
    manifest = parse_manifest('python = "bots/mine.py"\nclass = "Mine"\n')
    if not longest:
        monkeypatch.setattr(launcher, "_PYTHON_FILE_LONGEST", re.compile("(?!)"))
    wrong = []
    for name in FOLDER_NAMES:
        bot = tmp_path / name / "bots" / "mine.py"
        bot.parent.mkdir(parents=True)
        bot.write_bytes(BOT)
        try:
            argv = parse_spec(manifest.spec_in(tmp_path / name)).argv
        except launcher.SpecError:
            argv = ()
        if argv[-1:] != (f"{bot}:Mine",):
            wrong.append(name)
    assert wrong == ([] if longest else ["a.py@b"])
