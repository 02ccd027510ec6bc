"""Tests referee.bots.launcher's `cmd@FOLDER:COMMAND` SPEC and what referee.bots.sandbox makes
of its FOLDER: the command starts there (its relative paths hold), at every tier; bubblewrap
shows the folder read-only, and never one the sandbox keeps from bots (a ladder's own folder);
docker mounts it read-only and starts the container in it. Real bubblewrap, real cat and sh;
each beside its control (a plain cmd: SPEC, tier none, or the guard off)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from referee.bots import sandbox
from referee.bots.launcher import SpecError, parse_spec, python_file_spec
from referee.bots.sandbox import Sandbox, SandboxError, Tier, confine, private_socket, release
from referee.bots.sandbox_docker import container_spec
from tests.referee.bots.test_uploaded_homes import SECRET, needs_bwrap, uploads


def run(box: Sandbox, spec: str) -> subprocess.CompletedProcess[str]:
    """The SPEC's command, confined in box, started in the folder its launch names."""
    bot = parse_spec(spec)
    path = private_socket(box)
    socket_folder = path.parent if path is not None else None
    listener = socket.socket(socket.AF_UNIX)
    if path is not None:
        listener.bind(str(path))  # the referee's socket: the sandbox shows it to the bot
    env = {"ARENA_ADDRESS": f"unix:{path}", "PATH": os.environ["PATH"]}
    try:
        launch = confine(box, bot.argv, env, bot.workdir)
        try:
            return subprocess.run(
                launch.argv,
                env=launch.env,
                cwd=launch.workdir,
                capture_output=True,
                text=True,
                timeout=30,
            )
        finally:
            release(launch)
    finally:
        listener.close()
        if socket_folder is not None:
            shutil.rmtree(socket_folder, ignore_errors=True)


def test_a_cmd_at_folder_spec_names_its_folder_and_its_command() -> None:
    bot = parse_spec("cmd@/srv/bots/mine:python3 bot.py --fast")
    assert bot.workdir == Path("/srv/bots/mine")
    assert bot.argv == ("python3", "bot.py", "--fast") and bot.name == "python3"
    assert python_file_spec("cmd@/srv/bots/mine:python3 bot.py") is None  # not a Python file
    assert parse_spec("cmd:python3 bot.py").workdir is None  # the control: the referee's


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("cmd@bots/mine:./mybot", "needs an absolute FOLDER, not 'bots/mine'"),
        ("cmd@/srv/bots/mine", "give cmd@FOLDER:COMMAND"),
        ("cmd@/srv/bots/mine:  ", "needs a command"),
        ("cmd@/srv/bots/mine:python3 'bot.py", "No closing quotation"),
        ("cmd:python3 'bot.py", "No closing quotation"),
    ],
)
def test_a_cmd_at_folder_spec_that_is_wrong_is_named_on_one_line(spec: str, said: str) -> None:
    with pytest.raises(SpecError) as refused:
        parse_spec(spec)
    assert said in str(refused.value) and "\n" not in str(refused.value)


@needs_bwrap
@pytest.mark.timeout(60)
def test_a_cmd_at_folder_bot_reads_its_files_by_relative_paths(tmp_path: Path) -> None:
    box, mine, _ = uploads(tmp_path)
    own = run(box, f"cmd@{mine}:/bin/cat bot.txt")
    assert (own.returncode, own.stdout) == (0, "my bot\n"), own.stderr


@needs_bwrap
@pytest.mark.timeout(60)
def test_control_a_plain_cmd_bot_starts_elsewhere_and_finds_nothing(tmp_path: Path) -> None:
    box, _, _ = uploads(tmp_path)
    lost = run(box, "cmd:/bin/cat bot.txt")
    assert lost.returncode != 0 and "No such file" in lost.stderr, lost


@needs_bwrap
@pytest.mark.timeout(60)
def test_a_cmd_at_folder_bot_cannot_write_in_its_folder(tmp_path: Path) -> None:
    box, mine, _ = uploads(tmp_path)
    wrote = run(box, f"cmd@{mine}:/bin/sh -c 'echo changed > bot.txt; echo x > new.txt'")
    assert wrote.returncode != 0 and "Read-only file system" in wrote.stderr, wrote
    assert (mine / "bot.txt").read_text() == "my bot\n" and not (mine / "new.txt").exists()


@pytest.mark.timeout(60)
def test_control_at_tier_none_the_same_bot_writes_in_its_folder(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    wrote = run(Sandbox(tier=Tier.NONE), f"cmd@{mine}:/bin/sh -c 'echo x > new.txt'")
    assert wrote.returncode == 0, wrote.stderr
    assert (mine / "new.txt").read_text() == "x\n"


@needs_bwrap
@pytest.mark.timeout(60)
def test_a_cmd_at_folder_cannot_name_a_folder_kept_from_bots(tmp_path: Path) -> None:
    box, _, _ = uploads(tmp_path)
    ladder = tmp_path / "ladder"
    (ladder / "ladder.toml").write_text("invite = 'secret'\n")
    (ladder / "ladder.toml").chmod(0o644)
    with pytest.raises(SandboxError, match=r"a folder kept from bots"):
        run(box, f"cmd@{ladder}:/bin/cat ladder.toml")


@needs_bwrap
@pytest.mark.timeout(60)
def test_control_a_folder_not_kept_from_bots_is_read(tmp_path: Path) -> None:
    box, _, _ = uploads(tmp_path)
    ladder = tmp_path / "ladder"
    (ladder / "ladder.toml").write_text("invite = 'secret'\n")
    (ladder / "ladder.toml").chmod(0o644)
    read = run(box.model_copy(update={"hidden": ()}), f"cmd@{ladder}:/bin/cat ladder.toml")
    assert read.stdout == "invite = 'secret'\n", read.stderr


@needs_bwrap
@pytest.mark.timeout(60)
def test_an_argument_naming_a_rivals_home_from_its_folder_is_refused(tmp_path: Path) -> None:
    """A manifest's arguments are the author's: relative ones are taken from the bot's folder,
    and one that leads into another upload's folder is refused, not bound."""
    box, mine, _ = uploads(tmp_path)
    with pytest.raises(SandboxError, match=r"names 2 uploaded folders"):
        run(box, f"cmd@{mine}:/bin/cat ../rival@3/bot.txt")


@needs_bwrap
@pytest.mark.timeout(60)
def test_control_with_one_home_off_the_rivals_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box, mine, _ = uploads(tmp_path)
    monkeypatch.setattr(sandbox, "_one_home", lambda *_: None)
    read = run(box, f"cmd@{mine}:/bin/cat ../rival@3/bot.txt")
    assert read.stdout == SECRET + "\n", read.stderr


def test_docker_mounts_a_cmd_at_folder_read_only_and_starts_in_it(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    env = {"ARENA_ADDRESS": f"unix:{tmp_path}/sockets/referee.sock", "ARENA_TOKEN": "t"}
    box = Sandbox(tier=Tier.DOCKER)
    bot = parse_spec(f"cmd@{mine}:python3 bot.py")
    spec = container_spec(box, bot.argv, env, bot.workdir)
    assert spec.working_dir == str(mine) and spec.command == ["python3", "bot.py"]
    assert spec.volumes[str(mine)] == {"bind": str(mine), "mode": "ro"}
    # The control: as a plain cmd: SPEC, nothing of the folder is mounted, and it starts in /tmp.
    plain = parse_spec("cmd:python3 bot.py")
    spec = container_spec(box, plain.argv, env, plain.workdir)
    assert spec.working_dir == "/tmp" and str(mine) not in spec.volumes
