"""An uploaded bot whose manifest gives a `command` runs in its own folder, as its manifest
says: `command = ["python3", "bot.py"]`, a bot that reads a file beside it by a relative path,
goes live through a real `arena ladder serve` (real archive over real HTTP, validation in
bubblewrap, rated matches). Its stored SPEC is `cmd@FOLDER:COMMAND`. The control: the same
folder as a plain `cmd:` SPEC, which runs in the referee's folder, finds neither file."""

from __future__ import annotations

import functools
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tournaments.ladder.test_vetting import author, settled, uploads_ladder
from tests.tournaments.ladder.upload_kit import bot_folder, packed, upload, version_rows
from tests.tournaments.web.harness import ARENA
from tests.tournaments.web.ladder_harness import finished, serving
from tournaments.ladder.roster import RosterError, checked_spec
from tournaments.submissions.manifest import read_manifest

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="uploads run in bwrap"),
]

# A bot in a script of its own, as other languages' bots are: run by its command, it opens
# its weights by a relative path, so it runs only in its own folder.
SCRIPT_BOT = """import random
from pathlib import Path

from arena_sdk.bot import Bot
from arena_sdk.client import run

WEIGHTS = Path("weights.txt").read_text()


class Weighted(Bot):
    name = "weighted"

    def act(self, observation, legal_actions):
        return random.randrange(len(legal_actions))


if __name__ == "__main__":
    run(Weighted())
"""
MANIFEST = 'command = ["python3", "bot.py"]\n'


def script_bot(where: Path) -> Path:
    return bot_folder(where, {"bot.py": SCRIPT_BOT, "weights.txt": "0.5 0.25\n"}, MANIFEST)


@pytest.fixture
def venv_python3(monkeypatch: pytest.MonkeyPatch) -> None:
    """`python3` on the PATH (serve's, and so its bots') is this Python, with the SDK."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def stored_spec(folder: Path, key: str) -> str:
    with sqlite3.connect(f"file:{folder / 'ladder.sqlite'}?mode=ro", uri=True) as db:
        return str(db.execute("SELECT spec FROM versions WHERE key = ?", (key,)).fetchone()[0])


@pytest.mark.usefixtures("venv_python3")
def test_an_uploaded_command_bot_runs_in_its_folder_goes_live_and_plays(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    folder.mkdir()
    uploads_ladder(folder)
    token = author(folder, "dora")
    with serving(folder) as served:
        status, body = upload(served.url, token, "dora-cmd", packed(script_bot(tmp_path / "b")))
        assert status == 202, body
        served.wait_for("dora-cmd@1 settled", functools.partial(settled, folder, "dora-cmd@1"))
        rows = version_rows(folder)
        assert rows["dora-cmd@1"] == ("live", "live: played 2 validation games clean"), rows
        served.wait_for("its rated matches", lambda: finished(folder, "dora-cmd@1") >= 2)
    spec = stored_spec(folder, "dora-cmd@1")
    home = (folder / "versions").resolve()
    assert spec.startswith(f"cmd@{home}/") and spec.endswith(":python3 bot.py"), spec


def bot_check(spec: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`arena bot check SPEC` in bubblewrap, run from cwd."""
    options = ["--game", "opposing-force", "--games", "1", "--sandbox", "bubblewrap"]
    return subprocess.run(
        [*ARENA, "bot", "check", spec, *options, "--keep", str(cwd / "kept")],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


@pytest.mark.usefixtures("venv_python3")
def test_bot_check_runs_a_cmd_at_folder_bot_in_its_folder(tmp_path: Path) -> None:
    bot = script_bot(tmp_path / "bot").resolve()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    checked = bot_check(f"cmd@{bot}:python3 bot.py", elsewhere)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.usefixtures("venv_python3")
def test_a_cmd_at_folder_bot_runs_in_a_folder_whose_name_holds_a_colon(tmp_path: Path) -> None:
    """A ladder kept in a folder named like `a:b`: the SPEC its manifest gives quotes FOLDER,
    and the bot plays in its folder. Control: the FOLDER unquoted ends at the ':' (and the
    folder it names is not there)."""
    bot = script_bot(tmp_path / "lad:der" / "bot").resolve()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    spec = read_manifest(bot).spec_in(bot)
    assert spec == f"cmd@'{bot}':python3 bot.py", spec
    checked = bot_check(spec, elsewhere)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    checked = bot_check(f"cmd@{bot}:python3 bot.py", elsewhere)
    said = checked.stdout + checked.stderr
    assert checked.returncode != 0 and "Traceback" not in said, said
    assert f"its folder {tmp_path / 'lad'} is not there" in said, said


@pytest.mark.usefixtures("venv_python3")
def test_control_a_plain_cmd_bot_runs_in_the_referees_folder_and_finds_nothing(
    tmp_path: Path,
) -> None:
    bot = script_bot(tmp_path / "bot").resolve()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    checked = bot_check("cmd:python3 bot.py", elsewhere)
    said = checked.stdout + checked.stderr
    assert checked.returncode != 0, said
    assert "bot.py" in said and "No such file" in said, said
    # Named by its absolute path, the script starts, but its weights are not where it looks.
    checked = bot_check(f"cmd:python3 {bot / 'bot.py'}", elsewhere)
    said = checked.stdout + checked.stderr
    assert checked.returncode != 0, said
    assert "weights.txt" in said, said


def test_a_cmd_at_folder_spec_needs_an_absolute_folder(tmp_path: Path) -> None:
    checked = bot_check("cmd@relative/bot:python3 bot.py", tmp_path)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert "needs an absolute FOLDER, not 'relative/bot'" in checked.stderr
    assert "Traceback" not in checked.stderr


def test_ladder_add_keeps_a_cmd_at_folder_spec_and_refuses_a_relative_folder(
    tmp_path: Path,
) -> None:
    spec = f"cmd@{tmp_path}:python3 bot.py"
    assert checked_spec(spec) == spec
    with pytest.raises(RosterError, match="needs an absolute FOLDER"):
        checked_spec("cmd@bot:python3 bot.py")
