"""`arena author ...`: an author's side of a live ladder, over its web server's HTTP API.

    arena author submit URL NAME PATH   a version of the bot NAME: PATH a folder (packed as the
                                        ladder hashes it) or a .tar.gz / .zip archive

The author's token comes from --token-file or $ARENA_AUTHOR_TOKEN, never from a command-line
value (other users of the machine may read those in the process list).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from referee.commands.terminal import console, fail, print_json
from tournaments.read_models.ladder_models import Submitted
from tournaments.submissions.archive_rules import SubmissionRefused
from tournaments.submissions.packer import archive_bytes

TOKEN_ENV = "ARENA_AUTHOR_TOKEN"
MAX_TOKEN_FILE = 4096
MAX_ANSWER = 64 * 1024

author_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="An author's side of a live ladder: submit versions of your bots.",
)

TokenFile = Annotated[
    Path | None,
    typer.Option(help=f"a file holding your author token (else ${TOKEN_ENV})", dir_okay=False),
]
AsJson = Annotated[bool, typer.Option("--json", help="as JSON")]


@author_app.command("submit")
def submit(
    url: Annotated[
        str,
        typer.Argument(metavar="URL", help="the ladder's page, e.g. https://ladder.example.org"),
    ],
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="your bot's name on the ladder (new or yours)")
    ],
    path: Annotated[
        Path, typer.Argument(metavar="PATH", help="the bot's folder, or a .tar.gz / .zip of it")
    ],
    token_file: TokenFile = None,
    as_json: AsJson = False,
    timeout: Annotated[float, typer.Option(min=1, help="seconds to wait for the ladder")] = 120,
) -> None:
    """Upload a version of your bot: the ladder stores it, builds it, validates it against the
    random bot, and it plays rated matches once live."""
    token = author_token(token_file)
    try:
        body = archive_bytes(path)
    except SubmissionRefused as exc:
        raise fail(str(exc)) from None
    endpoint = api_url(url, f"/api/bots/{urllib.parse.quote(name, safe='')}/versions")
    answer = post(endpoint, body, token, timeout)
    try:
        submitted = Submitted.model_validate(answer)
    except ValidationError:
        raise fail(f"{url} answered, but not as an arena ladder does") from None
    if as_json:
        print_json(submitted)
        return
    console.print(
        f"submitted {submitted.version} ({len(body)} bytes, files {submitted.content_hash[:12]}"
        f"...): {submitted.status}; the ladder builds and validates it before it plays",
        highlight=False,
        soft_wrap=True,
    )


def author_token(token_file: Path | None) -> str:
    """The author's token: the file's first line, or $ARENA_AUTHOR_TOKEN."""
    if token_file is not None:
        try:
            with token_file.open("rb") as file:
                raw = file.read(MAX_TOKEN_FILE)
        except OSError as exc:
            raise fail(f"cannot read the token file {token_file}: {exc.strerror}") from None
        lines = raw.decode("utf-8", "replace").strip().splitlines()
        token = lines[0].strip() if lines else ""
        where = f"the token file {token_file}"
    else:
        token = os.environ.get(TOKEN_ENV, "").strip()
        where = f"${TOKEN_ENV}"
    if not token:
        raise fail(f"no author token: give --token-file FILE or set ${TOKEN_ENV}")
    if not (token.isascii() and token.isprintable()):
        raise fail(f"{where} does not hold a token: tokens are printable ASCII")
    return token


def api_url(url: str, path: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise fail(f"{url!r} is not the ladder's address (http://HOST:PORT or https://HOST)")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}{path}"


def post(url: str, body: bytes, token: str, timeout: float) -> object:
    """The JSON the ladder answered with; its one-line refusal as the error otherwise."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/octet-stream",
        "Accept": "application/json",
    }
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return json.loads(answer.read(MAX_ANSWER))
    except urllib.error.HTTPError as exc:
        raise fail(f"the ladder refused it ({exc.code}): {_refusal(exc)}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise fail(f"cannot reach the ladder at {url}: {reason}") from None
    except ValueError:
        raise fail(f"{url} answered, but not with JSON") from None


def _refusal(exc: urllib.error.HTTPError) -> str:
    try:
        said = json.loads(exc.read(MAX_ANSWER))
        error = said.get("error") if isinstance(said, dict) else None
    except (ValueError, OSError):
        error = None
    return str(error).splitlines()[0] if error else str(exc.reason)
