"""The live ladder's web server (FastAPI), served by `arena ladder serve` beside the ladder: the
leaderboard, each bot's page, recent matches opening in the replay viewer, live updates, JSON
for all of it, and the operator's actions. What it shows comes from the ladder's read model,
tournaments.read_models.ladder_reads (ladder_models.py's models are the JSON's schema); the
routes only translate HTTP, and every refusal is one line, JSON under /api/, HTML elsewhere.

    GET  /                              the leaderboard and recent matches (?against=BOT)
    GET  /bots/NAME                     a bot's page
    GET  /matches/ID                    the match in the replay viewer (public; once its deal
                                        has finished in every seating)
    GET  /api/ladder                    LadderState
    GET  /api/leaderboard               [LeaderboardRow] (?against=BOT &retired=true)
    GET  /api/matches                   [MatchSummary], the latest first (?limit= &version=)
    GET  /api/matches/ID/replay         the viewer's model of the match
    GET  /api/matches/ID/output         MatchOutput, what each seat's bot wrote (?seat=): the
                                        operator token; once its deal has ended everywhere
    GET  /api/bots/NAME                 BotPage
    GET  /api/bots/NAME/history         BotHistory     } history_routes.py: the rating series,
    GET  /pairs/A/B, /api/pairs/A/B     PairPage       } and a pair's matches and W-D-L
    GET  /api/events                    server-sent events: `progress`, a LadderProgress
    POST /api/bots                      add a bot             } the operator token, as
    POST /api/bots/NAME/update          a new version         } Authorization: Bearer TOKEN
    POST /api/bots/NAME/pause|resume|retire                   }
    POST /api/remote-bots               a remote bot joins: the ladder token (the house's bot),
                                        or an author's token (theirs; again: a new version)
    POST /api/authors                   someone registers as an author: the invite token, when
                                        [authors] registration = "invite"
    GET  /me, /api/me, /api/me/...      an author's own bots and matches: author_routes.py
    PUT, GET, DELETE /api/me/webhook    an author's webhook: hook_routes.py
    POST /api/bots/NAME/versions        an author uploads a version (the body: a .tar.gz or .zip):
                                        their token; 202 and the version `building`
    GET  /audit                         the operator's audit page: the token pasted stays in
                                        the tab's sessionStorage and goes as the header
    GET  /api/audit                     AuditLog: the operator token
    GET  /api/openapi.json              the schema of all of it
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from referee.replays.viewer import page
from tournaments.ladder.authors import AuthorError
from tournaments.ladder.challenges import ChallengeRefused, NoSuchChallenge, OverLimit
from tournaments.ladder.config_file import Submissions
from tournaments.ladder.database import HOUSE, LadderStoreError
from tournaments.ladder.freeze import Frozen
from tournaments.ladder.roster import NoSuchBot, RosterError
from tournaments.ladder.uploads import VERSIONS_FOLDER, NotYours, UploadRefused
from tournaments.read_models.author_reads import AuthorReads
from tournaments.read_models.challenge_reads import ChallengeReads
from tournaments.read_models.errors import BadQuery, FolderError
from tournaments.read_models.history_reads import HistoryReads
from tournaments.read_models.ladder_models import (
    Added,
    AuditLog,
    AuthorTicket,
    BotPage,
    BotStatus,
    LadderProgress,
    LadderState,
    LeaderboardRow,
    MatchOutput,
    MatchSummary,
    RemoteTicket,
    Submitted,
)
from tournaments.read_models.ladder_reads import (
    AccessDenied,
    LadderApi,
    NoSuchMatch,
    RegistrationClosed,
    ReplayHeld,
    UploadsClosed,
    WrongInvite,
)
from tournaments.submissions.archive_rules import SubmissionRefused
from tournaments.web import pages
from tournaments.web.access import Access, Refused, check_viewpoint
from tournaments.web.author_routes import ME_POLICY, PRIVATE, AuthorToken, author_routes
from tournaments.web.bearer import Credentials, bearer_token, scheme
from tournaments.web.challenge_routes import challenge_routes
from tournaments.web.gate import client_of
from tournaments.web.history_routes import history_routes
from tournaments.web.hook_routes import hook_routes
from tournaments.web.http_limits import LongBody
from tournaments.web.live import INTERVAL_S, Feed, Full
from tournaments.web.serving import (
    ERRORS,
    ErrorBody,
    ReplayBroken,
    answer,
    api_app,
    live_events,
    refusals,
    replay_model,
)
from tournaments.web.throttle import Throttle

TOKEN_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    401: {"model": ErrorBody, "description": "a token missing, malformed or wrong"},
    429: {"model": ErrorBody, "description": "too many failed token checks from this address"},
}


REGISTRATIONS_PER_CLIENT = "10/hour"  # remote bots an address may register
AUTHOR_REGISTRATIONS_PER_CLIENT = "10/hour"  # authors an address may register
FAILED_TOKENS_PER_CLIENT = "10/minute"  # wrong, missing or malformed tokens from an address


@dataclass(frozen=True)
class LadderSite:
    api: LadderApi
    feed: Feed[LadderProgress]
    registrations: Throttle = field(
        default_factory=lambda: Throttle(REGISTRATIONS_PER_CLIENT, "registrations")
    )
    failed_tokens: Throttle = field(
        default_factory=lambda: Throttle(FAILED_TOKENS_PER_CLIENT, "failed token checks")
    )
    author_registrations: Throttle = field(
        default_factory=lambda: Throttle(AUTHOR_REGISTRATIONS_PER_CLIENT, "author registrations")
    )
    uploads: Throttle = field(default_factory=lambda: Throttle("10/hour", "submissions"))


def create_ladder_app(
    folder: Path,
    max_live: int = 16,
    interval_s: float = INTERVAL_S,
    after_change: Callable[[], None] | None = None,
) -> FastAPI:
    """The app of a ladder folder; FolderError when it holds no readable ladder. after_change
    (from serve) returns once serve has taken in a roster change the API made."""
    api = LadderApi.open(folder, after_change)
    app = api_app(
        "arena ladder",
        "A live ladder: leaderboard, bots, matches, replays, and its operator's actions",
    )
    per_hour = api.config.submissions.per_author_per_hour
    feed = Feed(api, max_live, interval_s, "this ladder")
    app.state.site = LadderSite(api, feed, uploads=Throttle(f"{per_hour}/hour", "submissions"))
    refusals(app, STATUS, folder)
    app.add_exception_handler(AccessDenied, _denied)
    app.add_exception_handler(WrongInvite, _wrong_invite)
    _routes(app)
    author_routes(app, AuthorReads(api))
    history_routes(app, HistoryReads(api))
    hook_routes(app)  # PUT, GET, DELETE /api/me/webhook
    challenge_routes(app, ChallengeReads(api))
    return app


def site(request: Request) -> LadderSite:
    found: LadderSite = request.app.state.site
    return found


SiteDep = Annotated[LadderSite, Depends(site)]
_operator = scheme("operator", "the [tokens] operator of ladder.toml")
_ladder = scheme("ladder", "the [tokens] ladder of ladder.toml, or an author's token")
_invite = scheme("invite", "the invite token `arena ladder author invite` printed")


def _token(request: Request, credentials: Credentials, which: str) -> str:
    return bearer_token(request, site(request).failed_tokens, credentials, which)


def operator_token(
    request: Request, credentials: Annotated[Credentials, Depends(_operator)]
) -> str:
    return _token(request, credentials, "operator")


def ladder_token(request: Request, credentials: Annotated[Credentials, Depends(_ladder)]) -> str:
    return _token(request, credentials, "ladder (or an author's)")


def invite_token(request: Request, credentials: Annotated[Credentials, Depends(_invite)]) -> str:
    return _token(request, credentials, "invite")


async def _denied(request: Request, exc: Exception) -> Response:
    """A wrong token: 401, as a missing one, and counted against the client's failed checks."""
    site(request).failed_tokens.record(client_of(request))
    return answer(request, 401, str(exc), {"WWW-Authenticate": "Bearer"})


