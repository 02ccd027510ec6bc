"""`arena ladder init | serve | add | update | pause | resume | retire | list | output | board`,
`arena ladder author add | rotate | revoke | list | invite`, and the contest's end: `arena ladder
freeze | release | audit | final` (tournaments/cli/ladder_end.py), and `arena ladder challenges`
(challenge_commands.py). Every operator command that changes something takes --why, kept in the
audit log with it."""

from __future__ import annotations

import signal
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from referee import log_config as arena_logging
from referee.commands.terminal import console, fail, print_json, writable_folder
from referee.printable import visible
from referee.wire.server import TlsError
from tournaments.cli.challenge_commands import operator_commands
from tournaments.cli.ladder_board import board_command
from tournaments.cli.ladder_end import end_commands
from tournaments.cli.ladder_hooks import hook_commands
from tournaments.config import ConfigError
from tournaments.cores_executor import ExecutorError
from tournaments.disk_room import disk_room
from tournaments.executors import Executor, executor_for
from tournaments.ladder import authors, roster
from tournaments.ladder.config_file import LADDER_FILE, LadderConfig, load_ladder, write_new_ladder
from tournaments.ladder.database import HOUSE, WAITING_META, LadderStore, LadderStoreError
from tournaments.ladder.service import LadderService, host_spec
from tournaments.lock import LockError, RunnerLock, holder
from tournaments.match_jobs import JobHost
from tournaments.read_models.ladder_models import AuthorInfo, AuthorList
from tournaments.read_models.ladder_reads import LadderApi, NoSuchMatch, ReplayHeld

if TYPE_CHECKING:
    from tournaments.web.webserver import BackgroundServer

ladder_app = typer.Typer(no_args_is_help=True, help="Run a live ladder that bots join and leave.")
Folder = Annotated[Path, typer.Argument(metavar="DIR", help="the ladder's folder")]
Name = Annotated[str, typer.Option("--name", help="the bot's name on the ladder")]
Why = Annotated[str, typer.Option("--why", help="why: kept in the audit log")]


def _open(folder: Path) -> tuple[LadderConfig, LadderStore]:
    try:
        return load_ladder(folder), LadderStore.open(folder)
    except (ConfigError, LadderStoreError) as exc:
        raise fail(str(exc)) from None


@ladder_app.command("init")
def init(
    folder: Folder,
    game: Annotated[str, typer.Option(help="see `arena games`")],
    seats: Annotated[int, typer.Option(min=2, max=4, help="bots at a table")] = 2,
    listen: Annotated[str, typer.Option(help="referee address for remote bots")] = (
        "127.0.0.1:50061"
    ),
) -> None:
    """Make a ladder folder: ladder.toml (with its tokens) and the empty state."""
    folder = folder.resolve()
    if (folder / LADDER_FILE).exists():
        raise fail(f"{folder} already holds a ladder")
    writable_folder(folder, "the ladder")
    try:
        write_new_ladder(folder, game, seats, listen)
        LadderStore.create(folder).close()
    except (ConfigError, LadderStoreError) as exc:
        (folder / LADDER_FILE).unlink(missing_ok=True)
        raise fail(str(exc)) from None
    console.print(
        f"ladder made in {folder}; edit {LADDER_FILE} there, add bots "
        f"(`arena ladder add {folder} --name NAME --spec SPEC`), "
        f"then `arena ladder serve {folder}`",
        highlight=False,
    )


@ladder_app.command("serve")
def serve(folder: Folder) -> None:
    """Run the ladder until stopped (Ctrl-C or SIGTERM); it starts again where it was."""
    folder = folder.resolve()
    config, store = _open(folder)
    writable_folder(folder / "replays", "replays")
    writable_folder(folder / "logs", "bot logs")
    try:
        lock = RunnerLock.acquire(folder)
    except LockError as exc:
        raise fail(str(exc)) from None
    arena_logging.configure("info", folder / "ladder.log")
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        _serve(folder, config, store, stop)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        lock.release()


