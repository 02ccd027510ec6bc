"""The tournament server's routes (FastAPI): the page, the replay viewer for each match, the
JSON beside them and the live updates. The routes only translate HTTP: what they show comes
from folder.TournamentFolder, and every refusal is one line, JSON under /api/, HTML elsewhere.

    GET /                         the tournament page (?bot= &result= &cause= &offset=)
    GET /matches/ID               the match in the replay viewer (?as=, see access.py)
    GET /api/tournament           TournamentInfo
    GET /api/standings            tournaments.standings.StandingsReport
    GET /api/matches              MatchList (the same filters, and limit)
    GET /api/matches/ID           MatchSummary
    GET /api/matches/ID/replay    the viewer's model of the match (referee/viewer/model.py)
    GET /api/events               server-sent events: `progress`, a Progress, at once and on
                                  every change
    GET /api/openapi.json         the schema of all of it
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
from arena_games.base import GameError
from arena_games.replay_file import ReplayError
from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.exceptions import HTTPException

from referee.viewer import model, page
from referee.web import pages
from referee.web.access import Access, Refused, check_viewpoint, viewpoints
from referee.web.folder import BadQuery, FolderError, Held, NotFound, TournamentFolder
from referee.web.live import INTERVAL_S, Feed, Full
from referee.web.responses import (
    ErrorBody,
    MatchList,
    MatchQuery,
    MatchSummary,
    Progress,
    TournamentInfo,
)
from tournaments.standings import StandingsReport

PING_S = 15  # a comment line this often tells a closed connection from a quiet tournament
SEND_TIMEOUT_S = 10  # a page that takes no data for this long is dropped
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 403, 404, 409, 500, 503)
}


@dataclass(frozen=True)
class Site:
    folder: TournamentFolder
    access: Access
    feed: Feed
    seats: int  # at every table: a tournament's configuration never changes

    def viewpoints(self) -> list[str]:
        return viewpoints(self.access, self.seats)


class ReplayBroken(Exception):
    """A replay file that cannot be re-simulated (a truncated or edited file)."""


def create_app(
    folder: TournamentFolder,
    access: Access = Access.PUBLIC,
    max_live: int = 16,
    interval_s: float = INTERVAL_S,
) -> FastAPI:
    app = FastAPI(
        title="arena web",
        summary="A tournament's standings, matches and replays",
        openapi_url="/api/openapi.json",
        docs_url=None,  # their pages load scripts from a CDN: the schema is enough
        redoc_url=None,
    )
    seats = folder.snapshot().config.format.seats
    app.state.site = Site(folder, access, Feed(folder, max_live, interval_s), seats)
    for error, status in STATUS.items():
        app.add_exception_handler(error, _refusal(status))
    app.add_exception_handler(RequestValidationError, _bad_request)
    app.add_exception_handler(HTTPException, _http_error)
    _routes(app)
    return app


def site(request: Request) -> Site:
    found: Site = request.app.state.site
    return found


SiteDep = Annotated[Site, Depends(site)]


def _routes(app: FastAPI) -> None:
    app.get("/", response_class=HTMLResponse)(tournament_page)
    app.get("/matches/{match_id}", response_class=HTMLResponse, responses=ERRORS)(viewer_page)
    app.get("/api/tournament", responses=ERRORS)(tournament_info)
    app.get("/api/standings", responses=ERRORS)(standings)
    app.get("/api/matches", responses=ERRORS)(matches)
    app.get("/api/matches/{match_id}", responses=ERRORS)(match)
    app.get("/api/matches/{match_id}/replay", responses=ERRORS)(replay_model)
    app.get("/api/events", response_class=EventSourceResponse, responses=ERRORS)(events)
    app.get("/favicon.ico", include_in_schema=False)(no_icon)


def no_icon() -> Response:
    """Browsers ask for one: an empty answer rather than a 404 in every page's console."""
    return Response(status_code=204)


def tournament_page(site: SiteDep, query: Annotated[MatchQuery, Query()]) -> HTMLResponse:
    snap = site.folder.snapshot()
    info = site.folder.info(site.viewpoints(), snap)
    standings = site.folder.standings(snap)
    try:
        listed = site.folder.matches(query, snap)
    except BadQuery as exc:
        text = pages.tournament_page(info, standings, query, None, str(exc))
        return HTMLResponse(text, status_code=400)
    return HTMLResponse(pages.tournament_page(info, standings, query, listed))


def viewer_page(
    match_id: str, site: SiteDep, as_: Annotated[str | None, Query(alias="as")] = None
) -> HTMLResponse:
    return HTMLResponse(page.render(_replay_model(site, match_id, as_)))


def tournament_info(site: SiteDep) -> TournamentInfo:
    return site.folder.info(site.viewpoints())


def standings(site: SiteDep) -> StandingsReport:
    return site.folder.standings()


def matches(site: SiteDep, query: Annotated[MatchQuery, Query()]) -> MatchList:
    return site.folder.matches(query)


def match(match_id: str, site: SiteDep) -> MatchSummary:
    return site.folder.match(match_id)


def replay_model(
    match_id: str, site: SiteDep, as_: Annotated[str | None, Query(alias="as")] = None
) -> dict[str, Any]:
    """The replay viewer's model of the match, as referee/viewer/model.py documents it."""
    return _replay_model(site, match_id, as_)


def _replay_model(site: Site, match_id: str, wanted: str | None) -> dict[str, Any]:
    viewer = check_viewpoint(site.access, site.seats, wanted)
    path = site.folder.replay(match_id)
    try:
        return model.load(path, viewer)
    except (ReplayError, ValueError, GameError) as exc:
        raise ReplayBroken(f"match {match_id}: its replay cannot be shown: {exc}") from None


async def events(site: SiteDep) -> EventSourceResponse:
    """`progress` events: the tournament's Progress now, then after every change."""
    site.feed.room()  # Full: refused here, before the stream starts
    shutdown = anyio.Event()  # set when the server stops: the stream then ends cleanly

    async def stream() -> AsyncIterator[ServerSentEvent]:
        async with site.feed.listen() as queue:
            while (progress := await _next(queue, shutdown)) is not None:
                yield ServerSentEvent(data=progress.model_dump_json(), event="progress")

    return EventSourceResponse(
        stream(),
        ping=PING_S,
        send_timeout=SEND_TIMEOUT_S,
        shutdown_event=shutdown,
        shutdown_grace_period=1.0,
    )


async def _next(queue: asyncio.Queue[Progress], shutdown: anyio.Event) -> Progress | None:
    """The next progress, or None once the server stops. A task group, so that neither wait
    outlives the other, however the stream ends."""
    got: list[Progress] = []
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


STATUS: dict[type[Exception], int] = {
    BadQuery: 400,
    Refused: 403,
    NotFound: 404,
    Held: 409,
    FolderError: 500,
    ReplayBroken: 500,
    Full: 503,
}


def _answer(request: Request, status: int, message: str) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse(ErrorBody(error=message).model_dump(), status_code=status)
    return HTMLResponse(pages.error_page(status, message), status_code=status)


def _refusal(status: int) -> Any:
    async def handler(request: Request, exc: Exception) -> Response:
        return _answer(request, status, str(exc))

    return handler


async def _bad_request(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    said = "; ".join(
        f"{'.'.join(str(p) for p in error['loc'][1:]) or 'request'}: {error['msg']}"
        for error in exc.errors()
    )
    return _answer(request, 400, f"bad request: {said}")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _answer(request, exc.status_code, str(exc.detail))