async def _wrong_invite(request: Request, exc: Exception) -> Response:
    """A wrong invite token: 403, counted against the client's failed checks."""
    site(request).failed_tokens.record(client_of(request))
    return answer(request, 403, str(exc))


def operator_view(
    request: Request, credentials: Annotated[Credentials, Depends(_operator)]
) -> bool:
    """Whether the reader is the operator (the token as the header): they see everything after
    a freeze whatever the release. No header: a visitor; a wrong token: 401, counted."""
    if credentials is None:
        return False
    site(request).api.check_operator(_token(request, credentials, "operator"))
    return True


OperatorToken = Annotated[str, Depends(operator_token)]
OperatorView = Annotated[bool, Depends(operator_view)]
LadderToken = Annotated[str, Depends(ladder_token)]
InviteToken = Annotated[str, Depends(invite_token)]


def _routes(app: FastAPI) -> None:
    app.get("/", response_class=HTMLResponse, responses=ERRORS)(ladder_page)
    app.get("/bots/{name}", response_class=HTMLResponse, responses=ERRORS)(bot_page)
    app.get("/matches/{match_id}", response_class=HTMLResponse, responses=ERRORS)(viewer_page)
    app.get("/api/ladder", responses=ERRORS)(ladder_state)
    app.get("/api/leaderboard", responses=ERRORS)(leaderboard)
    app.get("/api/matches", responses=ERRORS)(matches)
    app.get("/api/matches/{match_id}/replay", responses=ERRORS)(match_replay)
    app.get("/api/matches/{match_id}/output", responses=TOKEN_ERRORS)(match_output)
    app.get("/api/bots/{name}", responses=ERRORS)(bot)
    app.get("/api/events", response_class=EventSourceResponse, responses=ERRORS)(events)
    app.get("/audit", response_class=HTMLResponse, responses=ERRORS)(audit_page)
    app.get("/api/audit", responses=TOKEN_ERRORS)(audit)
    app.post("/api/bots", status_code=201, responses=TOKEN_ERRORS)(add_bot)
    app.post("/api/bots/{name}/update", status_code=201, responses=TOKEN_ERRORS)(update_bot)
    for action in ("pause", "resume", "retire"):
        route = app.post(f"/api/bots/{{name}}/{action}", responses=TOKEN_ERRORS, name=action)
        route(_status_action(action))
    app.post("/api/remote-bots", status_code=201, responses=TOKEN_ERRORS)(register_remote)
    app.post("/api/authors", status_code=201, responses=TOKEN_ERRORS)(register_author)
    app.post("/api/bots/{name}/versions", status_code=202, responses=UPLOAD_ERRORS)(submit_version)


