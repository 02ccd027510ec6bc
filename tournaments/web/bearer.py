"""The one check of a token sent as `Authorization: Bearer TOKEN`, shared by every route that
takes one (the ladder's operator, ladder, invite and author tokens; a final's entrants): the
client must be under its limit of failed checks (throttle.py), and a missing or malformed token
is a failed check too, and a 401. Whether the token is the right one is the caller's to judge
(with hmac.compare_digest, which refuses a str that is not ASCII: hence well_formed)."""

from __future__ import annotations

from fastapi import HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from tournaments.web.gate import client_of
from tournaments.web.throttle import Throttle

Credentials = HTTPAuthorizationCredentials | None


def scheme(name: str, description: str) -> HTTPBearer:
    """An OpenAPI security scheme for one kind of token; the check is bearer_token's."""
    return HTTPBearer(auto_error=False, scheme_name=name, description=description)


def bearer_token(request: Request, failed: Throttle, credentials: Credentials, which: str) -> str:
    """The token given, once the client is under its limit of failed checks (else a 429)."""
    client = client_of(request)
    failed.check(client)
    token = None if credentials is None else credentials.credentials
    if token is None or not well_formed(token):
        failed.record(client)
        said = "is malformed: tokens are printable ASCII" if token else "is missing"
        raise unauthorized(
            f"the {which} token {said}: send it as the header Authorization: Bearer TOKEN"
        )
    return token


def well_formed(token: str) -> bool:
    """What a token can be: printable ASCII (compare_digest refuses any other str)."""
    return token.isascii() and token.isprintable()


def unauthorized(message: str) -> HTTPException:
    return HTTPException(401, message, headers={"WWW-Authenticate": "Bearer"})
