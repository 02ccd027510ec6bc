"""The ladder's history routes: a bot's rating series, and a pair of bots' meetings (the read
model: tournaments/read_models/history_reads.py, which says what each asker sees).

    GET /api/bots/NAME/history      BotHistory: one point per rated match. A visitor's ends at
                                    a freeze whose results are not released; with a token as
                                    Authorization: Bearer TOKEN, the operator's is whole, and
                                    under `participants` the bot's own author's too
    GET /pairs/A/B                  the pair's page
    GET /api/pairs/A/B              PairPage: A's W-D-L against B, by versions and by day, and
                                    their matches (the operator's token: after a freeze too)

A wrong token is a 401, counted against the client's failed checks, as everywhere.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, FastAPI, Request
from fastapi.responses import HTMLResponse

from tournaments.read_models.history_models import BotHistory, PairPage
from tournaments.read_models.history_reads import HistoryReads
from tournaments.web import pages
from tournaments.web.bearer import Credentials, bearer_token, scheme
from tournaments.web.serving import ERRORS, ErrorBody

_viewer = scheme("viewer", "none; or the operator token, or the bot's author's token")
HISTORY_ERRORS = {
    **ERRORS,
    401: {"model": ErrorBody, "description": "a token malformed or wrong (none is fine)"},
}


def viewer_token(
    request: Request, credentials: Annotated[Credentials, Depends(_viewer)]
) -> str | None:
    """The token given, if any: none is a visitor; a malformed one is a 401."""
    if credentials is None:
        return None
    failed = request.app.state.site.failed_tokens
    return bearer_token(request, failed, credentials, "operator or author")


def reads(request: Request) -> HistoryReads:
    found: HistoryReads = request.app.state.history_reads
    return found


Reads = Annotated[HistoryReads, Depends(reads)]
Viewer = Annotated[str | None, Depends(viewer_token)]


def history_routes(app: FastAPI, history_reads: HistoryReads) -> None:
    app.state.history_reads = history_reads
    app.get("/api/bots/{name}/history", responses=HISTORY_ERRORS)(history)
    app.get("/api/pairs/{name}/{against}", responses=HISTORY_ERRORS)(pair)
    app.get("/pairs/{name}/{against}", response_class=HTMLResponse, responses=ERRORS)(pair_page)


def history(name: str, reads: Reads, token: Viewer = None) -> BotHistory:
    """The bot's rating after each of its rated matches (openskill mu and sigma, mu - 3 sigma as
    the leaderboard orders by, Elo where two seats), in the ratings' order, each version change
    marked."""
    return reads.history(name, token)


def pair(name: str, against: str, reads: Reads, token: Viewer = None) -> PairPage:
    """NAME's W-D-L against AGAINST (above it at a table: a win), by versions and by day, and
    their matches, the latest first, as the public match list shows them (the operator's token:
    after a freeze too)."""
    return reads.pair(name, against, token)


def pair_page(name: str, against: str, request: Request, reads: Reads) -> HTMLResponse:
    found = reads.pair(name, against)
    state = request.app.state.site.api.state()
    return HTMLResponse(pages.ladder_pair_page(state, found))
