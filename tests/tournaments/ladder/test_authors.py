"""The ladder's authors over a real SQLite state and the real `arena` CLI: a token is shown once
and only its hash is stored, it is checked in constant time against every author, `rotate` and
`revoke` take effect at once, bad input is one line and stores nothing, `bots_per_author` holds,
and a ladder folder of the previous schema opens and gains its authors. Each guard beside a
control where it is off."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
from pathlib import Path

import pytest

from tests.tournaments.web.harness import arena
from tournaments.ladder import authors, roster
from tournaments.ladder.config_file import write_new_ladder
from tournaments.ladder.database import HOUSE, LadderStore
from tournaments.ladder.matchmaker import rate
from tournaments.read_models.ladder_reads import AccessDenied, LadderApi
from tournaments.records import MatchRecord
from tournaments.schedule import MatchJob

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def ladder(tmp_path: Path) -> Path:
    write_new_ladder(tmp_path, "opposing-force", 2, "127.0.0.1:0")
    LadderStore.create(tmp_path).close()
    return tmp_path


def token_of(printed: str) -> str:
    """The token `author add | rotate` printed: the line after the one that announces it."""
    lines = printed.splitlines()
    return lines[lines.index(next(ln for ln in lines if "shown this once" in ln)) + 1].strip()


def state_bytes(folder: Path) -> bytes:
    """Every byte of the ladder's SQLite state: the database, its WAL and its index."""
    return b"".join(p.read_bytes() for p in sorted(folder.glob("ladder.sqlite*")) if p.is_file())


def test_a_token_is_shown_once_and_only_its_hash_is_stored(ladder: Path) -> None:
    added = arena("ladder", "author", "add", ladder, "--name", "alice", "--team", "red")
    assert added.returncode == 0, added.stderr
    token = token_of(added.stdout)
    assert len(token) >= 40
    stored = state_bytes(ladder)
    assert token.encode() not in stored
    assert hashlib.sha256(token.encode()).hexdigest().encode() in stored
    listed = arena("ladder", "author", "list", ladder, "--json")
    assert listed.returncode == 0 and token not in listed.stdout
    assert hashlib.sha256(token.encode()).hexdigest() not in listed.stdout
    assert '"name": "alice"' in listed.stdout and '"team": "red"' in listed.stdout
    # The token authenticates its author, and nothing else does.
    store = LadderStore.open(ladder)
    assert authors.authenticate(store, token).name == "alice"
    with pytest.raises(authors.BadToken):
        authors.authenticate(store, token[:-1] + ("A" if token[-1] != "A" else "B"))


def test_control_the_search_finds_a_secret_stored_as_it_is(ladder: Path) -> None:
    """The scan above is not blind: a remote bot's secret, which serve must hand to its
    referee and so keeps as it is, is found by the same search."""
    added = arena("ladder", "add", ladder, "--name", "far", "--remote")
    secret = added.stdout.split("ARENA_TOKEN=")[1].split()[0]
    assert secret.encode() in state_bytes(ladder)


def test_every_authors_hash_is_compared_in_constant_time(
    ladder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LadderStore.open(ladder)
    tokens = [authors.add_author(store, f"a{i}") for i in range(5)]
    authors.revoke(store, "a4")
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(authors.hmac, "compare_digest", spy)
    for token, who in ((tokens[0], "a0"), (tokens[3], "a3"), ("guess" * 9, None)):
        compared.clear()
        if who is None:
            with pytest.raises(authors.BadToken):
                authors.authenticate(store, token)
        else:
            assert authors.authenticate(store, token).name == who
        # Each of the four live authors, whoever matched first; digests of equal length.
        assert len(compared) == 4
        assert {len(a) for a, _ in compared} == {len(b) for _, b in compared} == {64}
    with pytest.raises(authors.BadToken):
        authors.authenticate(store, tokens[4])  # revoked


def remote_with(api: LadderApi, token: str, name: str) -> str:
    return api.register_remote(token, name).version


def test_rotate_and_revoke_take_effect_at_once(ladder: Path) -> None:
    old = token_of(arena("ladder", "author", "add", ladder, "--name", "bob").stdout)
    api = LadderApi(ladder)
    assert api.author_of(old).name == "bob"  # the control: the token works before
    rotated = arena("ladder", "author", "rotate", ladder, "bob")
    assert rotated.returncode == 0, rotated.stderr
    new = token_of(rotated.stdout)
    with pytest.raises(AccessDenied):
        api.author_of(old)
    with pytest.raises(AccessDenied):
        remote_with(api, old, "bobs")
    assert remote_with(api, new, "bobs") == "bobs@1"
    assert roster.bot_row(LadderStore.open(ladder), "bobs").author == "bob"
    assert arena("ladder", "author", "revoke", ladder, "bob").returncode == 0
    with pytest.raises(AccessDenied):
        api.author_of(new)
    assert new.encode() not in state_bytes(ladder) and old.encode() not in state_bytes(ladder)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("add", "--name", "bad name"), "author name 'bad name': 1 to 40 letters"),
        (("add", "--name", "Carol"), "author name 'Carol' is too like 'carol'"),
        (("add", "--name", "carol"), "author 'carol' is on the ladder already"),
        (("add", "--name", "house"), "author 'house' is on the ladder already"),
        (("add", "--name", "dan", "--team", "a team"), "team name 'a team'"),
        (("rotate", "nobody"), "no author 'nobody' on the ladder"),
        (("revoke", "nobody"), "no author 'nobody' on the ladder"),
        (("rotate", "house"), "'house' is the operator's own author"),
    ],
)
def test_bad_author_input_is_one_line_and_stores_nothing(
    ladder: Path, args: tuple[str, ...], error: str
) -> None:
    assert arena("ladder", "author", "add", ladder, "--name", "carol").returncode == 0
    before = state_bytes(ladder)
    store = LadderStore.open(ladder)
    rows = store.db.execute("SELECT * FROM authors ORDER BY name").fetchall()
    store.close()
    done = arena("ladder", "author", args[0], ladder, *args[1:])
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: {error}") and done.stderr.count("\n") == 1, done.stderr
    store = LadderStore.open(ladder)
    assert store.db.execute("SELECT * FROM authors ORDER BY name").fetchall() == rows
    assert len(before) > 0


