"""What the tournament's and the ladder's web servers share: one-line refusals (JSON under
/api/, a small HTML page elsewhere), the live event stream, and a match's replay as the viewer's
model. Each server's routes (tournament_app.py, ladder_app.py) only say what to show."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import anyio
from arena_games.base import GameError
from arena_games.replay_file import ReplayError
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.exceptions import HTTPException

from referee.replays.viewer import model
from tournaments.web import pages
from tournaments.web.live import Feed
from tournaments.web.throttle import TooMany


class ErrorBody(BaseModel):
    # Every refusal's JSON. No docstring: it would be the schema's description.
    model_config = ConfigDict(frozen=True)

    error: str = Field(description="what was wrong, in one line")


PING_S = 15  # a comment line this often tells a closed connection from a quiet folder
SEND_TIMEOUT_S = 10  # a page that takes no data for this long is dropped
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 403, 404, 409, 429, 500, 503)
}


def api_app(title: str, summary: str) -> FastAPI:
    """A server's app: its schema at /api/openapi.json, and no docs pages (theirs load scripts
    from a CDN: the schema is enough)."""
    return FastAPI(
        title=title,
        summary=summary,
        openapi_url="/api/openapi.json",
        docs_url=None,
        redoc_url=None,
    )


class ReplayBroken(Exception):
    """A replay file that cannot be re-simulated (a truncated or edited file)."""


def refusals(
    app: FastAPI, statuses: Mapping[type[Exception], int], folder: Path | None = None
) -> None:
    """Every refusal in one line: each exception given by its status, bad requests 400. The
    place of the served folder on this machine is left out of them (they go to the public)."""
    places = _places(folder) if folder is not None else ()
    for error, status in statuses.items():
        app.add_exception_handler(error, _refusal(status, places))
    app.add_exception_handler(RequestValidationError, _bad_request)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(TooMany, _too_many)
    app.get("/favicon.ico", include_in_schema=False)(no_icon)


def no_icon() -> Response:
    """Browsers ask for one: an empty answer rather than a 404 in every page's console."""
    return Response(status_code=204)


def replay_model(path: Path, viewer: str, match_id: str) -> dict[str, Any]:
    """The replay viewer's model of the match (referee/replays/viewer/model.py), as `viewer`
    sees it."""
    try:
        return model.load(path, viewer)
    except (ReplayError, ValueError, GameError) as exc:
        raise ReplayBroken(f"match {match_id}: its replay cannot be shown: {exc}") from None


def live_events(feed: Feed[Any], client: str) -> EventSourceResponse:
    """`progress` events: the feed's progress now, then after every change."""
    feed.room(client)  # Full: refused here, before the stream starts
    shutdown = anyio.Event()  # set when the server stops: the stream then ends cleanly

    async def stream() -> AsyncIterator[ServerSentEvent]:
        async with feed.listen(client) as queue:
            while (progress := await _next(queue, shutdown)) is not None:
                yield ServerSentEvent(data=progress.model_dump_json(), event="progress")

    return EventSourceResponse(
        stream(),
        ping=PING_S,
        send_timeout=SEND_TIMEOUT_S,
        shutdown_event=shutdown,
        shutdown_grace_period=1.0,
    )


async def _next(queue: asyncio.Queue[Any], shutdown: anyio.Event) -> BaseModel | None:
    """The next progress, or None once the server stops. A task group, so that neither wait
    outlives the other, however the stream ends."""
    got: list[BaseModel] = []
    async with anyio.create_task_group() as group:

        async def take() -> None:
            got.append(await queue.get())
            group.cancel_scope.cancel()

        async def stop() -> None:
            await shutdown.wait()
            group.cancel_scope.cancel()

        group.start_soon(take)
        group.start_soon(stop)
    return got[0] if got else None


def answer(
    request: Request, status: int, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    if request.url.path.startswith("/api/"):
        body = ErrorBody(error=message).model_dump()
        return JSONResponse(body, status_code=status, headers=headers)
    return HTMLResponse(pages.error_page(status, message), status_code=status)


def _places(folder: Path) -> tuple[str, ...]:
    """The folder as a message may write it, longest first."""
    return tuple(sorted({str(folder), str(folder.resolve())}, key=len, reverse=True))


def _refusal(status: int, places: tuple[str, ...]) -> Any:
    async def handler(request: Request, exc: Exception) -> Response:
        said = str(exc)
        for place in places:
            said = said.replace(place + "/", "").replace(place, "the served folder")
        return answer(request, status, said)

    return handler


async def _bad_request(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    said = "; ".join(
        f"{'.'.join(str(p) for p in error['loc'][1:]) or 'request'}: {error['msg']}"
        for error in exc.errors()
    )
    return answer(request, 400, f"bad request: {said}")


async def _too_many(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, TooMany)
    return answer(request, 429, str(exc), {"Retry-After": str(exc.retry_after_s)})


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return answer(request, exc.status_code, str(exc.detail), exc.headers)
