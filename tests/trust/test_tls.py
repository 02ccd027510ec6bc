"""Tests referee.wire.server's TLS, referee.commands.serve_series and arena_sdk.client.

TLS for remote bots: the referee serves TLS from a certificate and key (PEM files), SDK bots
connect with the root certificate from $ARENA_ROOT_CERT, and a client without it fails with a
clear message. The certificates are made here, self-signed, with the openssl command."""

from __future__ import annotations

import asyncio
import io
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc
from arena_games import get_game
from arena_games.deals import practice_secret
from arena_sdk import ArenaError, Bot, run
from arena_sdk.bot import Choice
from rich.console import Console

from referee.bots.launcher import parse_spec, start_bot, stop_bot
from referee.commands.serve_series import serve_series
from referee.hosting.series import SeriesPlan, run_series
from referee.wire.server import TlsError, start_server

GAME = get_game("opposing-force")
TOKEN_LINE = r"ARENA_ADDRESS=(\S+) ARENA_TOKEN=(\S+)"


def make_certificate(folder: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1, and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a test certificate with")
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-nodes", "-days", "1", "-subj", "/CN=localhost"),
            *("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
            *("-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return cert, key


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"), "referee")


class NeverPlays(Bot):
    """Only used where the session must fail before any match."""

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> Choice:
        raise AssertionError("asked to play")


@pytest.mark.timeout(120)
def test_sdk_bots_play_a_series_over_tls(
    certificate: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate
    monkeypatch.setenv("ARENA_ROOT_CERT", str(cert))  # the bot processes inherit it

    async def scenario() -> None:
        server = await start_server("127.0.0.1:0", tls_cert=cert, tls_key=key)
        try:
            bots = [parse_spec("example:opposing-force"), parse_spec("example:random")]
            plan = SeriesPlan(GAME, bots, 2, secret=practice_secret(4), replays=tmp_path)
            series = await run_series(plan, server=server)
            assert [o.forfeits for o, _ in series] == [[], []]
        finally:
            await server.stop()

    asyncio.run(scenario())


@pytest.mark.timeout(60)
def test_clients_without_the_right_root_certificate_fail_clearly(
    certificate: tuple[Path, Path], tmp_path: Path
) -> None:
    cert, key = certificate
    stranger, _ = make_certificate(tmp_path, "stranger")

    async def scenario() -> None:
        server = await start_server("127.0.0.1:0", tls_cert=cert, tls_key=key)
        try:
            token = server.lobby.register("remote").token
            async with grpc.aio.insecure_channel(server.address) as plaintext:
                stub = referee_pb2_grpc.RefereeServiceStub(plaintext)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.ListGames(pb.ListGamesRequest(), timeout=10)
                assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
            for root, hint in (
                (None, "if it serves TLS, give its root certificate in $ARENA_ROOT_CERT"),
                (stranger, "is it serving TLS with a certificate this root certificate signed?"),
                (tmp_path / "missing.crt", "cannot read the root certificate"),
            ):
                with pytest.raises(ArenaError, match=re.escape(hint)):
                    await asyncio.to_thread(
                        run, NeverPlays(), server.address, token, 1.0, root_cert=root
                    )
        finally:
            await server.stop()

    asyncio.run(scenario())


def test_unusable_certificate_or_key_files_are_named(
    certificate: tuple[Path, Path], tmp_path: Path
) -> None:
    cert, key = certificate
    _, stranger_key = make_certificate(tmp_path, "stranger")
    not_pem = tmp_path / "notes.txt"
    not_pem.write_text("hello\n")
    cases = [
        (cert, None, "needs both a certificate and its private key"),
        (cert, tmp_path / "absent.key", f"cannot read the TLS private key {tmp_path}"),
        (not_pem, key, f"{not_pem} is not a PEM file holding a certificate"),
        (cert, cert, f"{cert} is not a PEM file holding a private key"),
        (cert, stranger_key, f"is {stranger_key} the key of {cert}?"),
    ]
    for tls_cert, tls_key, message in cases:
        with pytest.raises(TlsError, match=re.escape(message)):
            asyncio.run(start_server("127.0.0.1:0", tls_cert=tls_cert, tls_key=tls_key))


@pytest.mark.timeout(120)
def test_serve_hosts_remote_bots_over_tls(
    certificate: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate
    monkeypatch.setenv("ARENA_ROOT_CERT", str(cert))
    out = io.StringIO()
    console = Console(file=out, width=200)

    async def scenario() -> None:
        serving = asyncio.create_task(
            serve_series(
                GAME, "127.0.0.1:0", 2, 1, practice_secret(3), tmp_path, 30.0, console, cert, key
            )
        )
        while len(found := re.findall(TOKEN_LINE, out.getvalue())) < 2:
            assert not serving.done(), out.getvalue()
            await asyncio.sleep(0.05)
        bots = [
            await start_bot(parse_spec("example:random"), address, token, tmp_path / f"{i}.log")
            for i, (address, token) in enumerate(found)
        ]
        await asyncio.wait_for(serving, 90)
        assert [await stop_bot(b) for b in bots] == [0, 0]

    asyncio.run(scenario())
    assert "TLS: bots set ARENA_ROOT_CERT" in out.getvalue()
    assert "match 1:" in out.getvalue() and "forfeits" not in out.getvalue()
