"""Uploads refused over the ladder's real web server (uvicorn on 127.0.0.1, real HTTP, real
archives and a real SQLite file), each beside the control where the same upload is taken: over
the size limit (declared, and streamed with no length), over the hourly rate, to another
author's bot, without a token, with a wrong or revoked one, on a ladder whose bots run below
bubblewrap, a zip-slip archive. Each refusal is one line, and nothing of it is stored: no
version folder, no version row, no bot."""

from __future__ import annotations

import http.client
import json
import os
import select
import socket
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tournaments.ladder.upload_kit import packed, python_bot, stored, upload
from tests.tournaments.submissions.crafting import regular, tar_gz
from tests.tournaments.web.harness import ARENA
from tests.tournaments.web.ladder_harness import set_in_table
from tests.tournaments.web.test_guards import ladder_web
from tournaments.ladder import authors, roster
from tournaments.ladder.config_file import write_new_ladder
from tournaments.ladder.database import LadderStore

pytestmark = pytest.mark.timeout(60)


def make(folder: Path, **submissions: object) -> dict[str, str]:
    """A ladder (no serve: nothing builds) with authors alice and bob; their tokens."""
    folder.mkdir(parents=True, exist_ok=True)
    write_new_ladder(folder, "opposing-force", 2, "127.0.0.1:0")
    set_in_table(folder / "ladder.toml", "submissions", submissions)
    store = LadderStore.create(folder)
    try:
        roster.add_bot(store, "house-random", "example:random")
        return {name: authors.add_author(store, name) for name in ("alice", "bob")}
    finally:
        store.close()


def where(folder: Path) -> Iterator[str]:
    with ladder_web(folder) as (host, port):
        yield f"http://{host}:{port}"


def rows(folder: Path) -> tuple[int, int]:
    """(version rows, bot rows) in the ladder's database."""
    with sqlite3.connect(f"file:{folder / 'ladder.sqlite'}?mode=ro", uri=True) as db:
        (versions,) = db.execute("SELECT COUNT(*) FROM versions").fetchone()
        (bots,) = db.execute("SELECT COUNT(*) FROM bots").fetchone()
    return int(versions), int(bots)


def refused(status: int, body: dict[str, object], code: int, words: str) -> None:
    assert status == code, body
    error = str(body["error"])
    assert words in error and "\n" not in error and "Traceback" not in error, error


def bot_archive(tmp_path: Path, tag: str, padding: int = 0) -> bytes:
    """A bot's folder packed (the same for the same tag); padding: bytes of noise in it."""
    folder = tmp_path / f"src-{tag}"
    if folder.is_dir():
        return packed(folder)
    python_bot(folder)
    (folder / "tag.txt").write_text(tag)
    if padding:
        (folder / "noise.bin").write_bytes(os.urandom(padding))
    return packed(folder)


