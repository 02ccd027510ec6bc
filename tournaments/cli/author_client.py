"""An author's client of a ladder's web server, for `arena author ...`: the token from a file or
$ARENA_AUTHOR_TOKEN (never a command-line value: `ps` and shell histories show those), sent as
the header Authorization: Bearer TOKEN, never in the URL; a refusal becomes one line."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

TOKEN_VARIABLE = "ARENA_AUTHOR_TOKEN"
TIMEOUT_S = 60


class ClientError(Exception):
    """What went wrong, in one line: a missing token, an unreachable server, a refusal."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is refused (an HTTPError): urllib would send the token on to wherever it
    points, another host included."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def author_token(token_file: Path | None) -> str:
    """The token: the first line of token_file, else $ARENA_AUTHOR_TOKEN."""
    if token_file is not None:
        try:
            lines = token_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ClientError(f"cannot read the token file {token_file}: {exc}") from None
        token = lines[0].strip() if lines else ""
        if not token:
            raise ClientError(f"the token file {token_file} is empty")
        return _printable(token, f"the token file {token_file}")
    token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        raise ClientError(f"give --token-file FILE or set ${TOKEN_VARIABLE} to your author token")
    return _printable(token, f"${TOKEN_VARIABLE}")


def _printable(token: str, where: str) -> str:
    """A token goes in a header: a control character or a non-ASCII one would break it."""
    if not (token.isascii() and token.isprintable()):
        raise ClientError(f"{where} does not hold a token: tokens are printable ASCII")
    return token


def base_url(url: str) -> str:
    """The ladder's address, without a trailing slash: http or https, no query, no fragment."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ClientError(f"{url!r} is not the http:// or https:// address of a ladder")
    if parts.query or parts.fragment or "@" in parts.netloc:
        raise ClientError(f"{url!r}: give the ladder's address alone (no user, query or #)")
    return url.rstrip("/")


def get(url: str, path: str, token: str) -> bytes:
    """The body of GET url+path with the token; ClientError with the server's one line."""
    request = urllib.request.Request(base_url(url) + path)
    return _sent(request, url, token, TIMEOUT_S, "{code}: {said}")


def post(
    url: str,
    path: str,
    body: bytes,
    token: str,
    timeout: float = TIMEOUT_S,
    kind: str = "application/octet-stream",
) -> bytes:
    """The answer to POST url+path of body (an archive; or JSON, `kind`) with the token;
    ClientError with the server's one line."""
    request = urllib.request.Request(base_url(url) + path, data=body, method="POST")
    request.add_header("Content-Type", kind)
    return _sent(request, url, token, timeout, "the ladder refused it ({code}): {said}")


def send_json(url: str, path: str, token: str, method: str, body: object = None) -> bytes:
    """The answer to METHOD url+path (PUT, DELETE...) with body as JSON, if any, and the token;
    ClientError with the server's one line."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base_url(url) + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    return _sent(request, url, token, TIMEOUT_S, "the ladder refused it ({code}): {said}")


def _sent(
    request: urllib.request.Request, url: str, token: str, timeout: float, refused: str
) -> bytes:
    """The answer's body, the token sent as the Bearer header; ClientError with the server's one
    line (as `refused` words it, from {code} and {said}), or why the ladder was not reached."""
    request.add_header("Authorization", f"Bearer {token}")
    try:
        with _OPENER.open(request, timeout=timeout) as answer:
            body: bytes = answer.read()
            return body
    except urllib.error.HTTPError as error:
        said = _said(error.read())
        raise ClientError(refused.format(code=error.code, said=said)) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ClientError(f"cannot reach {base_url(url)}: {reason}") from None


def get_json(url: str, path: str, token: str) -> object:
    return json.loads(get(url, path, token))


def _said(body: bytes) -> str:
    try:
        said = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return body.decode(errors="replace")[:200]
    return str(said)
