"""Challenges from the command line (tournaments/ladder/challenges.py):

arena author challenge URL BOT --against A --against B | --pool top:N --games N
arena author challenges URL [ID]            yours, or one with its matches (over HTTP)
arena ladder challenges DIR [--stop ID --why WHY]   the operator's: all, or stop one
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from referee.commands.terminal import console, fail, print_json
from referee.printable import visible
from tournaments.cli import author_client
from tournaments.cli.author_client import ClientError
from tournaments.config import ConfigError
from tournaments.ladder import challenges
from tournaments.ladder.config_file import load_ladder
from tournaments.ladder.database import LadderStore, LadderStoreError
from tournaments.read_models.challenge_models import (
    ChallengeDetail,
    ChallengeList,
    ChallengeSummary,
)
from tournaments.read_models.challenge_reads import summary

Url = Annotated[str, typer.Argument(metavar="URL", help="the ladder's address, http://HOST:PORT")]
TokenFile = Annotated[
    Path | None,
    typer.Option(
        help=f"a file whose first line is your token; else ${author_client.TOKEN_VARIABLE}"
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="as JSON")]


def challenge(
    url: Url,
    bot: Annotated[str, typer.Argument(metavar="BOT", help="your bot")],
    games: Annotated[int, typer.Option(min=1, help="matches: whole deals, each in every seat")],
    against: Annotated[
        list[str] | None, typer.Option(help="an opponent bot (again for more; or A,B)")
    ] = None,
    pool: Annotated[str | None, typer.Option(help="top:N, the leaderboard's first N")] = None,
    token_file: TokenFile = None,
    as_json: AsJson = False,
) -> None:
    """Ask for unrated games of your bot against chosen bots: fresh deals, no rating moves."""
    names = None if against is None else [n for a in against for n in a.split(",") if n]
    body = {"bot": bot, "games": games, "opponents": names, "pool": pool}
    try:
        token = author_client.author_token(token_file)
        sent = json.dumps(body).encode()
        answer = author_client.post(url, "/api/challenges", sent, token, kind="application/json")
        made = ChallengeSummary.model_validate_json(answer)
    except ClientError as exc:
        raise fail(str(exc)) from None
    except ValueError:
        raise fail(f"{url} answered, but not as an arena ladder does") from None
    if as_json:
        print_json(made)
        return
    console.print(
        f"challenge {made.id}: {made.version} against {', '.join(made.opponents)}, "
        f"{made.games} games, {made.status}",
        highlight=False,
        soft_wrap=True,
    )


def author_challenges(
    url: Url,
    number: Annotated[int | None, typer.Argument(metavar="ID", help="one challenge")] = None,
    token_file: TokenFile = None,
    as_json: AsJson = False,
) -> None:
    """Your challenges, the latest first; or one with its matches."""
    path = "/api/challenges" + ("" if number is None else f"/{number}")
    try:
        body = author_client.get(url, path, author_client.author_token(token_file))
    except ClientError as exc:
        raise fail(str(exc)) from None
    if number is None:
        found = ChallengeList.model_validate_json(body)
        if as_json:
            print_json(found)
            return
        _print(found.challenges)
        return
    one = ChallengeDetail.model_validate_json(body)
    if as_json:
        print_json(one)
        return
    _print([one.challenge])
    table = Table("match", "seats (* mine, #place)", "how it ended")
    for m in one.matches:
        seats = " · ".join(
            ("*" if i in m.mine else "") + s.version + ("" if s.rank is None else f" #{s.rank + 1}")
            for i, s in enumerate(m.seats)
        )
        ended = m.reason if m.reason is not None else f"{m.status}: {m.held or ''}"
        table.add_row(visible(m.match_id), visible(seats), visible(ended))
    console.print(table)


def _print(found: list[ChallengeSummary]) -> None:
    table = Table("id", "author", "bot", "opponents", "games", "done", "W-D-L", "status")
    for c in found:
        said = c.status + (f": {c.reason}" if c.reason else "")
        table.add_row(
            str(c.id), visible(c.author), visible(c.version), visible(", ".join(c.opponents)),
            str(c.games), str(c.finished), f"{c.wins}-{c.draws}-{c.losses}", visible(said),
        )  # fmt: skip
    console.print(table)


def ladder_challenges(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="the ladder's folder")],
    stop: Annotated[int | None, typer.Option(help="stop this challenge")] = None,
    why: Annotated[str, typer.Option("--why", help="why: kept in the audit log")] = "",
    as_json: AsJson = False,
) -> None:
    """Every challenge, the latest first; --stop ID ends one (its games not played are
    dropped; audited)."""
    try:
        load_ladder(folder)
        store = LadderStore.open(folder)
    except (ConfigError, LadderStoreError) as exc:
        raise fail(str(exc)) from None
    try:
        if stop is not None:
            ended = challenges.stop(store, stop, why)
            console.print(f"challenge {ended.id}: {ended.status} ({ended.reason})", highlight=False)
            return
        found = challenges.challenges(store)
        if as_json:
            print_json(ChallengeList(challenges=[summary(store, c) for c in found]))
            return
        _print([summary(store, c) for c in found])
    except challenges.NoSuchChallenge as exc:
        raise fail(str(exc)) from None
    finally:
        store.close()


def author_commands(app: typer.Typer) -> None:
    app.command("challenge")(challenge)
    app.command("challenges")(author_challenges)


def operator_commands(app: typer.Typer) -> None:
    app.command("challenges")(ladder_challenges)