def test_over_the_size_limit_is_a_413_declared_or_streamed(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    tokens = make(folder, archive_mb=0.05)
    big = bot_archive(tmp_path, "big", padding=200_000)
    before = rows(folder)
    for base in where(folder):
        status, body = upload(base, tokens["alice"], "alices", big)
        refused(status, body, 413, "over 0.05 MB")
        # No Content-Length: the body, sent in chunks without end, is cut at the limit.
        sent, answer = endless_upload(base, tokens["alice"], "alices")
        refused(*answer, 413, "over 0.05 MB")
        assert sent < 10_000_000, sent  # answered at 0.05 MB, plus what the sockets held (3 MB)
        assert stored(folder) == [] and rows(folder) == before
        small = bot_archive(tmp_path, "small")
        status, body = upload(base, tokens["alice"], "alices", small)  # the control
        assert status == 202 and body["version"] == "alices@1", body
    assert rows(folder) == (before[0] + 1, before[1] + 1) and len(stored(folder)) == 1
    # The control of the limit itself: raised, the big archive is taken.
    other = tmp_path / "roomy"
    tokens = make(other, archive_mb=1)
    for base in where(other):
        status, body = upload(base, tokens["alice"], "alices", big)
        assert status == 202, body


def endless_upload(base: str, token: str, name: str) -> tuple[int, tuple[int, dict[str, object]]]:
    """A chunked upload (no length said) of 64 KiB chunks, up to 100 MB, sent until the
    server answers: (bytes sent by then, (status, body))."""
    host, port = base.removeprefix("http://").split(":")
    head = (
        f"POST /api/bots/{name}/versions HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/octet-stream\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    block = b"\x1f\x8b" + os.urandom(64 * 1024 - 2)
    chunk = f"{len(block):x}\r\n".encode() + block + b"\r\n"
    sent = 0
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head)
        while sent < 100_000_000:
            if select.select([sock], [], [], 0)[0]:
                break  # the answer is there
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(block)
        answer = http.client.HTTPResponse(sock)
        answer.begin()
        return sent, (answer.status, json.loads(answer.read()))


def test_over_the_hourly_rate_is_a_429_refused_ones_counted(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    tokens = make(folder, per_author_per_hour=2)
    for base in where(folder):
        status, body = upload(base, tokens["alice"], "alices", b"not an archive")
        refused(status, body, 400, "not a .tar.gz or .zip")  # counts: it cost an unpacking
        status, body = upload(base, tokens["alice"], "alices", bot_archive(tmp_path, "1"))
        assert status == 202, body
        before = rows(folder), stored(folder)
        status, body = upload(base, tokens["alice"], "alices", bot_archive(tmp_path, "2"))
        refused(status, body, 429, "too many submissions")
        assert (rows(folder), stored(folder)) == before
        status, body = upload(base, tokens["bob"], "bobs", bot_archive(tmp_path, "3"))
        assert status == 202, body  # another author's count is their own
    # The control: with 3 an hour, alice's third goes in.
    other = tmp_path / "more"
    tokens = make(other, per_author_per_hour=3)
    for base in where(other):
        upload(base, tokens["alice"], "alices", b"not an archive")
        for tag in ("1", "2"):
            status, body = upload(base, tokens["alice"], "alices", bot_archive(tmp_path, tag))
            assert status == 202, body


def test_another_authors_bot_is_a_403_and_their_own_is_taken(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    tokens = make(folder)
    for base in where(folder):
        status, body = upload(base, tokens["alice"], "alices", bot_archive(tmp_path, "a"))
        assert status == 202, body
        before = rows(folder), stored(folder)
        for name in ("alices", "house-random"):
            status, body = upload(base, tokens["bob"], name, bot_archive(tmp_path, "b"))
            refused(status, body, 403, "another author's" if name == "alices" else "")
        assert (rows(folder), stored(folder)) == before
        # The controls: alice's second version of her own; bob's own bot.
        status, body = upload(base, tokens["alice"], "alices", bot_archive(tmp_path, "a2"))
        assert status == 202 and body["version"] == "alices@2", body
        status, body = upload(base, tokens["bob"], "bobs", bot_archive(tmp_path, "b"))
        assert status == 202 and body["version"] == "bobs@1", body
        # bots_per_author (1): bob's second bot is refused, nothing stored.
        before = rows(folder), stored(folder)
        status, body = upload(base, tokens["bob"], "bobs-too", bot_archive(tmp_path, "b3"))
        refused(status, body, 400, "bots_per_author = 1")
        assert (rows(folder), stored(folder)) == before


def test_no_token_a_wrong_or_revoked_one_is_a_401(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    tokens = make(folder)
    store = LadderStore.open(folder)
    authors.revoke(store, "bob")
    store.close()
    archive = bot_archive(tmp_path, "x")
    for base in where(folder):
        for token in (None, "not-a-token-of-anyone-here-at-all", tokens["bob"]):
            status, body = upload(base, token, "bobs", archive)
            refused(status, body, 401, "token")
        assert stored(folder) == [] and rows(folder) == (1, 1)
        store = LadderStore.open(folder)
        fresh = authors.rotate(store, "bob")
        store.close()
        status, body = upload(base, fresh, "bobs", archive)  # the control
        assert status == 202, body


def test_a_ladder_below_bubblewrap_takes_no_uploads(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    tokens = make(folder)
    path = folder / "ladder.toml"
    text = path.read_text()
    path.write_text(text.replace('tier = "bubblewrap"', 'tier = "rlimits"'))
    for base in where(folder):
        status, body = upload(base, tokens["alice"], "alices", bot_archive(tmp_path, "x"))
        refused(status, body, 409, "bubblewrap or docker only")
    assert stored(folder) == [] and rows(folder) == (1, 1)
    path.write_text(text)  # the control: bubblewrap
    for base in where(folder):
        status, body = upload(base, tokens["alice"], "alices", bot_archive(tmp_path, "x"))
        assert status == 202, body


def test_a_zip_slip_archive_is_a_400_and_stores_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    tokens = make(folder)
    slip = tar_gz([regular("../escaped.py", b"print('out')\n")])
    for base in where(folder):
        status, body = upload(base, tokens["alice"], "alices", slip)
        refused(status, body, 400, "'..' in a path")
        assert stored(folder) == [] and rows(folder) == (1, 1)
        assert not (folder / "escaped.py").exists() and not (tmp_path / "escaped.py").exists()
        status, body = upload(base, tokens["alice"], "alices", tar_gz([]))  # the control
        assert status == 202, body


def submit(*args: str | Path, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_AUTHOR_TOKEN"}
    if token is not None:
        env["ARENA_AUTHOR_TOKEN"] = token
    return subprocess.run(
        [*ARENA, "author", "submit", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def one_line_error(done: subprocess.CompletedProcess[str], words: str) -> None:
    assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], lines


def test_arena_author_submit_says_each_refusal_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    tokens = make(folder)
    bot = python_bot(tmp_path / "bot")
    token_file = tmp_path / "alice.token"
    token_file.write_text(tokens["alice"] + "\n")
    for base in where(folder):
        one_line_error(submit(base, "alices", bot), "to your author token")
        one_line_error(submit(base, "alices", tmp_path, token="x" * 40), "no arena-bot.toml")
        one_line_error(submit(base, "alices", bot, token="x" * 40), "refused it (401)")
        one_line_error(submit("ftp://nowhere", "alices", bot, token="x" * 40), "is not the http")
        taken = submit(base, "alices", bot, "--token-file", token_file, "--json")
        assert taken.returncode == 0, taken.stderr
        answer = json.loads(taken.stdout)
        assert answer["version"] == "alices@1" and answer["status"] == "building", answer
        one_line_error(submit(base, "alices", bot, token=tokens["bob"]), "refused it (403)")
        # The token is never a command-line value: there is no such option.
        assert submit(base, "alices", bot, "--token", tokens["alice"]).returncode == 2
    one_line_error(submit(base, "alices", bot, token=tokens["alice"]), "cannot reach")
