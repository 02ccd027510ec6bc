"""Uploaded versions through a real `arena ladder serve`: real archives over real HTTP (and
`arena author submit`), real builds in bubblewrap, real validation games against the random bot,
then rated matches. A Python bot and a C program built by `cc` go live and play; a bot that
fails its check, one that crashes in validation and one whose build fails each end `failed`
with the reason; serve killed with SIGKILL during a build loses nothing."""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.tournaments.ladder.upload_kit import (
    BROKEN_C,
    CRASHING_BOT,
    ILLEGAL_BOT,
    PLAIN_BOT,
    bot_folder,
    c_bot,
    packed,
    python_bot,
    upload,
    version_rows,
)
from tests.tournaments.web.harness import ARENA
from tests.tournaments.web.ladder_harness import (
    WAIT_S,
    Served,
    finished,
    make_ladder,
    serving,
    set_in_table,
)
from tournaments.ladder import authors
from tournaments.ladder.database import LadderStore

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="uploads build and run in bwrap"),
]
CC = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) here")


def uploads_ladder(folder: Path, **submissions: object) -> None:
    """A two-seat ladder with a house random bot; [submissions] as given."""
    make_ladder(folder, {"house-random": "example:random"})
    set_in_table(folder / "ladder.toml", "submissions", {"validation_games": 2, **submissions})


def author(folder: Path, name: str) -> str:
    store = LadderStore.open(folder)
    try:
        return authors.add_author(store, name)
    finally:
        store.close()


def settled(folder: Path, key: str) -> bool:
    return version_rows(folder).get(key, ("", ""))[0] in ("live", "failed")