def test_a_bot_of_an_unknown_author_is_refused_in_one_line(ladder: Path) -> None:
    done = arena(
        "ladder", "add", ladder, "--name", "x", "--spec", "example:random", "--author", "z"
    )
    assert done.returncode == 2 and done.stderr.startswith("error: no author 'z' on the ladder")
    assert roster.bots(LadderStore.open(ladder)) == []


def set_bots_per_author(folder: Path, most: int) -> None:
    path = folder / "ladder.toml"
    path.write_text(path.read_text().replace("bots_per_author = 1", f"bots_per_author = {most}"))


def add(folder: Path, name: str, author: str) -> tuple[int, str]:
    done = arena(
        "ladder", "add", folder, "--name", name, "--spec", "example:random", "--author", author
    )
    return done.returncode, done.stderr


def test_one_live_bot_per_author_and_team_unless_the_toml_allows_more(ladder: Path) -> None:
    for name, team in (("ann", "red"), ("ben", "red"), ("cy", None)):
        assert (
            arena(
                "ladder",
                "author",
                "add",
                ladder,
                "--name",
                name,
                *(("--team", team) if team else ()),
            ).returncode
            == 0
        )
    assert add(ladder, "ann1", "ann") == (0, "")
    code, error = add(ladder, "ann2", "ann")
    assert code == 2 and "author 'ann' has 1 active bot(s) already (ann1)" in error
    code, error = add(ladder, "ben1", "ben")  # ann's team mate: the same party
    assert code == 2 and "(ann1)" in error
    assert add(ladder, "cy1", "cy") == (0, "")
    assert add(ladder, "h1", HOUSE) == (0, "") and add(ladder, "h2", HOUSE) == (0, "")
    # Pausing makes room; a resume beyond the limit is refused.
    assert arena("ladder", "pause", ladder, "--name", "ann1").returncode == 0
    assert add(ladder, "ben1", "ben") == (0, "")
    resumed = arena("ladder", "resume", ladder, "--name", "ann1")
    assert resumed.returncode == 2 and "(ben1)" in resumed.stderr
    store = LadderStore.open(ladder)
    active = {b.name for b in roster.bots(store) if b.status == "active"}
    assert active == {"ben1", "cy1", "h1", "h2"}
    # The control: the TOML allows two, and the same moves pass.
    set_bots_per_author(ladder, 2)
    assert arena("ladder", "resume", ladder, "--name", "ann1").returncode == 0
    assert add(ladder, "cy2", "cy") == (0, "")


def old_ladder(folder: Path, version: int) -> None:
    """A ladder as the schema `version` wrote it (3: no uploaded versions; 2: nor authors; 1:
    nor substitutions), with a bot and a rated match in it."""
    write_new_ladder(folder, "opposing-force", 2, "127.0.0.1:0")
    store = LadderStore.create(folder)
    roster.add_bot(store, "a", "example:random")
    roster.add_bot(store, "b", "example:first")
    job = MatchJob("t0-g0", 0, "t0-d0", ("a@1", "b@1"), ("example:random", "example:first"))
    store.schedule(0, [job])
    record = MatchRecord("t0-g0", "t0-d0", ("a@1", "b@1"), (0, 1), (1.0, 0.0), "r", ())
    store.finish(record, "w", 0.1, rate)
    store.close()
    with sqlite3.connect(folder / "ladder.sqlite") as db:
        db.execute("DROP TABLE audit")
        db.execute("DROP TABLE frozen")
        for column in ("content_hash", "status", "reason", "build_log"):
            db.execute(f"ALTER TABLE versions DROP COLUMN {column}")
        if version < 3:
            db.execute("DROP TABLE authors")
            db.execute("ALTER TABLE bots DROP COLUMN author")
        if version == 1:
            db.execute("ALTER TABLE matches DROP COLUMN substituted")
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))


@pytest.mark.parametrize("version", [3, 2, 1])
def test_an_old_ladder_opens_and_gains_its_authors(tmp_path: Path, version: int) -> None:
    old_ladder(tmp_path, version)
    missing = "no such column: status" if version == 3 else "no such table: authors"
    absent = pytest.raises(sqlite3.OperationalError, match=missing)
    with sqlite3.connect(tmp_path / "ladder.sqlite") as db, absent:  # the control
        db.execute("SELECT status FROM versions" if version == 3 else "SELECT * FROM authors")
    listed = arena("ladder", "list", tmp_path)
    assert listed.returncode == 0, listed.stderr
    store = LadderStore.open(tmp_path)
    assert store.meta("schema_version") == "6"
    assert [v.key for v in roster.versions(store)] == ["a@1", "b@1"]  # live, as they were
    assert [a.name for a in authors.authors(store)] == [HOUSE]
    assert {b.name: b.author for b in roster.bots(store)} == {"a": HOUSE, "b": HOUSE}
    assert [f.record.match_id for f in store.finished()] == ["t0-g0"]
    assert roster.bot_row(store, "a").current.matches == 1
    # It takes authors now.
    assert arena("ladder", "author", "add", tmp_path, "--name", "eve").returncode == 0
    assert add(tmp_path, "e1", "eve") == (0, "")
