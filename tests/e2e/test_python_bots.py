"""Tests referee.bots.launcher, referee.bots.interpreters and referee.bots.sandbox with real bots.

Python bots as their authors write them: several files in a folder of their own, data read
by a relative path, dependencies in a venv of their own (FILE.py@PYTHON, `python =` in a
tournament), with no sandbox and in bubblewrap. Real bot processes over gRPC.

The bot's venv is made here without pip (no network in tests): a .pth file gives it the
referee's site-packages, as `pip install grpcio protobuf` would give it those two, and a module
of its own stands for the bot's dependencies. The referee's own environment cannot import that
module, and the venv alone cannot import the SDK: arena gives it its own."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from arena_games import get_game
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings

from referee.bots.launcher import SpecError, parse_spec
from referee.bots.sandbox import Sandbox, SandboxError, Tier, probe_bubblewrap
from referee.bots.sandbox_docker import container_spec
from referee.hosting.series import SeriesPlan, run_series
from tournaments.config import ConfigError, load_config

GAME = get_game("opposing-force")
BWRAP_PROBLEM = probe_bubblewrap()
needs_bwrap = pytest.mark.skipif(
    BWRAP_PROBLEM is not None, reason=f"bubblewrap cannot run here: {BWRAP_PROBLEM}"
)

HELPER = "def pick(legal: int) -> int:\n    return legal - 1\n"
BOT = """
import os
import sys
from pathlib import Path

from arena_sdk import Bot
from helper import pick  # a module of its own, beside it

OPENING = Path("opening.txt").read_text().strip()  # its data, by a relative path
try:
    import botdep  # only in the bot's own venv
    DEPENDENCY = botdep.VERSION
except ImportError:
    DEPENDENCY = "none"
print(f"cwd={os.getcwd()} python={sys.executable} opening={OPENING} dep={DEPENDENCY}", flush=True)


class Mine(Bot):
    name = "mine"

    def act(self, observation, legal_actions):
        return pick(len(legal_actions))
"""
# A copy of the SDK installed in the bot's venv that must not be the one it runs on.
STALE_SDK = "raise ImportError('the venv's own arena_sdk was imported, not arena's')\n"


@dataclass(frozen=True)
class Author:
    folder: Path  # the bot's own: bot.py, helper.py, opening.txt
    python: Path  # its venv's interpreter

    @property
    def bot(self) -> Path:
        return self.folder / "bot.py"


def make_venv(where: Path, grpc: bool = True) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", where], check=True, timeout=60)
    python = where / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.strip()
    )
    (site / "botdep.py").write_text("VERSION = '4.2'\n")
    (site / "arena_sdk").mkdir()
    (site / "arena_sdk" / "__init__.py").write_text(STALE_SDK)
    if grpc:
        (site / "grpc_and_protobuf.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


@pytest.fixture
def author() -> Iterator[Author]:
    """A bot author's folder and venv, open to other users (a root referee's sandboxed bot
    runs as a uid of its own), outside /tmp."""
    top = Path(tempfile.mkdtemp(prefix="arena-python-bots-", dir="/var/tmp"))
    top.chmod(0o755)
    folder = top / "my bot"
    folder.mkdir()
    (folder / "bot.py").write_text(BOT)
    (folder / "helper.py").write_text(HELPER)
    (folder / "opening.txt").write_text("e4\n")
    yield Author(folder, make_venv(top / "venv"))
    shutil.rmtree(top, ignore_errors=True)


def play(spec: str, replays: Path, sandbox: Sandbox | None = None) -> str:
    """Two matches of the bot against the random bot; the bot's first log."""
    bots = [parse_spec(spec), parse_spec("example:random")]
    plan = SeriesPlan(
        GAME,
        bots,
        2,
        secret=practice_secret(2),
        settings=MatchSettings(decision_ms=5000),
        replays=replays,
        sandbox=sandbox,
    )
    outcomes = asyncio.run(run_series(plan))
    assert [o.forfeits for o, _ in outcomes] == [[], []]
    # Its log is named after its class's name ("mine"), not after bot.py.
    return (replays / "logs" / "0-mine.log").read_text()


