"""`arena ladder final` on a ladder that really played (a real serve, an author's upload built and
validated in bubblewrap, house bots), frozen with the real CLI: refused before the freeze (the
control), then a folder holding the top bots in rating order at the freeze, one per author, the
uploaded version's code copied in, entrants.json, a remote bot left out with a line; and `arena
tournament run FINAL_DIR` plays it to the end, as a round robin and as a swiss."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest

from tests.tournaments.ladder.contest_kit import new_author, sql
from tests.tournaments.ladder.upload_kit import PLAIN_BOT, packed, python_bot, upload
from tests.tournaments.web.harness import arena
from tests.tournaments.web.ladder_harness import finished, make_ladder, serving, set_in_table
from tournaments.config import load_config
from tournaments.contest import Entrants

# Alice's bot looks around the final's folder as it starts, and says what it found.
SNOOP = (
    """import os, sys
FINAL = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for what, look in (("entrants", lambda: open(os.path.join(FINAL, "entrants.json")).read(8)),
                   ("others", lambda: sorted(os.listdir(os.path.join(FINAL, "bots"))))):
    try:
        print("SNOOP", what, "read", look(), file=sys.stderr, flush=True)
    except OSError as exc:
        print("SNOOP", what, "refused", type(exc).__name__, file=sys.stderr, flush=True)
