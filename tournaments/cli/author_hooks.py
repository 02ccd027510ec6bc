"""`arena author webhook set URL HOOK | show URL | remove URL`: an author's webhook on a ladder,
over its HTTP API (tournaments/web/hook_routes.py): their own bots' events POSTed to HOOK,
signed with a secret `set` prints once (docs/ladder.md, "Webhooks")."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from referee.commands.terminal import console, fail, print_json
from referee.printable import visible
from tournaments.cli import author_client
from tournaments.cli.author_client import ClientError
from tournaments.cli.ladder_hooks import delivery_table
from tournaments.ladder.hook_settings import Webhook, WebhookSet

hook_app = typer.Typer(
    no_args_is_help=True, help="Your webhook: your bots' events POSTed to a URL of yours, signed."
)
Url = Annotated[str, typer.Argument(metavar="URL", help="the ladder's address, http://HOST:PORT")]
TokenFile = Annotated[
    Path | None,
    typer.Option(
        help=f"a file whose first line is your token; else ${author_client.TOKEN_VARIABLE}"
    ),
]
PATH = "/api/me/webhook"


def _send(url: str, token_file: Path | None, method: str, body: object = None) -> bytes:
    try:
        token = author_client.author_token(token_file)
        return author_client.send_json(url, PATH, token, method, body)
    except ClientError as exc:
        raise fail(str(exc)) from None


@hook_app.command("set")
def set_webhook(
    url: Url,
    hook: Annotated[str, typer.Argument(metavar="HOOK", help="where to POST: http(s)://...")],
    token_file: TokenFile = None,
) -> None:
    """Point your webhook at HOOK and print its secret, this once (a new one each time)."""
    answer = WebhookSet.model_validate_json(_send(url, token_file, "PUT", {"url": hook}))
    console.print(f"webhook set to {visible(answer.url)}; its secret, shown this once:")
    console.print(answer.secret, highlight=False, soft_wrap=True)


@hook_app.command("show")
def show_webhook(
    url: Url,
    token_file: TokenFile = None,
    as_json: Annotated[bool, typer.Option("--json", help="as JSON")] = False,
) -> None:
    """Your webhook's URL and its latest deliveries with their states."""
    hook = Webhook.model_validate_json(_send(url, token_file, "GET"))
    if as_json:
        print_json(hook)
        return
    console.print(f"{visible(hook.url)} (set {hook.set_at})", highlight=False, soft_wrap=True)
    console.print(delivery_table(hook.deliveries))


@hook_app.command("remove")
def remove_webhook(url: Url, token_file: TokenFile = None) -> None:
    """Remove your webhook: nothing more is sent to it."""
    _send(url, token_file, "DELETE")
    console.print("webhook removed")
