"""Matchmaking knows authors: never two bots of one author, or of one team, at one table (3 and 4
seats, over many tables), the house's bots each a party of their own, and no table at all when
too few parties can play, the ladder's state saying why. The matchmaker alone, serve's table
making over a real SQLite state, and a real `arena ladder serve` read over HTTP; each guard
beside a control where it is off."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any, cast

import pytest

from tests.tournaments.web.harness import arena, get_json
from tests.tournaments.web.ladder_harness import count, serving
from tournaments.ladder import authors, roster
from tournaments.ladder.config_file import load_ladder, write_new_ladder
from tournaments.ladder.database import HOUSE, WAITING_META, LadderStore
from tournaments.ladder.matchmaker import Entrant, next_table
from tournaments.ladder.service import LadderService, Lineup

pytestmark = pytest.mark.timeout(120)

# bot -> its party: author A's three, team red's two (two authors), B's one, the house's three.
FIELD = {
    "a1": "author:A",
    "a2": "author:A",
    "a3": "author:A",
    "r1": "team:red",
    "r2": "team:red",
    "b1": "author:B",
    "h1": "",
    "h2": "",
    "h3": "",
}


def tables(seats: int, parties: dict[str, str], n: int = 300) -> list[tuple[str, ...]]:
    """n tables in a row, each bot's count and last table kept as serve keeps them."""
    rng = random.Random(seats)
    seated = dict.fromkeys(parties, 0)
    last = dict.fromkeys(parties, -1)
    made = []
    for table_no in range(n):
        field = [
            Entrant(f"{b}@1", "example:random", 25.0, 8.0, seated[b], last[b], parties[b])
            for b in parties
        ]
        table = next_table(field, seats, provisional=10, rng=rng)
        assert table is not None
        names = tuple(e.key.split("@")[0] for e in table)
        for b in names:
            seated[b] += 1
            last[b] = table_no
        made.append(names)
    return made


def shared(table: tuple[str, ...]) -> list[str]:
    """The parties with two bots or more at the table."""
    sides = Counter(FIELD[b] or f"bot:{b}" for b in table)
    return [side for side, n in sides.items() if n > 1]


@pytest.mark.parametrize("seats", [3, 4])
def test_no_table_seats_two_bots_of_one_author_or_team(seats: int) -> None:
    made = tables(seats, FIELD)
    assert [t for t in made if shared(t)] == []
    assert all(len(t) == seats for t in made)
    met = Counter(b for t in made for b in t)
    assert set(met) == set(FIELD)  # everyone plays, the bots of a party in turn
    # The house's bots are the operator's baselines, each its own party: they meet.
    assert any(sum(b.startswith("h") for b in t) > 1 for t in made)


@pytest.mark.parametrize("seats", [3, 4])
def test_control_without_parties_one_authors_bots_share_tables(seats: int) -> None:
    made = tables(seats, dict.fromkeys(FIELD, ""))
    together = [t for t in made if shared(t)]
    assert len(together) > 10
    assert any(sum(b.startswith("a") for b in t) > 1 for t in together)


def test_too_few_parties_form_no_table() -> None:
    rng = random.Random(1)
    field = [Entrant(f"{b}@1", "example:random", 25.0, 8.0, 0, -1, FIELD[b]) for b in FIELD]
    two_parties = [e for e in field if e.party in ("author:A", "team:red")]
    assert len(two_parties) == 5 and next_table(two_parties, 3, 10, rng) is None
    # The control: the same five bots, each alone, make a table.
    alone = [Entrant(e.key, e.spec, e.mu, e.sigma, 0, -1) for e in two_parties]
    assert next_table(alone, 3, 10, rng) is not None


# --- serve's tables over a real SQLite state ---------------------------------------------------


def three_seat_ladder(folder: Path, most: int) -> None:
    write_new_ladder(folder, "capture-the-commander", 3, "127.0.0.1:0")
    path = folder / "ladder.toml"
    text = path.read_text().replace("bots_per_author = 1", f"bots_per_author = {most}")
    path.write_text(text.replace('address = "127.0.0.1:8061"', 'address = "127.0.0.1:0"'))
    LadderStore.create(folder).close()


def enter(store: LadderStore, bots: dict[str, str], teams: dict[str, str | None]) -> None:
    """Authors (name -> team) and their bots (name -> author)."""
    for name, team in teams.items():
        authors.add_author(store, name, team)
    for bot, author in bots.items():
        roster.add_bot(store, bot, "example:random", author=author, bots_per_author=9)


def service(folder: Path) -> LadderService:
    """serve's loop without its hosts: only its table making runs, which needs none."""
    store = LadderStore.open(folder)
    made = LadderService(load_ladder(folder), store, cast(Any, None), cast(Any, None))
    active = {b.current.key: b for b in roster.bots(store) if b.status == "active"}
    made.lineup = Lineup(active, set())
    return made