def _serve(folder: Path, config: LadderConfig, store: LadderStore, stop: threading.Event) -> None:
    spec = host_spec(config, folder, store.deal_secret())
    tls = config.run.tls(folder)
    try:
        # Opening: a remote bot that knocks before serve has registered it comes back later.
        host = JobHost(spec, listen=config.run.listen, tls=tls, opening=True)
    except TlsError as exc:
        raise fail(f"{exc} (run.tls_cert, run.tls_key)") from None
    except (OSError, RuntimeError) as exc:
        raise fail(f"cannot listen on {config.run.listen} (run.listen): {exc}") from None
    run = config.run
    executor: Executor = host
    try:
        if run.executor != "local":
            try:
                executor = executor_for(spec, run)
            except ExecutorError as exc:  # the cores executor's referee processes
                raise fail(str(exc)) from None
        address = host.host.server.address
        service = LadderService(config, store, host, executor)
        web = _web(folder, config, service.refresh)
        try:
            with store.write():
                store.set_meta("referee_address", address)
                store.set_meta("web_address", web.address)
        except sqlite3.OperationalError as exc:  # a full disk
            web.stop()
            raise fail(f"cannot write {store.path}: {exc} (is its disk full?)") from None
        console.print(
            f"ladder {config.name}: remote bots connect to {address}, its page is at "
            f"{web.address}; Ctrl-C stops it",
            highlight=False,
            soft_wrap=True,
        )
        if tls is not None:
            console.print(
                f"TLS: remote bots set ARENA_ROOT_CERT to the root that signed {tls[0]}",
                highlight=False,
                soft_wrap=True,
            )
        try:
            service.run(stop)
        finally:
            web.stop()
        console.print(f"stopped after {service.played_now} matches", highlight=False)
    finally:
        if executor is not host:
            executor.close()
        host.close()


def _web(folder: Path, config: LadderConfig, after_change: Callable[[], None]) -> BackgroundServer:
    from tournaments.web.http_limits import Limits  # the web loads when served
    from tournaments.web.webserver import StartError, serve_ladder

    try:
        web = config.web
        limits = Limits(web.max_connections, web.max_connections_per_client)
        return serve_ladder(
            folder,
            web.address,
            after_change=after_change,
            host_names=web.hosts,
            limits=limits,
            requests_per_second=web.requests_per_second,
        )
    except StartError as exc:
        raise fail(f"{exc} (web.address)") from None


@ladder_app.command("add")
def add(
    folder: Folder,
    name: Name,
    spec: Annotated[str | None, typer.Option(help="SPEC, as in `arena play`")] = None,
    remote: Annotated[bool, typer.Option(help="a bot its author runs elsewhere")] = False,
    author: Annotated[
        str, typer.Option(help="the author it belongs to (`author add`); the house's if none")
    ] = HOUSE,
    why: Why = "",
) -> None:
    """Add a bot; with --remote, print the secret its author connects with."""
    _config, store = _open(folder.resolve())
    try:
        most = _config.authors.bots_per_author
        token = roster.add_bot(store, name, spec, remote, author, most, why=why)
    except roster.RosterError as exc:
        raise fail(str(exc)) from None
    console.print(f"added {roster.version_key(name, 1)}", highlight=False)
    if token is not None:
        address = store.meta("referee_address") or _config.run.listen
        console.print(
            f"the bot connects with ARENA_ADDRESS={address} ARENA_TOKEN={token}",
            highlight=False,
            soft_wrap=True,
        )


@ladder_app.command("update")
def update(
    folder: Folder,
    name: Name,
    spec: Annotated[str | None, typer.Option(help="the new version's SPEC")] = None,
    why: Why = "",
) -> None:
    """A new version of the bot: the old one's matches and rating stay in the history (after
    the freeze too: the operator's change is logged, and the final plays the pinned one)."""
    _config, store = _open(folder.resolve())
    try:
        key = roster.update_bot(store, name, spec, why=why)
    except roster.RosterError as exc:
        raise fail(str(exc)) from None
    console.print(f"{key} plays from now on", highlight=False)


