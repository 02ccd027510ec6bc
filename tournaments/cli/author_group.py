"""`arena author submit | status | matches | replay | log` (and `challenge | challenges`:
challenge_commands.py): an author's side of a live ladder, over its HTTP API
(tournaments/web/ladder_app.py, author_routes.py), from anywhere. URL is the ladder's page
address; the token comes from --token-file or $ARENA_AUTHOR_TOKEN, never from a
command-line value (author_client.py).

    arena author submit URL NAME PATH   a version of the bot NAME: PATH a folder (packed as the
                                        ladder hashes it) or a .tar.gz / .zip archive
    arena author webhook set URL HOOK   your bots' events POSTed to HOOK (author_hooks.py)
"""

from __future__ import annotations

import sys
import urllib.parse
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from referee.commands.terminal import console, fail, print_json
from referee.printable import visible
from tournaments.cli import author_client
from tournaments.cli.author_client import ClientError
from tournaments.cli.author_hooks import hook_app
from tournaments.cli.challenge_commands import author_commands
from tournaments.read_models.author_models import Me, MyMatches
from tournaments.read_models.ladder_models import MatchOutput, Submitted
from tournaments.submissions.archive_rules import SubmissionRefused
from tournaments.submissions.packer import archive_bytes

author_app = typer.Typer(
    no_args_is_help=True,
    help="An author's own bots, matches, replays and logs on a ladder, over HTTP.",
)
Url = Annotated[str, typer.Argument(metavar="URL", help="the ladder's address, http://HOST:PORT")]
MatchId = Annotated[str, typer.Argument(metavar="MATCH_ID", help="as `author matches` lists")]
TokenFile = Annotated[
    Path | None,
    typer.Option(
        help=f"a file whose first line is your token; else ${author_client.TOKEN_VARIABLE}"
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="as JSON")]
author_app.add_typer(hook_app, name="webhook")


@author_app.command("submit")
def submit(
    url: Url,
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
    try:
        token = author_client.author_token(token_file)
        body = archive_bytes(path)
        where = f"/api/bots/{urllib.parse.quote(name, safe='')}/versions"
        answer = author_client.post(url, where, body, token, timeout)
        submitted = Submitted.model_validate_json(answer)
    except (ClientError, SubmissionRefused) as exc:
        raise fail(str(exc)) from None
    except ValueError:  # pydantic's: not the answer of an arena ladder
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


def _get(url: str, path: str, token_file: Path | None) -> bytes:
    try:
        return author_client.get(url, path, author_client.author_token(token_file))
    except ClientError as exc:
        raise fail(str(exc)) from None


@author_app.command("status")
def status(url: Url, token_file: TokenFile = None, as_json: AsJson = False) -> None:
    """You, your bots with their versions and statuses, and your W-D-L against each opponent."""
    me = Me.model_validate_json(_get(url, "/api/me", token_file))
    if as_json:
        print_json(me)
        return
    console.print(
        f"author {visible(me.author)}" + (f", team {visible(me.team)}" if me.team else "")
    )
    table = Table("bot", "status", "version", "added", "version status", "mu", "matches")
    for bot in me.bots:
        said = bot.status + (f": {bot.reason}" if bot.reason else "")
        for v in reversed(bot.versions):
            shown = v.status + (f": {v.reason}" if v.reason else "")
            name = v.version + (" (plays now)" if v.current else "")
            table.add_row(
                visible(bot.name), visible(said), visible(name), v.added_at, visible(shown),
                f"{v.mu:.1f}", str(v.matches),
            )  # fmt: skip
    console.print(table)
    record = Table("my bot", "opponent", "its author", "W", "D", "L", title="deals ended")
    for r in me.record:
        record.add_row(
            visible(r.bot), visible(r.opponent), visible(r.opponent_author),
            str(r.wins), str(r.draws), str(r.losses),
        )  # fmt: skip
    console.print(record)


@author_app.command("matches")
def matches(
    url: Url,
    token_file: TokenFile = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="this many")] = 50,
    offset: Annotated[int, typer.Option(min=0, help="after skipping this many")] = 0,
    as_json: AsJson = False,
) -> None:
    """Your bots' finished matches, the latest first."""
    body = _get(url, f"/api/me/matches?limit={limit}&offset={offset}", token_file)
    found = MyMatches.model_validate_json(body)
    if as_json:
        print_json(found)
        return
    table = Table("match", "finished", "seats (* mine, #place)", "how it ended")
    for m in found.matches:
        seats = " · ".join(
            ("*" if i in m.mine else "") + s.version + ("" if s.rank is None else f" #{s.rank + 1}")
            for i, s in enumerate(m.seats)
        )
        ended = m.reason if m.reason is not None else f"held back: {m.held}"
        table.add_row(visible(m.match_id), m.finished_at, visible(seats), visible(ended))
    console.print(table)
    console.print(f"{len(found.matches)} of {found.total} from {found.offset}", highlight=False)


@author_app.command("replay")
def replay(
    url: Url,
    match_id: MatchId,
    token_file: TokenFile = None,
    seat: Annotated[int | None, typer.Option(min=0, help="one of your seats")] = None,
    out: Annotated[Path | None, typer.Option(help="write it here, not to stdout")] = None,
) -> None:
    """The match's replay cut to your seat (JSON Lines: docs/contest.md), once its deal has
    ended everywhere."""
    query = "" if seat is None else f"?seat={seat}"
    body = _get(url, f"/api/me/matches/{_quoted(match_id)}/replay{query}", token_file)
    if out is None:
        sys.stdout.buffer.write(body)
        sys.stdout.flush()
        return
    try:
        out.write_bytes(body)
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}") from None


@author_app.command("log")
def log(url: Url, match_id: MatchId, token_file: TokenFile = None, as_json: AsJson = False) -> None:
    """What your bot wrote in the match, once its deal has ended everywhere; control characters
    are shown as escapes (\\x1b)."""
    body = _get(url, f"/api/me/matches/{_quoted(match_id)}/log", token_file)
    found = MatchOutput.model_validate_json(body)
    if as_json:
        print_json(found)
        return
    for shown in found.seats:
        head = f"--- seat {shown.seat}, {shown.version}: {shown.bytes} bytes"
        console.print(visible(head) + ("" if shown.whole else " (its end)"), highlight=False)
        console.print(visible(shown.output), highlight=False, soft_wrap=True, end="")
        if shown.output and not shown.output.endswith("\n"):
            console.print()


def _quoted(match_id: str) -> str:
    return urllib.parse.quote(match_id, safe="")


author_commands(author_app)
