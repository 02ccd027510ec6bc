"""Authors over the ladder's real web server (uvicorn on 127.0.0.1, real HTTP; other addresses of
127.0.0.0/8 stand for other clients): registration with the invite token, refused without it,
with a wrong one, or while registration is closed, and rate-limited per address; look-alike
names refused; a remote bot registered with an author's token is theirs, and only they give it
a new version. Each guard beside a control where it is off."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tournaments.web.harness import arena
from tests.tournaments.web.test_guards import Answer, bearer, ladder_web, request
from tournaments.ladder import authors
from tournaments.ladder.config_file import write_new_ladder
from tournaments.ladder.database import LadderStore
from tournaments.web import ladder_app

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def ladder(tmp_path: Path) -> tuple[Path, str]:
    """A ladder open to registration by invite; its invite token."""
    write_new_ladder(tmp_path, "opposing-force", 2, "127.0.0.1:0")
    LadderStore.create(tmp_path).close()
    path = tmp_path / "ladder.toml"
    path.write_text(path.read_text().replace('registration = "closed"', 'registration = "invite"'))
    invited = arena("ladder", "author", "invite", tmp_path)
    assert invited.returncode == 0, invited.stderr
    return tmp_path, invited.stdout.splitlines()[1].strip()


def register(
    where: tuple[str, int],
    token: str | None,
    name: str,
    team: str | None = None,
    source: str = "127.0.0.1",
) -> Answer:
    body = {"name": name} if team is None else {"name": name, "team": team}
    headers = bearer(token) if token is not None else None
    return request(where, "POST", "/api/authors", body, headers, source=source)


def remote(where: tuple[str, int], token: str, name: str) -> Answer:
    return request(where, "POST", "/api/remote-bots", {"name": name}, bearer(token))


def authors_in(folder: Path) -> list[str]:
    return [a.name for a in authors.authors(LadderStore.open(folder))]


def state_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.glob("ladder.sqlite*")) if p.is_file())


def test_an_author_registers_with_the_invite_token_and_enters_a_bot(
    ladder: tuple[Path, str],
) -> None:
    folder, invite = ladder
    assert invite.encode() not in state_bytes(folder)
    with ladder_web(folder) as where:
        status, body, _ = register(where, invite, "alice", "red")
        assert status == 201, body
        assert body["author"] == "alice" and body["team"] == "red" and len(body["token"]) >= 40
        token = body["token"]
        assert token.encode() not in state_bytes(folder)
        # Their token enters a remote bot, which is theirs, and shows so in public.
        status, ticket, _ = remote(where, token, "alices-bot")
        assert status == 201 and ticket["version"] == "alices-bot@1", ticket
        status, page, _ = request(where, "GET", "/api/bots/alices-bot")
        assert (page["author"], page["team"]) == ("alice", "red")
        status, rows, _ = request(where, "GET", "/api/leaderboard")
        assert status == 200 and "alice" in rows["text"] and token not in rows["text"]
    assert authors_in(folder) == ["house", "alice"]


def test_registration_is_refused_without_the_invite_a_wrong_one_or_while_closed(
    ladder: tuple[Path, str],
) -> None:
    folder, invite = ladder
    with ladder_web(folder) as where:
        status, body, _ = register(where, None, "mallory")
        assert status == 401 and "invite token" in body["error"]
        status, body, _ = register(where, "guess" * 9, "mallory")
        assert (status, body) == (403, {"error": "the invite token is wrong"})
        status, body, _ = register(where, invite, "bad name")
        assert status == 400 and body["error"].startswith("author name 'bad name'")
        assert register(where, invite, "ok")[0] == 201  # the control: the right invite
    assert authors_in(folder) == ["house", "ok"]
    # Closed: the same invite is refused, and nothing is stored.
    path = folder / "ladder.toml"
    path.write_text(path.read_text().replace('registration = "invite"', 'registration = "closed"'))
    with ladder_web(folder) as where:
        status, body, _ = register(where, invite, "late")
        assert (status, body) == (
            403,
            {
                "error": "authors do not register here: the operator adds them ([authors] "
                "registration is closed)"
            },
        )
    assert authors_in(folder) == ["house", "ok"]


def test_a_new_invite_ends_the_old_one(ladder: tuple[Path, str]) -> None:
    folder, old = ladder
    new = arena("ladder", "author", "invite", folder).stdout.splitlines()[1].strip()
    with ladder_web(folder) as where:
        assert register(where, old, "a")[0] == 403
        assert register(where, new, "b")[0] == 201


def test_registrations_are_rate_limited_per_address(ladder: tuple[Path, str]) -> None:
    folder, invite = ladder
    with ladder_web(folder) as where:
        statuses = [register(where, invite, f"a{i}")[0] for i in range(11)]
        assert statuses == [201] * 10 + [429]
        status, body, headers = register(where, invite, "a99")
        assert status == 429 and int(headers["retry-after"]) > 60
        assert body["error"].startswith("too many author registrations from 127.0.0.1")
        assert register(where, invite, "other", source="127.0.0.3")[0] == 201
    assert len(authors_in(folder)) == 1 + 11


def test_control_without_the_limit_a_flood_registers_on(
    ladder: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ladder_app, "AUTHOR_REGISTRATIONS_PER_CLIENT", "100000/hour")
    folder, invite = ladder
    with ladder_web(folder) as where:
        assert {register(where, invite, f"a{i}")[0] for i in range(15)} == {201}


def test_wrong_invites_count_as_failed_token_checks(ladder: tuple[Path, str]) -> None:
    folder, invite = ladder
    with ladder_web(folder) as where:
        statuses = [register(where, f"guess-{i}" * 4, "m")[0] for i in range(11)]
        assert statuses == [403] * 10 + [429]
        assert register(where, invite, "m")[0] == 429  # even the right one waits now


LOOK_ALIKES = ("Chatty", "chatty.", "chat-ty", "CHAT_TY")


@pytest.mark.parametrize("folding", [True, False])
def test_look_alike_author_names_are_refused(
    ladder: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, folding: bool
) -> None:
    if not folding:  # the control: names compared as they are
        monkeypatch.setattr(authors, "folded", lambda name: name)
    folder, invite = ladder
    with ladder_web(folder) as where:
        assert register(where, invite, "chatty")[0] == 201
        for name in LOOK_ALIKES:
            status, body, _ = register(where, invite, name)
            if folding:
                assert status == 400 and body["error"].startswith(
                    f"author name {name!r} is too like 'chatty'"
                )
            else:
                assert status == 201
    assert len(authors_in(folder)) == (2 if folding else 2 + len(LOOK_ALIKES))


def test_only_its_author_gives_a_remote_bot_a_new_version(ladder: tuple[Path, str]) -> None:
    folder, invite = ladder
    with ladder_web(folder) as where:
        a_token = register(where, invite, "ann")[1]["token"]
        b_token = register(where, invite, "bo")[1]["token"]
        assert remote(where, a_token, "annbot")[1]["version"] == "annbot@1"
        # B cannot add a version of ann's bot, nor take its name.
        status, body, _ = remote(where, b_token, "annbot")
        assert status == 400 and "on the ladder already" in body["error"]
        # The control: ann can, and the bot's secret stays the one it connects with.
        status, again, _ = remote(where, a_token, "annbot")
        assert status == 201 and again["version"] == "annbot@2"
        # One live bot per author: a second bot of ann's is refused.
        status, body, _ = remote(where, a_token, "annbot2")
        assert status == 400 and "bots_per_author = 1" in body["error"]
        # A revoked token is refused at once.
        arena("ladder", "author", "revoke", folder, "ann")
        status, body, _ = remote(where, a_token, "annbot")
        assert status == 401


@pytest.mark.parametrize("team", ["red-team", "RedTeam"])
def test_a_stranger_cannot_join_a_team_over_http(ladder: tuple[Path, str], team: str) -> None:
    """A stranger in team red would share its one live bot and keep red's own bots off."""
    folder, invite = ladder
    assert (
        arena("ladder", "author", "add", folder, "--name", "ann", "--team", "red-team").returncode
        == 0
    )
    with ladder_web(folder) as where:
        status, body, _ = register(where, invite, "mallory", team)
        assert status == 400 and body["error"].startswith(f"team {team!r} has members already")
        assert register(where, invite, "newcomer", "blue")[0] == 201  # a team of their own
    assert authors_in(folder) == ["house", "ann", "newcomer"]
    # The control: the operator adds an author to the team.
    added = arena("ladder", "author", "add", folder, "--name", "ben", "--team", team)
    assert added.returncode == 0, added.stderr