def seatings(folder: Path) -> list[list[str]]:
    store = LadderStore.open(folder)
    rows = store.db.execute("SELECT bots FROM matches ORDER BY seq").fetchall()
    return [[key.split("@")[0] for key in json.loads(bots)] for (bots,) in rows]


TEAMS: dict[str, str | None] = {"ann": None, "ben": "blue", "bea": "blue", "cy": None}
BOTS = {"ann1": "ann", "ann2": "ann", "ben1": "ben", "bea1": "bea", "cy1": "cy", "h1": HOUSE}
PARTY = {"ann1": "ann", "ann2": "ann", "ben1": "blue", "bea1": "blue", "cy1": "cy"}


def two_of_a_party(seated: list[str]) -> bool:
    sides = Counter(PARTY.get(b, b) for b in seated)
    return max(sides.values()) > 1


def test_serve_never_seats_two_bots_of_one_party(tmp_path: Path) -> None:
    three_seat_ladder(tmp_path, most=2)
    enter(LadderStore.open(tmp_path), BOTS, TEAMS)
    ladder = service(tmp_path)
    for _ in range(60):
        assert ladder._new_table()
    found = seatings(tmp_path)
    assert len(found) == 60 * 3 and not any(two_of_a_party(s) for s in found)
    assert {b for s in found for b in s} == set(BOTS)


def test_control_without_parties_serve_seats_one_authors_bots_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(roster.BotRow, "party", property(lambda bot: f"bot:{bot.name}"))
    three_seat_ladder(tmp_path, most=2)
    enter(LadderStore.open(tmp_path), BOTS, TEAMS)
    ladder = service(tmp_path)
    for _ in range(60):
        assert ladder._new_table()
    assert sum(two_of_a_party(s) for s in seatings(tmp_path)) > 10


@pytest.mark.parametrize("capped", [True, False])
def test_serve_keeps_to_bots_per_author_when_the_toml_lowers_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capped: bool
) -> None:
    if not capped:  # the control: every active bot is seated
        monkeypatch.setattr(LadderService, "_allowed", lambda self: self.lineup.active)
    three_seat_ladder(tmp_path, most=2)
    enter(LadderStore.open(tmp_path), BOTS, TEAMS)
    path = tmp_path / "ladder.toml"
    path.write_text(path.read_text().replace("bots_per_author = 2", "bots_per_author = 1"))
    ladder = service(tmp_path)
    for _ in range(40):
        assert ladder._new_table()
    seated = {b for s in seatings(tmp_path) for b in s}
    if not capped:
        assert seated == set(BOTS)
        return
    # Each party's first added plays (of two added in one second, the first by name).
    assert seated == {"ann1", "bea1", "cy1", "h1"}


def test_too_few_parties_wait_and_say_why(tmp_path: Path) -> None:
    three_seat_ladder(tmp_path, most=2)
    enter(LadderStore.open(tmp_path), {"ann1": "ann", "ann2": "ann", "ben1": "ben"}, TEAMS)
    ladder = service(tmp_path)
    assert not ladder._new_table()
    why = ladder.store.meta(WAITING_META)
    assert why == (
        "no table: 3 bots can play, but only 2 authors or teams among them, and a table of "
        "3 seats none twice"
    )
    assert count(tmp_path, "SELECT COUNT(*) FROM matches") == 0


# --- a real serve ------------------------------------------------------------------------------


@pytest.mark.timeout(180)
def test_a_served_ladder_waits_for_a_third_party_and_says_why(tmp_path: Path) -> None:
    three_seat_ladder(tmp_path, most=2)
    enter(LadderStore.open(tmp_path), {"ann1": "ann", "ann2": "ann", "ben1": "ben"}, TEAMS)
    with serving(tmp_path) as served:

        def waiting() -> str | None:
            status, state = get_json(f"{served.url}/api/ladder")
            assert status == 200
            return cast(str | None, state["waiting"])

        served.wait_for("the wait said", lambda: (waiting() or "").startswith("no table"))
        assert count(tmp_path, "SELECT COUNT(*) FROM matches") == 0
        listed = arena("ladder", "list", tmp_path)
        assert "only 2 authors or teams" in listed.stdout
        # A third party's bot: tables form, and the wait is over.
        added = arena(
            "ladder", "add", tmp_path, "--name", "cy1", "--spec", "example:random", "--author", "cy"
        )
        assert added.returncode == 0, added.stderr
        served.wait_for("a table", lambda: count(tmp_path, "SELECT COUNT(*) FROM matches") > 0)
        served.wait_for("the wait over", lambda: waiting() is None)
    found = seatings(tmp_path)
    assert found and not any(two_of_a_party(s) for s in found)
