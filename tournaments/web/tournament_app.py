"""The tournament server's routes (FastAPI): the page, the replay viewer for each match, the
JSON beside them and the live updates. The routes only translate HTTP: what they show comes
from the tournament's read model (tournaments.read_models.tournament_reads), and every refusal
is one line, JSON under /api/, HTML elsewhere.

    GET /                         the tournament page (?bot= &result= &cause= &offset=)
    GET /matches/ID               the match in the replay viewer (?as=, see access.py)
    GET /api/tournament           TournamentInfo
    GET /api/standings            tournaments.standings.StandingsReport
    GET /api/matches              MatchList (the same filters, and limit)
    GET /api/matches/ID           MatchSummary
    GET /api/matches/ID/replay    the viewer's model of the match (referee/replays/viewer/model.py)
    GET /api/events               server-sent events: `progress`, a Progress, at once and on
                                  every change
    GET /audit                    the audit log (every release: who, when, why), on the
                                  operator's server only (`--as referee`); 404 elsewhere
    GET /api/audit                AuditLog, the same
    GET /api/openapi.json         the schema of all of it

Results (standings, matches, replays) follow the tournament's release (release_guard.py): hidden,
the page and /api/tournament show what it is and how far it has got and every other route
answers 403 "results are hidden until the organiser releases them"; participants, so does an
author, but for their own bots' standings rows and matches (their own seats' views) when they
send their token; public, all of it. The server started `--as referee` is the operator's and
shows everything, whatever the release. The live updates carry the Progress only, the counts
the hidden page shows too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import HTMLResponse
from sse_starlette import EventSourceResponse

from referee.replays.viewer import page
from tournaments.read_models.errors import BadQuery, FolderError
from tournaments.read_models.ladder_models import AuditLog
from tournaments.read_models.release_views import (
    HIDDEN,
    Audience,
    ResultsHidden,
    WrongToken,
    own_standings,
)
from tournaments.read_models.tournament_models import (
    MatchList,
    MatchQuery,
    MatchSummary,
    Progress,
    TournamentInfo,
)
from tournaments.read_models.tournament_reads import Held, NotFound, TournamentFolder
from tournaments.standings import StandingsReport
from tournaments.web import pages
from tournaments.web.access import Access, Refused, check_viewpoint, viewpoints
from tournaments.web.gate import client_of
from tournaments.web.ladder_app import FAILED_TOKENS_PER_CLIENT
from tournaments.web.live import INTERVAL_S, Feed, Full
from tournaments.web.release_guard import Asker, own_viewpoint
from tournaments.web.serving import (
    ERRORS,
    ReplayBroken,
    api_app,
    live_events,
    refusals,
    replay_model,
)
from tournaments.web.throttle import Throttle


@dataclass(frozen=True)
class Site:
    folder: TournamentFolder
    access: Access
    feed: Feed[Progress]
    seats: int  # at every table: a tournament's configuration never changes
    failed_tokens: Throttle = field(
        default_factory=lambda: Throttle(FAILED_TOKENS_PER_CLIENT, "failed token checks")
    )

    def viewpoints(self) -> list[str]:
        return viewpoints(self.access, self.seats)


def create_app(
    folder: TournamentFolder,
    access: Access = Access.PUBLIC,
    max_live: int = 16,
    interval_s: float = INTERVAL_S,
) -> FastAPI:
    app = api_app("arena web", "A tournament's standings, matches and replays")
    seats = folder.snapshot().config.format.seats
    app.state.site = Site(folder, access, Feed(folder, max_live, interval_s), seats)
    refusals(app, STATUS, folder.path)
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
    app.get("/api/matches/{match_id}/replay", responses=ERRORS)(match_replay)
    app.get("/api/events", response_class=EventSourceResponse, responses=ERRORS)(events)
    app.get("/audit", response_class=HTMLResponse, responses=ERRORS)(audit_page)
    app.get("/api/audit", responses=ERRORS)(audit)


def tournament_page(
    site: SiteDep, asker: Asker, query: Annotated[MatchQuery, Query()]
) -> HTMLResponse:
    snap = site.folder.snapshot()
    info = site.folder.info(site.viewpoints(), asker.release, snap)
    if not asker.everything:  # an author's own results are theirs through the API only
        return HTMLResponse(pages.results_hidden_page(info, HIDDEN))
    standings = site.folder.standings(snap)
    try:
        listed = site.folder.matches(query, snap)
    except BadQuery as exc:
        text = pages.tournament_page(info, standings, query, None, str(exc))
        return HTMLResponse(text, status_code=400)
    return HTMLResponse(pages.tournament_page(info, standings, query, listed))


def viewer_page(
    match_id: str,
    site: SiteDep,
    asker: Asker,
    as_: Annotated[str | None, Query(alias="as")] = None,
) -> HTMLResponse:
    shown = page.render(_replay_model(site, asker, match_id, as_))
    # An entrant's own seat: kept by no cache on the way (as the JSON answers to a token).
    private = not asker.everything
    return HTMLResponse(shown, headers={"Cache-Control": "no-store"} if private else None)


def tournament_info(site: SiteDep, asker: Asker) -> TournamentInfo:
    return site.folder.info(site.viewpoints(), asker.release)


def standings(site: SiteDep, asker: Asker) -> StandingsReport:
    asker.check_results()
    report = site.folder.standings()
    return report if asker.everything else own_standings(report, asker.bots)


def matches(site: SiteDep, asker: Asker, query: Annotated[MatchQuery, Query()]) -> MatchList:
    asker.check_results()
    return site.folder.matches(query, only=asker.only)


def match(match_id: str, site: SiteDep, asker: Asker) -> MatchSummary:
    asker.check_results()
    return site.folder.match(match_id, only=asker.only)


def match_replay(
    match_id: str,
    site: SiteDep,
    asker: Asker,
    as_: Annotated[str | None, Query(alias="as")] = None,
) -> dict[str, Any]:
    """The replay viewer's model of the match, as referee/replays/viewer/model.py documents it."""
    return _replay_model(site, asker, match_id, as_)


def _replay_model(site: Site, asker: Audience, match_id: str, wanted: str | None) -> dict[str, Any]:
    if asker.everything:
        viewer = check_viewpoint(site.access, site.seats, wanted)
    else:
        asker.check_results()
        mine = site.folder.match(match_id, only=asker.bots)  # NotFound when not theirs
        viewer = own_viewpoint([s.seat for s in mine.seats if s.bot in asker.bots], wanted)
    return replay_model(site.folder.replay(match_id), viewer, match_id)


def operator_only(site: SiteDep) -> None:
    """The audit log is the operator's: the public server has no such page (404, as for any
    path it does not serve), whatever the release and whatever token is sent."""
    if site.access is not Access.REFEREE:
        raise NotFound("no such page")


Operator = Annotated[None, Depends(operator_only)]


def audit_page(site: SiteDep, _: Operator) -> HTMLResponse:
    name = site.folder.snapshot().config.name
    return HTMLResponse(pages.final_audit_page(name, site.folder.audit()))


def audit(site: SiteDep, _: Operator) -> AuditLog:
    return AuditLog(entries=site.folder.audit())


async def events(request: Request, site: SiteDep) -> EventSourceResponse:
    """`progress` events: the tournament's Progress now, then after every change."""
    return live_events(site.feed, client_of(request))


STATUS: dict[type[Exception], int] = {
    BadQuery: 400,
    Refused: 403,
    ResultsHidden: 403,
    WrongToken: 403,
    NotFound: 404,
    Held: 409,
    FolderError: 500,
    ReplayBroken: 500,
    Full: 503,
}
