"""Challenges over HTTP (tournaments/ladder/challenges.py): an author asks for unrated games of
their bot, and reads them; the operator reads them all (their token as the header). Every
answer is `Cache-Control: no-store`; a challenge not the asker's is a 404 worded as one that
does not exist (not a 403, which would tell that it does).

    POST /api/challenges                    {bot, opponents: [names] | pool: "top:N", games}
    GET  /api/challenges                    the asker's challenges (the operator's: all)
    GET  /api/challenges/ID                 one, with its matches' results
    GET  /api/challenges/ID/matches/MID/view    the viewer's model as the challenger's seat
    GET  /api/challenges/ID/matches/MID/replay  the replay cut to that seat (JSON Lines)
    GET  /api/challenges/ID/matches/MID/page    the viewer's page as that seat (?seat=)
    GET  /api/challenges/ID/matches/MID/log     MatchOutput: the challenger's bot's output

A challenge match's view, replay, page and log are a 409 until every seating of its deal has
ended, as a rated match's are (the code is author_routes.py's and author_reads.py's).

Refusals: 400 (what was wrong, in one line), 403 after the freeze, 429 over a limit of
[challenges] (naming it, and when the next game is allowed)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from tournaments.ladder.challenges import ChallengeRefused, Opponents
from tournaments.read_models.challenge_models import (
    ChallengeDetail,
    ChallengeList,
    ChallengeSummary,
)
from tournaments.read_models.challenge_reads import ChallengeReads
from tournaments.read_models.ladder_models import MatchOutput
from tournaments.web.author_routes import (
    AUTHOR_ERRORS,
    PRIVATE,
    AuthorToken,
    seat_file,
    seat_page,
)
from tournaments.web.serving import ErrorBody, replay_model

ASK_ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTHOR_ERRORS,
    403: {"model": ErrorBody, "description": "the ladder is frozen: no challenge is taken"},
    429: {"model": ErrorBody, "description": "over a [challenges] limit: which, and until when"},
}
POOL = re.compile(r"top:([0-9]{1,4})")
Seat = Annotated[int | None, Query(ge=0, description="one of your seats; your first if none")]


class Ask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bot: str = Field(min_length=1, max_length=200, description="your bot")
    opponents: list[str] | None = Field(
        default=None, max_length=100, description="the bots it plays, by name"
    )
    pool: str | None = Field(default=None, max_length=20, description="or top:N of the board")
    games: int = Field(ge=1, le=100_000, description="matches: whole deals, each in every seat")


def reads(request: Request) -> ChallengeReads:
    found: ChallengeReads = request.app.state.challenge_reads
    return found


Reads = Annotated[ChallengeReads, Depends(reads)]


def challenge_routes(app: FastAPI, challenge_reads: ChallengeReads) -> None:
    app.state.challenge_reads = challenge_reads
    app.post("/api/challenges", status_code=201, responses=ASK_ERRORS)(ask)
    app.get("/api/challenges", responses=AUTHOR_ERRORS)(listed)
    app.get("/api/challenges/{number}", responses=AUTHOR_ERRORS)(detail)
    app.get("/api/challenges/{number}/matches/{match_id}/view", responses=AUTHOR_ERRORS)(view)
    app.get(
        "/api/challenges/{number}/matches/{match_id}/replay",
        response_class=Response,
        responses=AUTHOR_ERRORS,
    )(replay)
    app.get(
        "/api/challenges/{number}/matches/{match_id}/page",
        response_class=HTMLResponse,
        responses=AUTHOR_ERRORS,
    )(seat_view)
    app.get("/api/challenges/{number}/matches/{match_id}/log", responses=AUTHOR_ERRORS)(log)


def ask(body: Ask, found: Reads, token: AuthorToken, response: Response) -> ChallengeSummary:
    """Ask for `games` unrated games of your bot's live version against the opponents' live
    versions (or the top N of the leaderboard): they play on fresh deals, beside rated play."""
    response.headers.update(PRIVATE)
    return found.ask(token, body.bot, _opponents(body), body.games)


def _opponents(body: Ask) -> Opponents:
    if (body.opponents is None) == (body.pool is None):
        raise ChallengeRefused("give either opponents (bot names) or a pool (top:N), not both")
    if body.pool is not None:
        matched = POOL.fullmatch(body.pool)
        if matched is None:
            raise ChallengeRefused(f"pool {body.pool!r}: top:N is the one pool there is")
        return Opponents(top=int(matched.group(1)))
    if not body.opponents:
        raise ChallengeRefused("opponents is empty: name at least one bot")
    return Opponents(names=tuple(body.opponents))


def listed(found: Reads, token: AuthorToken, response: Response) -> ChallengeList:
    """Your challenges, the latest first (the operator's token: everyone's)."""
    response.headers.update(PRIVATE)
    return found.list(token)


def detail(number: int, found: Reads, token: AuthorToken, response: Response) -> ChallengeDetail:
    """One of your challenges, with each match's result once its deal has ended."""
    response.headers.update(PRIVATE)
    return found.detail(token, number)


def view(
    number: int,
    match_id: str,
    found: Reads,
    token: AuthorToken,
    response: Response,
    seat: Seat = None,
) -> dict[str, Any]:
    """The replay viewer's model of a challenge match as your seat."""
    response.headers.update(PRIVATE)
    shown = found.replay(token, number, match_id, seat)
    return replay_model(shown.path, str(shown.seat), match_id)


def replay(
    number: int, match_id: str, found: Reads, token: AuthorToken, seat: Seat = None
) -> Response:
    """The challenge match's replay as JSON Lines, cut to your seat."""
    shown = found.replay(token, number, match_id, seat)
    return seat_file(shown.path, shown.seat, match_id)


def seat_view(
    number: int, match_id: str, found: Reads, token: AuthorToken, seat: Seat = None
) -> HTMLResponse:
    """The replay viewer's page of a challenge match as your seat (the /me page shows it in a
    sandboxed frame)."""
    shown = found.replay(token, number, match_id, seat)
    return seat_page(shown.path, shown.seat, match_id)


def log(
    number: int, match_id: str, found: Reads, token: AuthorToken, response: Response
) -> MatchOutput:
    """What your bot wrote (stdout and stderr) in a challenge match, and no other seat's."""
    response.headers.update(PRIVATE)
    return found.output(token, number, match_id)