"""
    + PLAIN_BOT
)


def snooped(final: Path) -> set[str]:
    """What alice's bot said of the final's folder, in every log of the run."""
    lines = set()
    for log in (final / "run" / "logs").rglob("*"):
        if log.is_file():
            lines |= {ln for ln in log.read_text(errors="replace").splitlines() if "SNOOP" in ln}
    return lines


pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="uploads run in bwrap"),
]


def test_the_final_holds_the_frozen_top_in_order_and_plays(tmp_path: Path) -> None:
    ladder = tmp_path / "ladder"
    ladder.mkdir()
    make_ladder(
        ladder,
        {"house-first": "example:first", "house-random": "example:random"},
        bots_per_author=2,
    )
    set_in_table(ladder / "ladder.toml", "submissions", {"validation_games": 2})
    alice = new_author(ladder, "alice")
    new_author(ladder, "bob")
    for name in ("carol", "dave"):  # one team: one party, which enters one bot
        assert (
            arena("ladder", "author", "add", ladder, "--name", name, "--team", "red").returncode
            == 0
        )
    for args in (
        ("--name", "carol-r", "--spec", "example:random", "--author", "carol"),
        ("--name", "dave-f", "--spec", "example:first", "--author", "dave"),
        ("--name", "bob-far", "--remote", "--author", "bob"),
    ):
        assert arena("ladder", "add", ladder, *args).returncode == 0
    with serving(ladder) as served:
        archive = packed(python_bot(tmp_path / "py", SNOOP))
        status, body = upload(served.url, alice, "alice-py", archive)
        assert status == 202, body
        served.wait_for(
            "alice-py live and every bot rated",
            lambda: all(
                finished(ladder, f"{bot}@1") >= 2
                for bot in ("alice-py", "carol-r", "dave-f", "house-first", "house-random")
            ),
        )
    out = tmp_path / "final"
    refused = arena("ladder", "final", ladder, "--top", "4", "--format", "round-robin", "-o", out)
    assert refused.returncode != 0 and not out.exists()  # the control: before the freeze
    assert refused.stderr.strip() == "error: the ladder is not frozen: `arena ladder freeze` first"
    assert arena("ladder", "freeze", ladder).returncode == 0
    written = arena(
        "ladder", "final", ladder, "--top", "5", "--format", "round-robin", "-o", out, "--why", "go"
    )
    assert written.returncode == 0, written.stderr
    assert "left out: bob-far: a remote bot, which a tournament cannot start" in written.stdout
    assert "its author's (or team's) better bot enters" in written.stdout

    # Seed order: the conservative rating at the freeze; team red enters its better bot only.
    pins = sql(ladder, "SELECT bot, mu - 3 * sigma FROM frozen ORDER BY mu - 3 * sigma DESC, bot")
    expected: list[str] = []
    red = {"carol-r", "dave-f"}
    for bot, _ in pins:
        if bot != "bob-far" and not (bot in red and red & set(expected)):
            expected.append(bot)
    config = load_config(out / "tournament.toml")
    assert config.bot_names() == expected and len(expected) == 4, (config.bot_names(), pins)
    assert config.name == "ladder-final" and config.game == "opposing-force"
    assert config.seed is None and config.sandbox.tier.value == "bubblewrap"
    raw = tomllib.loads((out / "tournament.toml").read_text())
    spec = next(b["spec"] for b in raw["bots"] if b["name"] == "alice-py")
    assert spec == "bots/alice-py/bot.py"  # inside the final's folder, none of the ladder's
    assert str(ladder) not in (out / "tournament.toml").read_text()
    digest = sql(ladder, "SELECT content_hash FROM versions WHERE key = 'alice-py@1'")[0][0]
    copied = (out / "bots" / "alice-py" / "bot.py").read_text()
    assert copied == (ladder / "versions" / digest / "bot.py").read_text()
    entrants = Entrants.model_validate_json((out / "entrants.json").read_text())
    assert [e.bot for e in entrants.entrants] == config.bot_names()
    assert [e.seed for e in entrants.entrants] == [1, 2, 3, 4]
    by_bot = {e.bot: e for e in entrants.entrants}
    assert by_bot["alice-py"].token_sha256 == hashlib.sha256(alice.encode()).hexdigest()
    assert by_bot["alice-py"].version == digest
    assert [e.rating for e in entrants.entrants] == sorted(
        (e.rating for e in entrants.entrants), reverse=True
    )
    logged = json.loads(arena("ladder", "audit", ladder, "--json").stdout)["entries"][-1]
    assert (logged["action"], logged["why"], logged["detail"]["bots"]) == (
        "final written",
        "go",
        expected,
    )

    played = arena("tournament", "run", out, "--no-progress", timeout=240)
    assert played.returncode == 0, played.stdout + played.stderr
    for bot in expected:
        assert bot in played.stdout
    seen = snooped(out)
    assert any("SNOOP entrants refused" in ln for ln in seen), seen
    assert any("SNOOP others read ['alice-py']" in ln for ln in seen), seen  # its own only
    assert not any("SNOOP entrants read" in ln for ln in seen), seen

    # A swiss of one round, and the control: the same final with no sandbox (which the final
    # never writes for uploaded code) shows alice's bot the entrants (their token hashes).
    swiss = tmp_path / "swiss"
    args = ("--top", "4", "--format", "swiss", "--rounds", "1", "-o", swiss)
    assert arena("ladder", "final", ladder, *args).returncode == 0
    file = swiss / "tournament.toml"
    file.write_text(re.sub(r'(?m)^tier = "bubblewrap"$', 'tier = "none"', file.read_text()))
    played = arena("tournament", "run", swiss, "--no-progress", timeout=240)
    assert played.returncode == 0, played.stdout + played.stderr
    seen = snooped(swiss)
    assert any("SNOOP entrants read" in ln for ln in seen), seen

    # The brackets: a knockout of the top 3 (seed 1 has a bye) and a double elimination of
    # the top 4, each played to its champion, released as the ladder releases.
    assert arena("ladder", "release", ladder, "--to", "participants").returncode == 0
    for kind, top in (("knockout", "3"), ("double-elimination", "4")):
        bracket = tmp_path / kind
        written = arena("ladder", "final", ladder, "--top", top, "--format", kind, "-o", bracket)
        assert written.returncode == 0, written.stderr
        contest = tomllib.loads((bracket / "tournament.toml").read_text())["contest"]
        assert contest == {"release": "participants", "entrants": "entrants.json"}
        played = arena("tournament", "run", bracket, "--no-progress", timeout=240)
        assert played.returncode == 0, played.stdout + played.stderr
        shown = arena("tournament", "standings", bracket / "run", "--json")
        drawn = json.loads(shown.stdout)["bracket"]
        assert drawn["format"] == kind and drawn["champion"] in expected[: int(top)]
        if kind == "knockout":
            assert drawn["rounds"][0]["tables"][0]["status"] == "bye"
            assert drawn["rounds"][0]["tables"][0]["entrants"][0]["bot"] == expected[0]


def test_run_takes_a_folder_holding_tournament_toml_and_no_other(tmp_path: Path) -> None:
    refused = arena("tournament", "run", tmp_path)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert refused.stderr.strip() == (
        f"error: {tmp_path} holds no tournament.toml: give the tournament file"
    )
