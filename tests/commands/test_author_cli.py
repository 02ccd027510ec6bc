"""`arena author ...` as an author's client: the token only from a file or $ARENA_AUTHOR_TOKEN
(no flag takes it), one line for each refusal, and never sent on by a redirect: a real HTTP
server on 127.0.0.1 answers 302 to another one that records the headers it gets. The control:
urllib's own opener, as the client would be without its guard, carries the token there."""

from __future__ import annotations

import http.server
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.tournaments.web.harness import arena
from tournaments.cli import author_client

pytestmark = pytest.mark.timeout(60)
TOKEN = "tok-" + "s3cr3t" * 6


@contextmanager
def server(answer: int, location: str = "") -> Iterator[tuple[str, list[dict[str, str]]]]:
    """An HTTP server on 127.0.0.1 answering every GET with `answer` (to `location`); its
    address, and the headers of each request it got."""
    seen: list[dict[str, str]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(dict(self.headers))
            self.send_response(answer)
            if location:
                self.send_header("Location", location)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": "nothing here"}')

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_redirect_does_not_carry_the_token_on() -> None:
    with server(404) as (elsewhere, seen), server(302, elsewhere + "/api/me") as (url, _):
        with pytest.raises(author_client.ClientError, match=r"^302: "):
            author_client.get(url, "/api/me", TOKEN)
        assert seen == []
        # The control: urllib's opener follows it, the token with it.
        plain = urllib.request.Request(
            url + "/api/me", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(plain, timeout=10)
        assert [h.get("Authorization") for h in seen] == [f"Bearer {TOKEN}"]


def test_the_token_comes_from_a_file_or_the_environment_never_a_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(author_client.TOKEN_VARIABLE, raising=False)
    with server(404) as (url, seen):
        said = arena("author", "status", url)
        assert (
            said.returncode == 2
            and said.stderr.strip()
            == ("error: give --token-file FILE or set $ARENA_AUTHOR_TOKEN to your author token")
            and seen == []
        )
        assert arena("author", "status", url, "--token", TOKEN).returncode == 2  # no such flag
        token_file = tmp_path / "token"
        token_file.write_text(TOKEN + "\n")
        said = arena("author", "status", url, "--token-file", token_file)
        assert said.returncode == 2 and said.stderr.strip() == "error: 404: nothing here"
        assert seen[-1]["Authorization"] == f"Bearer {TOKEN}" and TOKEN not in seen[-1].get(
            "Host", ""
        )
        assert said.stderr.count("\n") == 1
        said = arena("author", "status", url, "--token-file", tmp_path / "none")
        assert said.returncode == 2 and "cannot read the token file" in said.stderr
        monkeypatch.setenv(author_client.TOKEN_VARIABLE, TOKEN + "-env")
        assert arena("author", "status", url).returncode == 2
        assert seen[-1]["Authorization"] == f"Bearer {TOKEN}-env"
    for bad in ("ftp://127.0.0.1:1", "http://127.0.0.1:1/?token=x", "http://u:p@127.0.0.1:1"):
        said = arena("author", "matches", bad, "--token-file", token_file)
        assert (said.returncode == 2 and "is not the http" in said.stderr) or "alone" in said.stderr
    said = arena("author", "log", "http://127.0.0.1:1", "t0-g0", "--token-file", token_file)
    assert said.returncode == 2 and said.stderr.startswith("error: cannot reach http://127.0.0.1:1")