# --- reading ---------------------------------------------------------------------------------


Against = Annotated[str | None, Query(description="each row's win rate against this bot")]


def ladder_page(site: SiteDep, against: Against = None) -> HTMLResponse:
    against = against or None  # the form's "choose a bot" sends an empty value
    rows = leaderboard(site, against)
    state = site.api.state()
    text = pages.ladder_page(state, rows, against, site.api.recent_matches(limit=30))
    return HTMLResponse(text)


def bot_page(name: str, site: SiteDep) -> HTMLResponse:
    found = site.api.bot_page(name)
    history = HistoryReads(site.api).history(name)
    return HTMLResponse(pages.ladder_bot_page(site.api.state(), found, history))


def viewer_page(match_id: str, site: SiteDep) -> HTMLResponse:
    return HTMLResponse(page.render(_replay_model(site, match_id, None)))


def ladder_state(site: SiteDep) -> LadderState:
    return site.api.state()


def leaderboard(
    site: SiteDep, against: Against = None, retired: bool = False, whole: OperatorView = False
) -> list[LeaderboardRow]:
    """Best first; with `against`, each row's points per meeting against that bot's version
    (a draw is half a point). After a freeze not released to the public, the board as it stood
    then (the operator token as the header: the board now)."""
    return site.api.leaderboard(against=against, retired=retired, whole=whole)