def test_the_venv_stands_apart(author: Author) -> None:
    """What the other tests rely on: neither environment has what the other has."""
    alone = subprocess.run(
        [author.python, "-c", "import botdep, grpc, arena_sdk"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert "the venv's own arena_sdk" in alone.stderr
    referee = subprocess.run(
        [sys.executable, "-c", "import botdep"], check=False, capture_output=True
    )
    assert referee.returncode != 0


@pytest.mark.timeout(120)
def test_a_bot_of_several_files_runs_in_its_own_folder(author: Author, tmp_path: Path) -> None:
    log = play(str(author.bot), tmp_path)
    assert f"cwd={author.folder} python={sys.executable} opening=e4 dep=none" in log


@pytest.mark.timeout(120)
def test_a_bot_on_its_own_interpreter_has_its_dependencies_and_arenas_sdk(
    author: Author, tmp_path: Path
) -> None:
    log = play(f"{author.bot}@{author.python}", tmp_path)
    assert f"cwd={author.folder} python={author.python} opening=e4 dep=4.2" in log


@needs_bwrap
@pytest.mark.timeout(120)
def test_in_bubblewrap_too(author: Author, tmp_path: Path) -> None:
    sandbox = Sandbox(tier=Tier.BUBBLEWRAP)
    log = play(str(author.bot), tmp_path / "own", sandbox)
    assert f"cwd={author.folder} python={sys.executable} opening=e4 dep=none" in log
    log = play(f"{author.bot}@{author.python}", tmp_path / "venv", sandbox)
    assert f"cwd={author.folder} python={author.python} opening=e4 dep=4.2" in log


def test_an_interpreter_that_cannot_run_the_sdk_is_refused_clearly(tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(BOT)
    bare = make_venv(tmp_path / "bare", grpc=False)
    with pytest.raises(SpecError, match=r"cannot import what the SDK needs: grpc .*pip install"):
        parse_spec(f"{bot}@{bare}")
    with pytest.raises(SpecError, match="is not an executable file"):
        parse_spec(f"{bot}@{tmp_path / 'nowhere' / 'python'}")
    with pytest.raises(SpecError, match="did not answer as a Python interpreter"):
        parse_spec(f"{bot}@{shutil.which('true')}")
    with pytest.raises(SpecError, match="example bots run on arena's own Python"):
        parse_spec(f"example:random@{sys.executable}")
    failed = subprocess.run(
        [
            sys.executable,
            "-m",
            "tournaments.cli.arena_app",
            "play",
            "opposing-force",
            "--bot",
            f"{bot}@{bare}",
            "--bot",
            "example:random",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert failed.returncode == 2 and "Traceback" not in failed.stderr
    assert failed.stderr.startswith("error: ") and "grpc" in failed.stderr


def test_a_tournament_names_a_bots_interpreter_from_its_own_folder(author: Author) -> None:
    top = author.folder.parent
    toml = top / "cup.toml"
    toml.write_text(
        'name = "cup"\ngame = "opposing-force"\n'
        '[[bots]]\nspec = "my bot/bot.py"\npython = "venv/bin/python"\n'
        '[[bots]]\nspec = "example:random"\n[format]\nkind = "round-robin"\n'
    )
    config = load_config(toml)
    assert config.bot_specs()[0] == f"{author.bot}@{os.path.abspath(author.python)}"
    assert parse_spec(config.bot_specs()[0]).argv[0] == str(author.python)
    docker = toml.read_text() + '[sandbox]\ntier = "docker"\n'
    toml.write_text(docker)
    with pytest.raises(ConfigError, match="docker runs every bot on its image's Python"):
        load_config(toml)
    toml.write_text(
        docker.replace('spec = "my bot/bot.py"', 'spec = "cmd:./mine"').replace("docker", "none")
    )
    with pytest.raises(ConfigError, match="only a Python file bot"):
        load_config(toml)


def test_the_docker_tier_refuses_a_bots_own_interpreter(author: Author) -> None:
    argv = parse_spec(f"{author.bot}@{author.python}").argv
    env = {"ARENA_ADDRESS": "unix:/tmp/arena-x/referee.sock"}
    with pytest.raises(SandboxError, match="image's Python"):
        container_spec(Sandbox(tier=Tier.DOCKER), argv, env)
    plain = parse_spec(str(author.bot))
    spec = container_spec(Sandbox(tier=Tier.DOCKER), plain.argv, env, plain.workdir)
    assert spec.working_dir == str(author.folder)
    assert spec.volumes[str(author.folder)]["mode"] == "ro"
