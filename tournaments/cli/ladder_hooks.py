"""`arena ladder webhook DIR set URL | show | remove | deliveries`: the operator's webhook, which
gets every event of the ladder (tournaments/ladder/webhooks.py). `set` prints the secret once."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from referee.commands.terminal import console, fail, print_json
from referee.printable import visible
from tournaments.ladder.database import LadderStore, LadderStoreError
from tournaments.ladder.hook_settings import Delivery, hook_of, remove_hook, set_hook
from tournaments.ladder.hook_urls import HookRefused
from tournaments.ladder.notices import OPERATOR


class HookAction(StrEnum):
    SET = "set"
    SHOW = "show"
    REMOVE = "remove"
    DELIVERIES = "deliveries"


def hook_commands(app: typer.Typer) -> None:
    app.command("webhook")(webhook)


def webhook(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="the ladder's folder")],
    action: Annotated[
        HookAction, typer.Argument(metavar="ACTION", help="set|show|remove|deliveries")
    ],
    url: Annotated[str | None, typer.Argument(metavar="URL", help="set: where to POST")] = None,
    why: Annotated[str, typer.Option("--why", help="why: kept in the audit log")] = "",
    as_json: Annotated[bool, typer.Option("--json", help="as JSON")] = False,
) -> None:
    """The operator's webhook: every event of the ladder POSTed there, signed (docs/ladder.md,
    "Webhooks"). `set` prints its secret this once."""
    if (url is None) == (action == HookAction.SET):
        raise fail("give a URL to `set`, and to nothing else")
    try:
        store = LadderStore.open(folder.resolve())
    except LadderStoreError as exc:
        raise fail(str(exc)) from None
    try:
        if action == HookAction.SET:
            secret = set_hook(store, OPERATOR, url or "", True, "operator", why)
            console.print("the ladder's webhook is set; its secret, shown this once:")
            console.print(secret, highlight=False, soft_wrap=True)
        elif action == HookAction.REMOVE:
            gone = remove_hook(store, OPERATOR, "operator", why)
            console.print("webhook removed" if gone else "no webhook was set", highlight=False)
        else:
            _show(store, action == HookAction.DELIVERIES, as_json)
    except HookRefused as exc:
        raise fail(str(exc)) from None
    finally:
        store.close()


def _show(store: LadderStore, deliveries: bool, as_json: bool) -> None:
    hook = hook_of(store, OPERATOR)
    if hook is None:
        raise fail("no webhook is set: `arena ladder webhook DIR set URL`")
    if as_json:
        print_json(hook)
        return
    console.print(f"{visible(hook.url)} (set {hook.set_at})", highlight=False, soft_wrap=True)
    if deliveries:
        console.print(delivery_table(hook.deliveries))


def delivery_table(deliveries: list[Delivery]) -> Table:
    table = Table("id", "event", "made", "state", "tries", "last outcome", "next or done")
    for d in deliveries:
        when = d.delivered_at or (d.next_at if d.state == "pending" else "")
        table.add_row(
            str(d.id), d.event, d.made_at, d.state, str(d.attempts), visible(d.last_outcome), when
        )
    return table