def matches(
    site: SiteDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    version: Annotated[str | None, Query(description="NAME@N: its matches only")] = None,
    whole: OperatorView = False,
) -> list[MatchSummary]:
    """The latest finished matches, the latest first (after a freeze not released to the
    public, none finished since, but to the operator)."""
    return site.api.recent_matches(limit=limit, version=version, whole=whole)


def match_replay(
    match_id: str,
    site: SiteDep,
    as_: Annotated[str | None, Query(alias="as")] = None,
    whole: OperatorView = False,
) -> dict[str, Any]:
    """The replay viewer's model of the match, as referee/replays/viewer/model.py documents it."""
    return _replay_model(site, match_id, as_, whole)


def _replay_model(
    site: LadderSite, match_id: str, wanted: str | None, whole: bool = False
) -> dict[str, Any]:
    viewer = check_viewpoint(Access.PUBLIC, site.api.config.table.seats, wanted)
    return replay_model(site.api.replay(match_id, whole), viewer, match_id)


def match_output(
    match_id: str,
    site: SiteDep,
    token: OperatorToken,
    seat: Annotated[int | None, Query(ge=0, description="this seat's only")] = None,
) -> MatchOutput:
    """What each seat's bot wrote (stdout and stderr) in the match: the operator's only, and
    refused (409) until every seating of its deal has ended."""
    return site.api.match_output(token, match_id, seat)


def bot(name: str, site: SiteDep, whole: OperatorView = False) -> BotPage:
    return site.api.bot_page(name, whole=whole)


async def events(request: Request, site: SiteDep) -> EventSourceResponse:
    """`progress` events: the ladder's LadderProgress now, then after every change."""
    return live_events(site.feed, client_of(request))


def audit_page() -> HTMLResponse:
    """The operator's audit page: nothing in it but the form and the script."""
    headers = {**PRIVATE, "Content-Security-Policy": ME_POLICY, "Referrer-Policy": "no-referrer"}
    return HTMLResponse(pages.audit_page(), headers=headers)


def audit(site: SiteDep, token: OperatorToken, response: Response) -> AuditLog:
    """Every operator, author and serve action on the ladder, oldest first: the operator's."""
    response.headers.update(PRIVATE)
    return site.api.audit(token)


# --- acting ----------------------------------------------------------------------------------


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AddBot(_Body):
    name: str
    author: str = Field(default=HOUSE, description="the author it belongs to")
    spec: str | None = Field(default=None, description="SPEC, as in `arena play`")
    remote: bool = Field(default=False, description="a bot its author runs elsewhere")
    why: str = Field(default="", max_length=200, description="kept in the audit log")


class UpdateBot(_Body):
    spec: str | None = Field(default=None, description="the new version's SPEC; none if remote")
    why: str = Field(default="", max_length=200, description="kept in the audit log")


class StatusChange(_Body):
    reason: str = Field(default="", max_length=200, description="shown on the bot's page")


class RegisterRemote(_Body):
    name: str


class RegisterAuthor(_Body):
    name: str
    team: str | None = None


class Version(BaseModel):
    version: str = Field(description="NAME@N, the version that plays from now on")


def add_bot(body: AddBot, site: SiteDep, token: OperatorToken) -> Added:
    return site.api.add_bot(token, body.name, body.spec, body.remote, body.author, body.why)


def update_bot(name: str, body: UpdateBot, site: SiteDep, token: OperatorToken) -> Version:
    return Version(version=site.api.update_bot(token, name, body.spec, body.why))


STATUS_OF = {"pause": "paused", "resume": "active", "retire": "retired"}


def _status_action(action: str) -> Any:
    status = STATUS_OF[action]

    def act(
        name: str, site: SiteDep, token: OperatorToken, body: StatusChange | None = None
    ) -> BotStatus:
        return site.api.set_status(token, name, status, body.reason if body else "")

    act.__name__ = f"{action}_bot"
    act.__doc__ = {
        "pause": "Stop scheduling the bot until it is resumed (its matches in play finish).",
        "resume": "Schedule a paused bot again, with a clean slate for the pause rule.",
        "retire": "Take the bot off the ladder for good; its history stays.",
    }[action]
    return act


