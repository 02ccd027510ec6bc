"""Tests referee.bots.sandbox's runnable folders (a ladder's uploaded versions and builds, inside
its hidden folder): a bot started from one sees its own home there and no other. An author
writes their bot's command line, and builds/NAME@N is a public name: an argument naming a
rival's folder would otherwise have it bound into the bot's view. Real bubblewrap, real cat;
the control, the guard off, reads the rival's file."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from referee.bots import sandbox
from referee.bots.sandbox import (
    Sandbox,
    SandboxError,
    Tier,
    confine,
    private_socket,
    probe_bubblewrap,
    release,
)

BWRAP_PROBLEM = probe_bubblewrap()
needs_bwrap = pytest.mark.skipif(
    BWRAP_PROBLEM is not None, reason=f"bubblewrap cannot run here: {BWRAP_PROBLEM}"
)
SECRET = "the rival's strategy"


def uploads(tmp_path: Path) -> tuple[Sandbox, Path, Path]:
    """A ladder folder (hidden) with two uploaded homes, as the uploads keep them: readable by
    the bots' uids, under a folder the ladder keeps from every bot."""
    ladder = tmp_path / "ladder"
    mine, theirs = ladder / "builds" / "mine@1", ladder / "builds" / "rival@3"
    for home, text in ((mine, "my bot\n"), (theirs, SECRET + "\n")):
        home.mkdir(parents=True)
        (home / "bot.txt").write_text(text)
        (home / "bot.txt").chmod(0o444)
        home.chmod(0o555)
    for folder in (tmp_path, ladder, ladder / "builds"):
        folder.chmod(0o755)
    box = Sandbox(tier=Tier.BUBBLEWRAP).hiding(ladder).running_from(ladder / "builds")
    return box, mine, theirs


def run(box: Sandbox, argv: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    path = private_socket(box)
    assert path is not None
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))  # the referee's socket: the sandbox shows it to the bot
    env = {"ARENA_ADDRESS": f"unix:{path}", "PATH": os.environ["PATH"]}
    try:
        launch = confine(box, argv, env)
        try:
            return subprocess.run(
                launch.argv, env=launch.env, capture_output=True, text=True, timeout=30
            )
        finally:
            release(launch)
    finally:
        listener.close()
        shutil.rmtree(path.parent, ignore_errors=True)


@needs_bwrap
@pytest.mark.timeout(60)
def test_a_bot_sees_its_own_home_and_no_rivals(tmp_path: Path) -> None:
    box, mine, theirs = uploads(tmp_path)
    own = run(box, ("/bin/cat", str(mine / "bot.txt")))
    assert (own.returncode, own.stdout) == (0, "my bot\n"), own.stderr
    with pytest.raises(SandboxError, match=r"names 2 uploaded folders .*: a bot sees its own"):
        run(box, ("/bin/cat", str(mine / "bot.txt"), str(theirs / "bot.txt")))


@needs_bwrap
@pytest.mark.timeout(60)
def test_control_without_the_guard_an_argument_shows_a_rivals_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "_one_home", lambda view, runnable: None)
    box, mine, theirs = uploads(tmp_path)
    read = run(box, ("/bin/cat", str(mine / "bot.txt"), str(theirs / "bot.txt")))
    assert SECRET in read.stdout, read.stderr
