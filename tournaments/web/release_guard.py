"""The tournament server's guard of its results (read_models/release_views.py says who sees
what): every route that shows a result asks `asker` who is asking, under the release the
tournament's SQLite holds now (read on every request: `arena tournament release` takes effect
without a restart).

The operator is the server started with `--as referee`, which serves loopback only (access.py):
whoever can reach it can read every seat's hand already, so a token would guard nothing more.
An author sends their token as the header Authorization: Bearer TOKEN (never in a query string
or a cookie), checked by the one bearer check (bearer.py) as on every other route: a malformed
or wrong one is a 401, counted against the client's failed token checks, at the ladder's limit
(FAILED_TOKENS_PER_CLIENT): over it, a 429 before any check.
Any other request is a visitor's. An answer to an author's token is `Cache-Control: no-store`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request, Response

from referee.replays.walk import PUBLIC
from tournaments.contest import Entrants
from tournaments.read_models.release_views import Audience, WrongToken, audience, bots_of
from tournaments.web.access import Access, Refused
from tournaments.web.bearer import Credentials, bearer_token, scheme, unauthorized
from tournaments.web.gate import client_of
from tournaments.web.throttle import Throttle

_author = scheme(
    "entrant", "an entrant's author token (its sha256 is in the final's entrants.json)"
)


def asker(
    request: Request,
    response: Response,
    credentials: Annotated[Credentials, Depends(_author)],
) -> Audience:
    """What the asker of this request may see of the results now."""
    site = request.app.state.site
    terms = site.folder.terms()
    own: frozenset[str] = frozenset()
    if credentials is not None:
        token = bearer_token(request, site.failed_tokens, credentials, "author")
        own = _entrant(request, site.failed_tokens, token, terms.entrants)
        response.headers["Cache-Control"] = "no-store"
    return audience(terms.release, site.access is Access.REFEREE, own)


def _entrant(
    request: Request, failed: Throttle, token: str, entrants: Entrants | None
) -> frozenset[str]:
    """The bots of a well-formed token (bearer_token checked it and the client's limit); a
    wrong one is a failed check and a 401, as a wrong token is on the ladder's routes."""
    try:
        return bots_of(entrants, token)
    except WrongToken as exc:
        failed.record(client_of(request))
        raise unauthorized(str(exc)) from None


Asker = Annotated[Audience, Depends(asker)]


def own_viewpoint(seats: list[int], wanted: str | None) -> str:
    """The viewpoint an entrant reads their match as: one of their seats (the first when none
    is asked for) or the public's; Refused for another seat's or the referee's."""
    allowed = [str(seat) for seat in seats] + [PUBLIC]
    if wanted is None:
        return allowed[0]
    if wanted not in allowed:
        raise Refused(
            f"you see this match as your seat{'s' if len(seats) > 1 else ''} "
            f"({', '.join(allowed[:-1])}) or as the public, not as {wanted}"
        )
    return wanted
