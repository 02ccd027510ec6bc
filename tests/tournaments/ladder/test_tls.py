"""TLS for a live ladder's remote bots: `[run] tls_cert` and `tls_key` make serve's referee
speak TLS; a remote SDK bot given the root certificate in $ARENA_ROOT_CERT connects and plays,
one without it is refused, and the ladder's own bots play on (over a private Unix socket, with
no certificate). A half-given pair or an unreadable file is refused in one line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from referee.bots.launcher import parse_spec
from tests.tournaments.web.harness import arena
from tests.tournaments.web.ladder_harness import finished, make_ladder, serving
from tests.trust.test_tls import make_certificate
from tournaments.read_models.ladder_reads import LadderApi


def remote(ticket: str, root_cert: Path | None) -> subprocess.Popen[str]:
    address = ticket.split("ARENA_ADDRESS=")[1].split()[0]
    token = ticket.split("ARENA_TOKEN=")[1].split()[0]
    # A plain bot never connects to a TLS referee: it gives up after the join timeout.
    env = {**os.environ, "ARENA_ADDRESS": address, "ARENA_TOKEN": token}
    env["ARENA_JOIN_TIMEOUT_S"] = "3"
    env.pop("ARENA_ROOT_CERT", None)
    if root_cert is not None:
        env["ARENA_ROOT_CERT"] = str(root_cert)
    argv = parse_spec("example:random").argv
    return subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.timeout(240)
def test_a_remote_bot_plays_over_tls(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path, "ladder")
    folder = tmp_path / "ladder"
    make_ladder(folder, {"a": "example:random"}, tls_cert=str(cert), tls_key=key.name)
    (folder / key.name).write_bytes(key.read_bytes())  # a relative path: from the folder
    with serving(folder) as served:
        assert "TLS: remote bots set ARENA_ROOT_CERT" in served.said()
        added = arena("ladder", "add", folder, "--name", "far", "--remote")
        assert added.returncode == 0, added.stderr
        assert "ARENA_ADDRESS=127.0.0.1:0 " not in added.stdout  # serve's own port
        plain = remote(added.stdout, None)
        _, said = plain.communicate(timeout=60)
        assert plain.returncode != 0 and "ARENA_ROOT_CERT" in said
        assert finished(folder, "far@1") == 0

        bot = remote(added.stdout, cert)
        try:
            served.wait_for("matches of the remote bot", lambda: finished(folder, "far@1") >= 3)
        finally:
            bot.kill()
            bot.communicate(timeout=30)
    # The ladder's own bot played every one of those matches, over the Unix socket.
    assert LadderApi(folder).bot_page("a").forfeits == []


def test_tls_needs_a_certificate_and_its_key(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    make_ladder(folder, {}, tls_cert="cert.pem")
    shown = arena("ladder", "serve", folder)
    assert shown.returncode == 2 and "Traceback" not in shown.stderr
    assert "tls_cert and tls_key: TLS needs both, or neither for plaintext" in shown.stderr

    path = folder / "ladder.toml"
    path.write_text(
        path.read_text().replace(
            'tls_cert = "cert.pem"', 'tls_cert = "cert.pem"\ntls_key = "key.pem"'
        )
    )
    shown = arena("ladder", "serve", folder)
    assert shown.returncode == 2 and "Traceback" not in shown.stderr
    assert shown.stderr.strip() == (
        f"error: cannot read the TLS private key {folder / 'key.pem'}: No such file or directory "
        "(run.tls_cert, run.tls_key)"
    )
