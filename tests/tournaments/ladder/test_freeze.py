"""The ladder's freeze through a real `arena ladder serve`: real archives over real HTTP and
`arena author submit`, real remote-bot and author registrations, the real CLI. Before the freeze
each author action is accepted (the control); after it each is refused with one line naming the
freeze time, while the operator's still goes through and is logged; a freeze set in ladder.toml
for a few seconds ahead takes effect at its time with no restart, and serve pins the versions."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.tournaments.ladder.contest_kit import audit, call, new_author, said, sql
from tests.tournaments.ladder.upload_kit import packed, python_bot, upload
from tests.tournaments.web.harness import ARENA, arena
from tests.tournaments.web.ladder_harness import make_ladder, serving
from tournaments.config import ConfigError
from tournaments.ladder.config_file import load_ladder
from tournaments.ladder.database import LadderStore
from tournaments.ladder.freeze import Frozen, refuse_if_frozen, set_freeze

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="uploads run in bwrap"),
]
PINNED = "SELECT COUNT(*) FROM frozen"
FROZEN_LINE = re.compile(
    r"the ladder froze at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00: (\w| )+ is closed "
    r"\(the operator may still act\)"
)


def invite_ladder(folder: Path) -> dict[str, str]:
    tokens = make_ladder(
        folder, {"house-first": "example:first"}, registration="invite", bots_per_author=4
    )
    return tokens


def test_after_the_freeze_no_author_acts_and_the_operator_does_logged(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    folder.mkdir()
    tokens = invite_ladder(folder)
    alice = new_author(folder, "alice", why="entered the contest")
    made = arena("ladder", "author", "invite", folder, "--why", "the spring round")
    invite = made.stdout.splitlines()[1].strip()
    archive = packed(python_bot(tmp_path / "bot"))
    env = dict(os.environ, ARENA_AUTHOR_TOKEN=alice)
    with serving(folder) as served:
        url = served.url
        # The control: before the freeze every one of them is accepted.
        assert upload(url, alice, "alice-py", archive)[0] == 202
        status, body = call(f"{url}/api/remote-bots", alice, {"name": "alice-far"})
        assert status == 201, body
        status, body = call(f"{url}/api/authors", invite, {"name": "bob"})
        assert status == 201, body
        frozen = arena("ladder", "freeze", folder, "--why", "the deadline")
        assert frozen.returncode == 0, frozen.stderr
        assert frozen.stdout.startswith("the ladder froze at "), frozen.stdout
        # After it: each is refused, 403, one line naming the time.
        status, body = upload(url, alice, "alice-py", archive)
        assert status == 403 and FROZEN_LINE.fullmatch(body["error"]), body
        assert "submitting a version" in body["error"]
        status, body = upload(url, alice, "alice-new", archive)  # a new bot as well
        assert status == 403 and FROZEN_LINE.fullmatch(body["error"]), body
        sent = subprocess.run(
            [*ARENA, "author", "submit", url, "alice-py", str(tmp_path / "bot")],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert sent.returncode != 0 and "the ladder froze at" in sent.stderr, sent
        assert "Traceback" not in sent.stderr and len(sent.stderr.strip().splitlines()) == 1
        status, body = call(f"{url}/api/remote-bots", alice, {"name": "alice-far"})
        assert status == 403 and "registering a remote bot" in body["error"], body
        status, body = call(f"{url}/api/remote-bots", tokens["ladder"], {"name": "house-far"})
        assert status == 403 and FROZEN_LINE.fullmatch(body["error"]), body
        status, body = call(f"{url}/api/authors", invite, {"name": "carol"})
        assert status == 403 and "registering as an author" in body["error"], body
        # The operator still acts, over HTTP and on the command line.
        status, body = call(
            f"{url}/api/bots/house-first/update",
            tokens["operator"],
            {"spec": "example:random", "why": "a stronger baseline"},
        )
        assert status == 201 and body == {"version": "house-first@2"}, body
        paused = arena("ladder", "pause", folder, "--name", "alice-far", "--why", "never came")
        assert paused.returncode == 0, paused.stderr
        # The audit log, as the operator reads it over HTTP: 401 for anyone else.
        assert call(f"{url}/api/audit")[0] == 401
        assert call(f"{url}/api/audit", alice)[0] == 401
        status, log = call(f"{url}/api/audit", tokens["operator"])
        assert status == 200
    entries = audit(folder)
    assert log["entries"] == entries[: len(log["entries"])]
    pinned = {"house-first": "house-first@1", "alice-far": "alice-far@1"}
    assert said(entries) == [
        ("operator", "bot added", "house-first", ""),
        ("operator", "author added", "alice", "entered the contest"),
        ("operator", "invite made", "the ladder", "the spring round"),
        ("author alice", "version submitted", "alice-py", ""),
        ("author alice", "bot added", "alice-far", ""),
        ("author bob", "author registered", "bob", ""),
        ("operator", "frozen", "the ladder", "the deadline"),
        ("operator", "frozen", "the ladder", "the freeze came"),
        ("operator", "bot updated", "house-first", "a stronger baseline"),
        ("operator", "bot paused", "alice-far", "never came"),
    ]
    # alice-py is pinned when its build and validation ended before the freeze, as they may on
    # an idle machine; building still, it has no live version to pin.
    frozen = dict(sql(folder, "SELECT bot, version FROM frozen"))
    assert entries[7]["detail"]["pinned"] == frozen
    assert pinned.items() <= frozen.items() and set(frozen) <= {*pinned, "alice-py"}
    assert entries[3]["detail"]["version"] == "alice-py@1"
    assert [e["seq"] for e in entries] == list(range(1, len(entries) + 1))
    stamps = [e["at"] for e in entries]
    assert stamps == sorted(stamps)
    # Refused attempts change nothing: alice has one version, there is no carol.
    assert sql(folder, "SELECT key FROM versions WHERE bot LIKE 'alice%' ORDER BY key") == [
        ("alice-far@1",),
        ("alice-py@1",),
    ]
    assert sql(folder, "SELECT name FROM authors ORDER BY name") == [
        ("alice",),
        ("bob",),
        ("house",),
    ]


def test_a_freeze_set_ahead_in_the_file_takes_effect_at_its_time(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    folder.mkdir()
    make_ladder(folder, {"house-first": "example:first", "house-random": "example:random"})
    alice = new_author(folder, "alice")
    archive = packed(python_bot(tmp_path / "bot"))
    at = (datetime.now(UTC) + timedelta(seconds=12)).replace(microsecond=0)
    path = folder / "ladder.toml"
    path.write_text(path.read_text() + f"\n[contest]\nfreeze_at = {at.isoformat()}\n")
    with serving(folder) as served:
        # The control: before its time the ladder takes submissions and pins nothing.
        assert upload(served.url, alice, "alice-py", archive)[0] == 202
        assert sql(folder, "SELECT COUNT(*) FROM frozen") == [(0,)]
        while datetime.now(UTC) < at + timedelta(seconds=1):
            time.sleep(0.2)
        status, body = upload(served.url, alice, "alice-py", archive)
        assert status == 403 and f"froze at {at.isoformat()}" in body["error"], body
        served.wait_for("serve's pins", lambda: sql(folder, PINNED)[0][0] > 0)
    pins = dict(sql(folder, "SELECT bot, version FROM frozen"))
    # alice-py is pinned when its validation ended before the freeze (a loaded machine: not)
    assert pins.pop("alice-py", "alice-py@1") == "alice-py@1"
    assert pins == {"house-first": "house-first@1", "house-random": "house-random@1"}
    taken = [e for e in audit(folder) if e["action"] == "frozen"]
    assert [(e["who"], e["detail"]["at"]) for e in taken] == [("serve", at.isoformat())]


def test_the_earlier_freeze_wins_and_a_later_one_cannot_put_it_off(tmp_path: Path) -> None:
    make_ladder(tmp_path, {"house-first": "example:first"})
    config = load_ladder(tmp_path)
    store = LadderStore.open(tmp_path)
    soon = datetime.now(UTC) + timedelta(hours=1)
    set_freeze(store, config, soon, "first")
    refuse_if_frozen(store, config, "submitting")  # the control: an hour ahead, still open
    later = arena("ladder", "freeze", tmp_path, "--at", (soon + timedelta(days=1)).isoformat())
    assert later.returncode == 0 and soon.isoformat(timespec="seconds") in later.stdout
    now = arena("ladder", "freeze", tmp_path, "--at", "2020-01-01T00:00:00Z")
    assert now.stdout.strip() == "the ladder froze at 2020-01-01T00:00:00+00:00", now.stdout
    with pytest.raises(Frozen, match="froze at 2020-01-01T00:00:00"):
        refuse_if_frozen(store, config, "submitting")
    # `ladder init` wrote the [contest] table commented; uncommented, it reads; a time with no
    # offset is refused, naming the key.
    path = tmp_path / "ladder.toml"
    text = path.read_text()
    assert "# [contest]" in text and "# freeze_at = " in text and "# release = " in text
    path.write_text(re.sub(r"(?m)^# (\[contest\]|freeze_at = |release = )", r"\1", text))
    assert load_ladder(tmp_path).contest.freeze_at is not None
    path.write_text(text + "\n[contest]\nfreeze_at = 2026-12-01T18:00:00\n")
    with pytest.raises(ConfigError, match=r"contest\.freeze_at"):
        load_ladder(tmp_path)
    path.write_text(text)
    bad = arena("ladder", "freeze", tmp_path, "--at", "next tuesday")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "--at 'next tuesday': an ISO 8601 time" in bad.stderr
    store.close()
