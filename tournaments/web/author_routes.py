"""An author's own routes on the ladder's web server: what they see of their bots and matches,
and only they (the operator keeps their own routes). Each takes the author's token as the
header Authorization: Bearer TOKEN, never in a query string or a cookie; a missing, malformed
or wrong one is a 401 counted against the client's failed token checks (the ladder's
FAILED_TOKENS_PER_CLIENT), as the operator's is. Every answer is `Cache-Control: no-store`.

    GET /me                                 the page: the author pastes their token; it stays
                                            in the tab's sessionStorage and goes as the header
    GET /api/me                             Me: the author, their bots, versions, statuses,
                                            and W-D-L against each opponent
    GET /api/me/matches                     MyMatches, the latest first (?limit= &offset=)
    GET /api/me/matches/ID/replay           the replay cut to their seat (JSON Lines,
                                            referee/replays/seat_file.py; ?seat=)
    GET /api/me/matches/ID/view             the viewer's model as their seat (?seat=)
    GET /api/me/matches/ID/page             the viewer's page as their seat (?seat=)
    GET /api/me/matches/ID/log              MatchOutput: their bot's output in the match

A match not theirs is a 404 worded as one that does not exist; its replay, view, page and log
are a 409 until every seating of its deal has ended.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from arena_games.base import GameError
from arena_games.replay_file import ReplayError
from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, Response

from referee.replays.seat_file import seat_text
from referee.replays.viewer import page
from tournaments.read_models.author_models import Me, MyMatches
from tournaments.read_models.author_reads import AuthorReads
from tournaments.read_models.ladder_models import MatchOutput
from tournaments.web import pages
from tournaments.web.bearer import Credentials, bearer_token, scheme
from tournaments.web.serving import ERRORS, ErrorBody, ReplayBroken, replay_model

PRIVATE = {"Cache-Control": "no-store"}
# The /me page (and the viewer's page in its frame, which inherits it): its own inline script
# and styles, requests to this server only, no form sent anywhere (a form sent would put the
# token in an address), no page may frame it.
ME_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; frame-src 'self'; img-src 'self' blob:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
AUTHOR_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    401: {"model": ErrorBody, "description": "the author token missing, malformed or wrong"},
}
_author = scheme("author", "an author's token (`author add`)")


def author_token(request: Request, credentials: Annotated[Credentials, Depends(_author)]) -> str:
    """The token given (bearer.py); a wrong one is refused by the read model (AccessDenied),
    which ladder_app counts as a failed check too."""
    return bearer_token(request, request.app.state.site.failed_tokens, credentials, "author")


AuthorToken = Annotated[str, Depends(author_token)]
Seat = Annotated[int | None, Query(ge=0, description="one of your seats; your first if none")]


def reads(request: Request) -> AuthorReads:
    found: AuthorReads = request.app.state.author_reads
    return found


Reads = Annotated[AuthorReads, Depends(reads)]


def author_routes(app: FastAPI, author_reads: AuthorReads) -> None:
    app.state.author_reads = author_reads
    app.get("/me", response_class=HTMLResponse, responses=ERRORS)(me_page)
    app.get("/api/me", responses=AUTHOR_ERRORS)(me)
    app.get("/api/me/matches", responses=AUTHOR_ERRORS)(my_matches)
    replay_answer: dict[int | str, dict[str, Any]] = {
        200: {"content": {"application/x-ndjson": {}}, "description": "JSON Lines"}
    }
    app.get(
        "/api/me/matches/{match_id}/replay",
        response_class=Response,
        responses={**AUTHOR_ERRORS, **replay_answer},
    )(my_replay)
    app.get("/api/me/matches/{match_id}/view", responses=AUTHOR_ERRORS)(my_view)
    app.get(
        "/api/me/matches/{match_id}/page", response_class=HTMLResponse, responses=AUTHOR_ERRORS
    )(my_page)
    app.get("/api/me/matches/{match_id}/log", responses=AUTHOR_ERRORS)(my_log)


def me_page() -> HTMLResponse:
    """The author's page: nothing in it but the form and the script that asks /api/me."""
    headers = {**PRIVATE, "Content-Security-Policy": ME_POLICY, "Referrer-Policy": "no-referrer"}
    return HTMLResponse(pages.me_page(), headers=headers)


def me(author: Reads, token: AuthorToken, response: Response) -> Me:
    """The author, their bots with their versions and statuses, and their W-D-L against each
    opponent (the matches whose deals have ended)."""
    response.headers.update(PRIVATE)
    return author.me(token)


def my_matches(
    author: Reads,
    token: AuthorToken,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> MyMatches:
    """The author's finished matches, the latest first."""
    response.headers.update(PRIVATE)
    return author.matches(token, limit, offset)


def my_replay(match_id: str, author: Reads, token: AuthorToken, seat: Seat = None) -> Response:
    """The match's replay as JSON Lines, cut to the author's seat: nothing another seat hid."""
    found = author.replay(token, match_id, seat)
    return seat_file(found.path, found.seat, match_id)


def seat_file(path: Path, seat: int, match_id: str) -> Response:
    """A replay cut to one seat, as a JSON Lines file to save (a rated match's or a
    challenge's): nothing another seat hid."""
    try:
        text = seat_text(path, seat)
    except (ReplayError, ValueError, GameError) as exc:
        raise ReplayBroken(f"match {match_id}: its replay cannot be shown: {exc}") from None
    name = f"{match_id}-seat{seat}.jsonl"
    headers = {**PRIVATE, "Content-Disposition": f'attachment; filename="{name}"'}
    return Response(text, media_type="application/x-ndjson", headers=headers)


def my_view(
    match_id: str, author: Reads, token: AuthorToken, response: Response, seat: Seat = None
) -> dict[str, Any]:
    """The replay viewer's model of the match as the author's seat."""
    response.headers.update(PRIVATE)
    found = author.replay(token, match_id, seat)
    return replay_model(found.path, str(found.seat), match_id)


def my_page(match_id: str, author: Reads, token: AuthorToken, seat: Seat = None) -> HTMLResponse:
    """The replay viewer's page of the match as the author's seat (the /me page shows it in a
    sandboxed frame)."""
    found = author.replay(token, match_id, seat)
    return seat_page(found.path, found.seat, match_id)


def seat_page(path: Path, seat: int, match_id: str) -> HTMLResponse:
    """The replay viewer's page of a match as one seat (a rated match's or a challenge's)."""
    return HTMLResponse(page.render(replay_model(path, str(seat), match_id)), headers=PRIVATE)


def my_log(match_id: str, author: Reads, token: AuthorToken, response: Response) -> MatchOutput:
    """What the author's bot wrote (stdout and stderr) in the match, and no other seat's."""
    response.headers.update(PRIVATE)
    return author.output(token, match_id)