def _set(folder: Path, name: str, status: str, reason: str) -> None:
    config, store = _open(folder.resolve())
    try:
        roster.set_status(store, name, status, reason, config.authors.bots_per_author)
    except roster.RosterError as exc:
        raise fail(str(exc)) from None
    console.print(f"{name}: {status}", highlight=False)


Reason = Annotated[str, typer.Option("--reason", "--why", help="shown on its page; logged")]


@ladder_app.command("pause")
def pause(folder: Folder, name: Name, reason: Reason = "by the operator") -> None:
    """Stop scheduling the bot until `resume`."""
    _set(folder, name, "paused", reason)


@ladder_app.command("resume")
def resume(folder: Folder, name: Name, why: Why = "") -> None:
    """Schedule a paused bot again."""
    _set(folder, name, "active", why)


@ladder_app.command("retire")
def retire(folder: Folder, name: Name, reason: Reason = "by the operator") -> None:
    """Take the bot off the ladder for good; its history stays."""
    _set(folder, name, "retired", reason)


@ladder_app.command("list")
def list_bots(folder: Folder) -> None:
    """The bots, their current versions and ratings, and why any is paused."""
    _config, store = _open(folder.resolve())
    table = Table("bot", "author", "version", "status", "mu", "sigma", "matches", "spec")
    bots = roster.bots(store)
    for bot in bots:
        v = bot.current
        where = ("remote, connected" if bot.connected else "remote") if bot.remote else v.spec
        table.add_row(
            visible(bot.name),
            visible(bot.author + (f" ({bot.team})" if bot.team else "")),
            visible(v.key),
            bot.status,
            f"{v.mu:.2f}",
            f"{v.sigma:.2f}",
            str(v.matches),
            visible(where),
        )
    console.print(table)
    for bot in bots:
        if bot.reason:  # in full, however narrow the terminal
            console.print(visible(f"{bot.name}: {bot.reason}"), highlight=False, soft_wrap=True)
    console.print(
        f"referee for remote bots: {store.meta('referee_address') or 'not served yet'}",
        highlight=False,
    )
    room = disk_room(folder.resolve(), _config.run.disk_reserve_mb)
    waiting = room.why_waiting() or store.meta(WAITING_META) or None
    waiting = waiting if holder(folder.resolve()).alive else None
    line = f"disk: {room.free_mb:.1f} MB free, reserve {room.reserve_mb:g} MB"
    console.print(waiting or line, highlight=False, soft_wrap=True)


@ladder_app.command("output")
def output(
    folder: Folder,
    match_id: Annotated[str, typer.Argument(metavar="MATCH_ID", help="as in /api/matches")],
    seat: Annotated[int | None, typer.Option(min=0, help="this seat's only")] = None,
) -> None:
    """What each seat's bot wrote in a match, once every seating of its deal has ended; control
    characters are shown as escapes (\\x1b), so a bot cannot drive this terminal."""
    folder = folder.resolve()
    config, store = _open(folder)
    store.close()
    try:
        found = LadderApi(folder).match_output(
            config.tokens.operator.get_secret_value(), match_id, seat
        )
    except (NoSuchMatch, ReplayHeld) as exc:
        raise fail(str(exc)) from None
    for shown in found.seats:
        console.print(
            f"--- seat {shown.seat}, {visible(shown.version)}: {shown.bytes} bytes"
            + ("" if shown.whole else " (its end)"),
            highlight=False,
            soft_wrap=True,
        )
        console.print(visible(shown.output), highlight=False, soft_wrap=True, end="")
        if shown.output and not shown.output.endswith("\n"):
            console.print()


