"""`arena ladder freeze | release | audit | final | discard`: the contest's end
(docs/contest.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from referee.commands.terminal import console, fail, print_json
from referee.printable import visible
from tournaments import audit_log
from tournaments.config import ConfigError
from tournaments.contest import Release
from tournaments.ladder import freeze
from tournaments.ladder.config_file import LadderConfig, load_ladder
from tournaments.ladder.database import LadderStore, LadderStoreError
from tournaments.ladder.discards import DiscardError, discard_deal
from tournaments.ladder.final_folder import KINDS, FinalError, FinalPlan, write_final
from tournaments.ladder.matchmaker import rate
from tournaments.read_models.ladder_models import AuditLog

Folder = Annotated[Path, typer.Argument(metavar="DIR", help="the ladder's folder")]
Why = Annotated[str, typer.Option("--why", help="why: kept in the audit log")]


def _open(folder: Path) -> tuple[LadderConfig, LadderStore]:
    try:
        return load_ladder(folder), LadderStore.open(folder)
    except (ConfigError, LadderStoreError) as exc:
        raise fail(str(exc)) from None


def _moment(text: str) -> datetime:
    """An ISO 8601 time; one without an offset is taken as UTC."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise fail(f"--at {text!r}: an ISO 8601 time, as 2026-12-01T18:00:00+00:00") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def freeze_ladder(
    folder: Folder,
    at: Annotated[str | None, typer.Option(help="ISO 8601 time (now if unset)")] = None,
    why: Why = "",
) -> None:
    """From TIME on (now by default) no author submits or registers; the live version of each
    bot then is the one the final plays. An earlier freeze (here or in ladder.toml) wins."""
    config, store = _open(folder.resolve())
    when = freeze.set_freeze(store, config, None if at is None else _moment(at), why)
    come = freeze.frozen_at(store, config) is not None
    state = "froze" if come else "freezes"
    console.print(f"the ladder {state} at {freeze.iso(when)}", highlight=False)


def release(
    folder: Folder,
    to: Annotated[Release, typer.Option("--to", help="who sees what came after the freeze")],
    why: Why = "",
) -> None:
    """Who sees the matches and ratings after the freeze: hidden (the operator),
    participants (each author their own bots'), or public."""
    _config, store = _open(folder.resolve())
    freeze.set_release(store, to, why)
    console.print(f"after the freeze: {to.value}", highlight=False)


def audit(
    folder: Folder, as_json: Annotated[bool, typer.Option("--json", help="as JSON")] = False
) -> None:
    """Every operator, author and serve action, oldest first, with who, when and why."""
    _config, store = _open(folder.resolve())
    log = AuditLog(entries=audit_log.entries(store.db, limit=10**9))
    if as_json:
        print_json(log)
        return
    table = Table("#", "at", "who", "action", "subject", "why")
    for e in log.entries:
        table.add_row(
            str(e.seq), e.at, visible(e.who), e.action, visible(e.subject), visible(e.why)
        )
    console.print(table)


def final(
    folder: Folder,
    top: Annotated[int, typer.Option(min=2, help="the best N bots at the freeze")],
    kind: Annotated[str, typer.Option("--format", help=" | ".join(KINDS))],
    out: Annotated[Path, typer.Option("-o", "--out", help="the final's folder (new)")],
    deals: Annotated[int, typer.Option(min=1, help="deals per pairing, each in every seating")] = 1,
    rounds: Annotated[int | None, typer.Option(min=1, help="swiss: rounds")] = None,
    why: Why = "",
) -> None:
    """Write the final's tournament folder from the frozen ladder: `arena tournament run
    FINAL_DIR` plays it."""
    folder = folder.resolve()
    config, store = _open(folder)
    try:
        written = write_final(
            store, config, folder, FinalPlan(kind, top, deals, rounds), out.resolve(), why
        )
    except FinalError as exc:
        raise fail(str(exc)) from None
    for line in written.left_out:
        console.print(visible(f"left out: {line}"), highlight=False, soft_wrap=True)
    seeds = ", ".join(f"{e.seed}. {e.bot}" for e in written.entrants.entrants)
    console.print(visible(f"the final: {seeds}"), highlight=False, soft_wrap=True)
    console.print(f"play it with `arena tournament run {out}`", highlight=False, soft_wrap=True)


def discard(
    folder: Folder,
    match_id: Annotated[str, typer.Argument(metavar="MATCH_ID", help="as in /api/matches")],
    why: Annotated[str, typer.Option("--why", help="why: kept in the audit log")],
    replay: Annotated[bool, typer.Option(help="play its deal again in the same seats")] = False,
) -> None:
    """Take a finished match, and every seating of its deal, out of the ratings (computed
    again without them); --replay schedules the deal again, which serve plays."""
    _config, store = _open(folder.resolve())
    try:
        done = discard_deal(store, match_id, why, replay, rate)
    except DiscardError as exc:
        raise fail(str(exc)) from None
    console.print(f"discarded: {', '.join(done.matches)}", highlight=False, soft_wrap=True)
    if done.replays:
        console.print(f"its deal again: {', '.join(done.replays)}", highlight=False)


def end_commands(app: typer.Typer) -> None:
    app.command("freeze")(freeze_ladder)
    app.command("release")(release)
    app.command("audit")(audit)
    app.command("final")(final)
    app.command("discard")(discard)