@CC
def test_a_python_bot_and_a_c_program_go_live_and_play_rated_matches(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    folder.mkdir()
    uploads_ladder(folder)
    alice, bob = author(folder, "alice"), author(folder, "bob")
    py_bot = python_bot(tmp_path / "py")
    with serving(folder) as served:
        # Alice with the CLI, her token in the environment (never on its command line).
        env = dict(os.environ, ARENA_AUTHOR_TOKEN=alice)
        sent = subprocess.run(
            [*ARENA, "author", "submit", served.url, "alice-py", str(py_bot)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert sent.returncode == 0, sent.stderr
        assert re.match(
            r"submitted alice-py@1 \(\d+ bytes, files [0-9a-f]{12}\.\.\.\): building", sent.stdout
        ), sent.stdout
        # Bob's C program over plain HTTP.
        status, body = upload(served.url, bob, "bob-c", packed(c_bot(tmp_path / "c")))
        assert status == 202 and body["version"] == "bob-c@1", body
        assert body["status"] == "building"
        for key in ("alice-py@1", "bob-c@1"):
            served.wait_for(f"{key} settled", functools.partial(settled, folder, key))
        rows = version_rows(folder)
        assert rows["alice-py@1"] == ("live", "live: played 2 validation games clean"), rows
        assert rows["bob-c@1"][0] == "live", rows
        assert (folder / "builds" / "bob-c@1" / "bot" / "chooser").is_file()  # built by cc
        served.wait_for(
            "rated matches of both",
            lambda: finished(folder, "alice-py@1") >= 2 and finished(folder, "bob-c@1") >= 2,
        )
        assert (folder / "builds" / "bob-c@1" / "build.log").is_file()  # kept for its author
    # Rated: the ratings moved, and no validation game is among the ladder's matches.
    store = LadderStore.open(folder)
    rated = dict(store.db.execute("SELECT key, matches FROM versions").fetchall())
    store.close()
    assert rated["alice-py@1"] >= 1 and rated["bob-c@1"] >= 1, rated


@CC
def test_a_failed_check_a_crash_in_validation_and_a_failed_build_each_end_failed(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ladder"
    folder.mkdir()
    uploads_ladder(folder)
    token = author(folder, "carol")
    path = folder / "ladder.toml"
    path.write_text(path.read_text().replace("bots_per_author = 1", "bots_per_author = 4"))
    bots = {
        "illegal": python_bot(tmp_path / "illegal", ILLEGAL_BOT),
        "crashing": python_bot(tmp_path / "crashing", CRASHING_BOT),
        "unbuilt": bot_folder(
            tmp_path / "unbuilt",
            {"bot.py": ILLEGAL_BOT, "broken.c": BROKEN_C},
            'python = "bot.py"\nbuild = ["cc", "-o", "broken", "broken.c"]\n',
        ),
    }
    with serving(folder) as served:
        for name, source in bots.items():
            code, body = upload(served.url, token, name, packed(source))
            assert code == 202, body
        for key in ("illegal@1", "crashing@1", "unbuilt@1"):
            served.wait_for(f"{key} settled", functools.partial(settled, folder, key))
        time.sleep(1.5)  # matches go on meanwhile: none of these ever sits at a table
        rows = version_rows(folder)
        assert finished(folder, "illegal@1") == finished(folder, "crashing@1") == 0
    status, reason = rows["illegal@1"]
    assert status == "failed" and "chose an action that was not legal" in reason, reason
    status, reason = rows["crashing@1"]
    assert status == "failed" and "crashed or closed its connection" in reason, reason
    assert "crashing on purpose" in reason  # its log's last lines
    status, reason = rows["unbuilt@1"]
    assert status == "failed" and reason.startswith("build: the build failed"), reason
    assert "broken.c" in reason and "error" in reason  # the compiler's last lines
    assert not (folder / "builds" / "unbuilt@1" / "bot").exists()  # nothing of it kept
    # A bot whose only version failed takes none of its author's places: it is paused.
    store = LadderStore.open(folder)
    paused = dict(store.db.execute("SELECT name, status FROM bots WHERE author = 'carol'"))
    store.close()
    assert paused == {"illegal": "paused", "crashing": "paused", "unbuilt": "paused"}


SLOW_BUILD = 'python = "bot.py"\nbuild = ["sh", "-c", "sleep 4 && echo built > built.txt"]\n'


@pytest.mark.parametrize("stage", ["building", "validating"])
def test_serve_killed_during_a_build_or_a_validation_loses_nothing(
    tmp_path: Path, stage: str
) -> None:
    folder = tmp_path / "ladder"
    folder.mkdir()
    uploads_ladder(folder)
    token = author(folder, "dave")
    if stage == "building":
        source = bot_folder(tmp_path / "slow", {"bot.py": PLAIN_BOT}, SLOW_BUILD)
    else:  # no build; its process takes 4 s to start, in every validation game's series
        slow = "import time\ntime.sleep(4)\n" + PLAIN_BOT
        source = bot_folder(tmp_path / "slow", {"bot.py": slow}, 'python = "bot.py"\n')
    output = folder / "serve-1.out"
    with output.open("ab") as out:
        process = subprocess.Popen([*ARENA, "ladder", "serve", str(folder)], stdout=out, stderr=out)
    first = Served(process, "", output)
    try:
        first.wait_for("the page", lambda: "its page is at http" in first.said())
        found = re.search(r"its page is at (http://127\.0\.0\.1:\d+)/", first.said())
        assert found
        status, body = upload(found.group(1), token, "slow", packed(source))
        assert status == 202, body
        first.wait_for(stage, lambda: version_rows(folder)["slow@1"][0] == stage)
        time.sleep(1.0)  # well into it
        assert version_rows(folder)["slow@1"][0] == stage
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    assert version_rows(folder)["slow@1"][0] == stage  # as the kill left it
    with serving(folder) as served:
        served.wait_for("slow@1 settled", lambda: settled(folder, "slow@1"), WAIT_S)
        assert version_rows(folder)["slow@1"][0] == "live", version_rows(folder)
        if stage == "building":
            assert (folder / "builds" / "slow@1" / "bot" / "built.txt").read_text() == "built\n"
        served.wait_for("a rated match", lambda: finished(folder, "slow@1") >= 1)


PROBER = """import os
from arena_sdk.bot import Bot

for path in {paths}:
    try:
        with open(path, "rb") as file:
            file.read(1)
    except OSError:
        continue
    print("LEAK: read", path, flush=True)
    os._exit(9)


class Prober(Bot):
    name = "prober"

    def act(self, observation, legal_actions):
        return 0
"""


def test_an_uploaded_bot_reads_nothing_of_the_ladder_nor_of_another_version(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ladder"
    folder.mkdir()
    uploads_ladder(folder)
    eve, mallory = author(folder, "eve"), author(folder, "mallory")
    path = folder / "ladder.toml"
    path.write_text(path.read_text().replace("bots_per_author = 1", "bots_per_author = 2"))
    with serving(folder) as served:
        code, body = upload(served.url, eve, "eves", packed(python_bot(tmp_path / "eve")))
        assert code == 202, body
        served.wait_for("eves@1", functools.partial(settled, folder, "eves@1"))
        eves = folder / "versions" / body["content_hash"] / "bot.py"
        secrets = [folder / "ladder.toml", folder / "ladder.sqlite", eves]
        prober = {"bot.py": PROBER.format(paths=repr([str(p) for p in secrets]))}
        source = bot_folder(tmp_path / "prober", prober, 'python = "bot.py"\n')
        code, body = upload(served.url, mallory, "probe", packed(source))
        assert code == 202, body
        # The control: the same probe of a file it may read (its own) is caught and said.
        control = {"bot.py": PROBER.format(paths="[__file__]")}
        source = bot_folder(tmp_path / "control", control, 'python = "bot.py"\n')
        code, body = upload(served.url, mallory, "probe-control", packed(source))
        assert code == 202, body
        for key in ("probe@1", "probe-control@1"):
            served.wait_for(key, functools.partial(settled, folder, key))
    rows = version_rows(folder)
    assert rows["probe@1"][0] == "live", rows["probe@1"]
    status, reason = rows["probe-control@1"]
    own = folder / "versions" / body["content_hash"] / "bot.py"
    assert status == "failed" and f"LEAK: read {own}" in reason, reason


def test_a_live_upload_is_not_seated_once_the_tier_is_lowered_below_bubblewrap(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ladder"
    folder.mkdir()
    uploads_ladder(folder)
    token = author(folder, "fay")
    with serving(folder) as served:
        code, body = upload(served.url, token, "fays", packed(python_bot(tmp_path / "fay")))
        assert code == 202, body
        served.wait_for("a rated match", lambda: finished(folder, "fays@1") >= 1)
    added = subprocess.run(
        [*ARENA, "ladder", "add", str(folder), "--name", "house-first", "--spec", "example:first"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert added.returncode == 0, added.stderr
    path = folder / "ladder.toml"
    confined = path.read_text()
    path.write_text(confined.replace('tier = "bubblewrap"', 'tier = "none"'))
    played = finished(folder, "fays@1")
    with serving(folder) as served:
        start = finished(folder)
        served.wait_for("house matches", lambda: finished(folder) >= start + 4)
        assert finished(folder, "fays@1") == played  # the house plays on; the upload does not
    path.write_text(confined)  # the control: back at bubblewrap, it is seated again
    with serving(folder) as served:
        served.wait_for("its matches again", lambda: finished(folder, "fays@1") > played)
