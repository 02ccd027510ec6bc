"""An author's webhook on the ladder's web server (tournaments/ladder/webhooks.py delivers it),
behind the author's token as every /api/me route is (author_routes.py):

    PUT    /api/me/webhook   {"url": ...}   set it: the answer holds its secret, this once
    GET    /api/me/webhook                  its URL and its deliveries' states, never the secret
    DELETE /api/me/webhook                  remove it (its pending deliveries are given up)

The URL is refused (400, one line) unless it is http or https and its host resolves to public
addresses only, unless the operator allows others ([webhooks] allow_private)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import FastAPI, HTTPException, Response

from tournaments.ladder.database import LadderStore
from tournaments.ladder.hook_settings import (
    Webhook,
    WebhookSet,
    WebhookUrl,
    hook_of,
    remove_hook,
    set_hook,
)
from tournaments.ladder.hook_urls import HookRefused
from tournaments.read_models.author_reads import AuthorReads
from tournaments.web.author_routes import AUTHOR_ERRORS, PRIVATE, AuthorToken, Reads


def hook_routes(app: FastAPI) -> None:
    errors: dict[int | str, dict[str, Any]] = AUTHOR_ERRORS
    app.put("/api/me/webhook", responses=errors)(set_my_hook)
    app.get("/api/me/webhook", responses=errors)(my_hook)
    app.delete("/api/me/webhook", status_code=204, response_class=Response, responses=errors)(
        remove_my_hook
    )


@contextmanager
def _author_store(author: AuthorReads, token: str) -> Iterator[tuple[LadderStore, str]]:
    """The ladder's store and the token's author's name (AccessDenied: a 401)."""
    with author.api.opened() as store:
        yield store, author.api.author_of(token, store).name


def set_my_hook(
    body: WebhookUrl, author: Reads, token: AuthorToken, response: Response
) -> WebhookSet:
    """Point your webhook at the URL (events of your bots only); its secret is in the answer,
    this once: keep it to check each delivery's X-Arena-Signature."""
    response.headers.update(PRIVATE)
    allow = author.api.config.webhooks.allow_private
    with _author_store(author, token) as (store, name):
        try:
            secret = set_hook(store, name, body.url, allow, who=f"author {name}")
        except HookRefused as exc:
            raise HTTPException(400, str(exc)) from None
    return WebhookSet(url=body.url, secret=secret)


def my_hook(author: Reads, token: AuthorToken, response: Response) -> Webhook:
    """Your webhook's URL and its latest deliveries with their states (no secret)."""
    response.headers.update(PRIVATE)
    with _author_store(author, token) as (store, name):
        hook = hook_of(store, name)
    if hook is None:
        raise HTTPException(404, 'you have no webhook set: PUT /api/me/webhook {"url": ...}')
    return hook


def remove_my_hook(author: Reads, token: AuthorToken) -> Response:
    """Remove your webhook; nothing more is sent to it."""
    with _author_store(author, token) as (store, name):
        if not remove_hook(store, name, who=f"author {name}"):
            raise HTTPException(404, "you have no webhook set")
    return Response(status_code=204, headers=PRIVATE)