def register_remote(
    request: Request, body: RegisterRemote, site: SiteDep, token: LadderToken
) -> RemoteTicket:
    """A remote bot joins the ladder: ARENA_ADDRESS and ARENA_TOKEN to run it with. With the
    ladder token it is the house's; with an author's token, that author's (a name of their
    remote bots: a new version of it). An address may register a few an hour."""
    site.registrations.hit(client_of(request))
    return site.api.register_remote(token, body.name)


def register_author(
    request: Request, body: RegisterAuthor, site: SiteDep, token: InviteToken
) -> AuthorTicket:
    """Become an author of the ladder with its invite token: the author's token, shown this
    once. 403 when registration is closed or the invite is wrong; a few an hour per address."""
    site.author_registrations.hit(client_of(request))
    return site.api.register_author(token, body.name, body.team)


UPLOAD_CHUNK = 64 * 1024
UPLOAD_ERRORS: dict[int | str, dict[str, Any]] = {
    **TOKEN_ERRORS,
    403: {"model": ErrorBody, "description": "another author's bot, or the ladder is frozen"},
    409: {"model": ErrorBody, "description": "the ladder takes no uploads (its sandbox tier)"},
    413: {"model": ErrorBody, "description": "the archive is over [submissions] archive_mb"},
}


async def submit_version(
    name: str, request: Request, site: SiteDep, token: AuthorToken
) -> Submitted:
    """Upload a version of the author's bot NAME (a new NAME makes their bot): the body is the
    archive, a .tar.gz or .zip with arena-bot.toml at its root (docs/contest.md). 202: stored,
    `building`; serve builds and validates it, and it plays once `live`. Every refusal is one
    line and stores nothing; an author may submit [submissions] per_author_per_hour an hour."""
    author = await run_in_threadpool(site.api.check_upload, token, name)
    site.uploads.hit(author.name)  # refused uploads count: each costs an unpacking
    limits = site.api.config.submissions
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limits.archive_bytes:
        raise _too_large(limits.archive_mb)
    versions = site.api.folder / VERSIONS_FOLDER
    versions.mkdir(mode=0o700, exist_ok=True)
    # Unlinked at once: a kill leaves nothing of it; never more than the limit (plus a chunk).
    with tempfile.TemporaryFile(dir=versions) as spool:
        size = 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limits.archive_bytes:
                    raise _too_large(limits.archive_mb)
                spool.write(chunk)
        except ClientDisconnect:  # cut (too slow, or the client left): nothing is stored
            raise HTTPException(400, "the upload ended before its body did") from None
        if size == 0:
            raise HTTPException(400, "the body is empty: it is the archive (.tar.gz or .zip)")
        return await run_in_threadpool(site.api.upload, author, name, spool)


def _too_large(archive_mb: float) -> HTTPException:
    # Connection: close: the rest of the body is not read (tournaments/web/http_limits.py).
    return HTTPException(413, _over(archive_mb), headers={"Connection": "close"})


def _over(archive_mb: float) -> str:
    return f"the archive is over {archive_mb:g} MB ([submissions] archive_mb)"


def upload_body(limits: Submissions) -> LongBody:
    """The upload route's body, for the web server: no 5 s deadline, but a rate to keep
    ([submissions] upload_kib_per_s), and a declared size over archive_mb refused at once."""
    return LongBody(
        "POST",
        re.compile(r"/api/bots/[^/]+/versions"),
        limits.archive_bytes,
        limits.upload_kib_per_s * 1024,
        _over(limits.archive_mb),
    )


STATUS: dict[type[Exception], int] = {
    BadQuery: 400,
    RosterError: 400,
    AuthorError: 400,
    SubmissionRefused: 400,
    UploadRefused: 400,
    NotYours: 403,
    ChallengeRefused: 400,
    NoSuchChallenge: 404,
    OverLimit: 429,
    Frozen: 403,
    UploadsClosed: 409,
    Refused: 403,
    RegistrationClosed: 403,
    NoSuchBot: 404,
    NoSuchMatch: 404,
    ReplayHeld: 409,
    FolderError: 500,
    LadderStoreError: 500,
    ReplayBroken: 500,
    Full: 503,
}