# --- authors -------------------------------------------------------------------------------

author_app = typer.Typer(
    no_args_is_help=True, help="The ladder's authors: who enters bots (docs/ladder.md, Authors)."
)
ladder_app.add_typer(author_app, name="author")
AuthorName = Annotated[str, typer.Argument(metavar="NAME", help="the author's name")]


@author_app.command("add")
def author_add(
    folder: Folder,
    name: Annotated[str, typer.Option("--name", help="the author's name")],
    team: Annotated[str | None, typer.Option(help="their team: one party with its mates")] = None,
    why: Why = "",
) -> None:
    """Add an author and print their token, this once (the ladder keeps only its hash)."""
    _config, store = _open(folder.resolve())
    try:
        token = authors.add_author(store, name, team, why=why)
    except authors.AuthorError as exc:
        raise fail(str(exc)) from None
    _print_token(f"author {name} added", token)


def _print_token(what: str, token: str) -> None:
    console.print(f"{what}; their token, shown this once:", highlight=False)
    console.print(token, highlight=False, soft_wrap=True)


@author_app.command("rotate")
def author_rotate(folder: Folder, name: AuthorName, why: Why = "") -> None:
    """A new token for the author (printed this once); the old one stops working at once."""
    _config, store = _open(folder.resolve())
    try:
        token = authors.rotate(store, name, why)
    except authors.AuthorError as exc:
        raise fail(str(exc)) from None
    _print_token(f"author {name}: new token", token)


@author_app.command("revoke")
def author_revoke(folder: Folder, name: AuthorName, why: Why = "") -> None:
    """No token of the author's works from now on (`rotate` gives them one again)."""
    _config, store = _open(folder.resolve())
    try:
        authors.revoke(store, name, why)
    except authors.AuthorError as exc:
        raise fail(str(exc)) from None
    console.print(f"author {name}: token revoked", highlight=False)


@author_app.command("invite")
def author_invite(folder: Folder, why: Why = "") -> None:
    """A new invite token (printed this once; the last one stops working): with [authors]
    registration = "invite", whoever holds it may register as an author (POST /api/authors)."""
    config, store = _open(folder.resolve())
    token = authors.invite(store, why)
    console.print("invite token, shown this once:", highlight=False)
    console.print(token, highlight=False, soft_wrap=True)
    if config.authors.registration != "invite":
        console.print(
            'note: [authors] registration is "closed": set it to "invite" for the token to work',
            highlight=False,
        )


@author_app.command("list")
def author_list(
    folder: Folder, as_json: Annotated[bool, typer.Option("--json", help="as JSON")] = False
) -> None:
    """The authors, their teams and bots; never a token."""
    _config, store = _open(folder.resolve())
    listed = AuthorList(authors=_author_infos(store))
    if as_json:
        print_json(listed)
        return
    table = Table("author", "team", "token", "bots", "active", "created")
    for a in listed.authors:
        works = "-" if a.name == HOUSE else "works" if a.token else "revoked"
        table.add_row(
            visible(a.name),
            visible(a.team or ""),
            works,
            visible(", ".join(a.bots)),
            str(a.active),
            a.created_at,
        )
    console.print(table)


def _author_infos(store: LadderStore) -> list[AuthorInfo]:
    bots = roster.bots(store)
    return [
        AuthorInfo(
            name=a.name,
            team=a.team,
            token=a.name != HOUSE and a.revoked_at is None,
            created_at=a.created_at,
            rotated_at=a.rotated_at,
            revoked_at=a.revoked_at,
            bots=[b.name for b in bots if b.author == a.name],
            active=sum(b.author == a.name and b.status == "active" for b in bots),
        )
        for a in authors.authors(store)
    ]


board_command(ladder_app)
end_commands(ladder_app)  # freeze, release, audit, final: after the commands above in --help
hook_commands(ladder_app)  # webhook


operator_commands(ladder_app)
