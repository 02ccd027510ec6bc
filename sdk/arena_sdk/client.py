"""Playing a bot session over gRPC: connect, say hello, answer every request, until the
referee ends the session."""

from __future__ import annotations

import logging
import os
import queue
import random
import re
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc

from arena_sdk import __version__
from arena_sdk.bot import Bot, sent_index, unwrap

log = logging.getLogger("arena_sdk")


class ArenaError(Exception):
    """The session could not be played: a refused token, no referee, a broken stream."""


class _Dropped(Exception):
    """The stream broke under the bot (the connection, not the referee, ended it)."""


# The connection dropped; the referee did not end the stream itself.
_DROPPED_CODES = frozenset({grpc.StatusCode.UNAVAILABLE})
# How grpc's UNAVAILABLE names a TLS handshake that failed: no retry mends a certificate.
_TLS_FAILURE = re.compile(r"ssl|tls|handshake|certificate", re.IGNORECASE)


@dataclass
class SessionSummary:
    matches: int = 0
    decisions: int = 0
    end_reason: str = ""


KEEPALIVE_S = 2.0
"""A connection that brings nothing for this long is pinged, and found dead when the ping is not
answered within as long again: a connection cut on the way (a router that stops forwarding)
closes nothing, and the referee's clocks run in seconds. The referee allows pings every 0.5 s."""

RECONNECT_S = 600.0
"""How long a bot whose referee went away (the connection dropped, the ladder stopped or
restarted) keeps trying to come back, from when it lost its stream."""

UNKNOWN_AFTER_DROP_S = 5.0
"""A referee that has just started again may answer "unknown token" until it has loaded its
sessions (a live ladder of this arena says UNAVAILABLE meanwhile; another referee may not):
after a drop, that answer is tried again for this long before it is believed."""

GRACE_BEFORE_WELCOME_S = 10.0
"""The rejoin grace taken for a stream that dropped before its Welcome said the referee's: the
default grace of this arena's tournaments and ladders (tournaments/config.py rejoin_grace_s).
Not $ARENA_RECONNECT_S: a bot its referee starts has it at 0 (it ends with its referee), yet a
cut before the Welcome leaves that referee waiting for it; and a remote bot's 600 s is far
longer than any referee holds a seat. Bounded, so a bot whose referee is gone does not linger."""

RECONNECT_CAP_S = 10.0  # the longest wait between two tries, once past the rejoin grace
REJOIN_CAP_S = 1.0  # within the grace: the clock of a waiting decision runs meanwhile


def run(
    bot: Bot,
    address: str | None = None,
    token: str | None = None,
    join_timeout_s: float | None = None,
    root_cert: str | Path | None = None,
    rejoin_s: float = 30.0,
    reconnect_s: float | None = None,
    keepalive_s: float | None = None,
) -> SessionSummary:
    """Play every match the referee gives this session. The address ('host:port' or
    'unix:/path') and token default to $ARENA_ADDRESS and $ARENA_TOKEN. A referee that is not
    reachable yet is waited for until join_timeout_s (default $ARENA_JOIN_TIMEOUT_S, else
    30 s). With a root certificate (a PEM file;
    default $ARENA_ROOT_CERT) the connection is TLS and the referee must prove itself with a
    certificate that root signed. A connection that drops is joined again with the same token
    for up to rejoin_s, or the shorter grace the referee's Welcome gives (before a Welcome,
    GRACE_BEFORE_WELCOME_S; a referee that allows rejoining resumes the match; see
    docs/threat-model.md); 0 gives up at once. A referee that
    went away (the ladder stopped or restarts) is tried again, with backoff, for reconnect_s
    (default $ARENA_RECONNECT_S, else RECONNECT_S; 0: not at all). The connection is pinged
    after keepalive_s with nothing received (default $ARENA_KEEPALIVE_S, else KEEPALIVE_S; 0:
    never), so that one cut on the way is found dead."""
    address = address or os.environ.get("ARENA_ADDRESS", "")
    token = token or os.environ.get("ARENA_TOKEN", "")
    if not address or not token:
        raise ArenaError("no referee address or token: pass them or set ARENA_ADDRESS/ARENA_TOKEN")
    root_cert = root_cert or os.environ.get("ARENA_ROOT_CERT") or None
    if join_timeout_s is None:
        join_timeout_s = _join_timeout_from_env()
    if reconnect_s is None:
        reconnect_s = seconds_from_env("ARENA_RECONNECT_S", RECONNECT_S)
    if keepalive_s is None:
        keepalive_s = seconds_from_env("ARENA_KEEPALIVE_S", KEEPALIVE_S)
    with _channel(address, root_cert, keepalive_s) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=join_timeout_s)
        except grpc.FutureTimeoutError:
            hint = (
                "is it serving TLS with a certificate this root certificate signed?"
                if root_cert
                else "if it serves TLS, give its root certificate in $ARENA_ROOT_CERT"
            )
            raise ArenaError(
                f"could not reach the referee at {address} within {join_timeout_s:g} s ({hint})"
            ) from None
        return _Session(bot, channel, token, rejoin_s, reconnect_s).play()


def _join_timeout_from_env() -> float:
    text = os.environ.get("ARENA_JOIN_TIMEOUT_S", "").strip()
    if not text:
        return 30.0
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise ArenaError(f"ARENA_JOIN_TIMEOUT_S must be a positive number of seconds, not {text!r}")
    return seconds


def seconds_from_env(name: str, default: float) -> float:
    """A duration from the environment variable name (0 allowed), else default."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise ArenaError(f"{name} must be a number of seconds, 0 or more, not {text!r}")
    return seconds


# A bot started before its referee knocks again within a second, not grpc's default of minutes.
_RECONNECT = [("grpc.initial_reconnect_backoff_ms", 100), ("grpc.max_reconnect_backoff_ms", 1000)]


def channel_options(keepalive_s: float) -> list[tuple[str, int]]:
    """The channel's reconnect backoff, and its keepalive pings unless keepalive_s is 0."""
    if keepalive_s <= 0:
        return list(_RECONNECT)
    every_ms = max(1, round(keepalive_s * 1000))
    return [
        *_RECONNECT,
        ("grpc.keepalive_time_ms", every_ms),
        ("grpc.keepalive_timeout_ms", every_ms),
        ("grpc.http2.ping_timeout_ms", every_ms),
        # Pings while a call is open only (the Play stream), however long the bot sends nothing.
        ("grpc.keepalive_permit_without_calls", 0),
        ("grpc.http2.max_pings_without_data", 0),
    ]


def _channel(address: str, root_cert: str | Path | None, keepalive_s: float) -> grpc.Channel:
    options = channel_options(keepalive_s)
    if root_cert is None:
        return grpc.insecure_channel(address, options=options)
    try:
        pem = Path(root_cert).read_bytes()
    except OSError as exc:
        raise ArenaError(f"cannot read the root certificate {root_cert}: {exc}") from None
    credentials = grpc.ssl_channel_credentials(root_certificates=pem)
    return grpc.secure_channel(address, credentials, options=options)


def backoff_s(attempt: int, cap_s: float, rng: random.Random) -> float:
    """The wait before try number attempt (0 first): doubling from 0.2 s up to cap_s, each
    drawn from its upper half so that bots cut off together do not knock together."""
    return float(min(cap_s, 0.2 * 2 ** min(attempt, 16)) * rng.uniform(0.5, 1.0))


class _Session:
    def __init__(
        self, bot: Bot, channel: grpc.Channel, token: str, rejoin_s: float, reconnect_s: float
    ) -> None:
        self.bot = bot
        self.channel = channel
        self.token = token
        self.rejoin_s = rejoin_s
        self.reconnect_s = reconnect_s
        self.outgoing: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
        self.welcomed = False  # the current stream was let in
        self.rejoining = False  # a stream of this session was let in and then dropped
        # How long the referee lets this session rejoin: its Welcome says; until one has come,
        # its default grace.
        self.grace_s = GRACE_BEFORE_WELCOME_S
        self.summary = SessionSummary()
        self.rng = random.Random()
        self.unknown_since: float | None = None  # first "unknown token" after a drop

    def _requests(
        self, outgoing: queue.SimpleQueue[pb.PlayRequest | None]
    ) -> Iterator[pb.PlayRequest]:
        while (message := outgoing.get()) is not None:
            yield message

    def play(self) -> SessionSummary:
        """Streams until the referee ends the session, joining again after a dropped one:
        quickly within the referee's rejoin grace (a waiting decision's clock runs), then with
        a longer backoff until reconnect_s."""
        lost_at: float | None = None
        attempt = 0
        while True:
            try:
                self._stream()
                return self.summary
            except _Dropped as dropped:
                now = time.monotonic()
                if self.welcomed or lost_at is None:  # a stream that had joined: start over
                    lost_at, attempt = now, 0
                self.rejoining = True
                away_s = now - lost_at
                rejoin_s = min(self.rejoin_s, self.grace_s)
                limit_s = max(rejoin_s, self.reconnect_s)
                if away_s >= limit_s:
                    raise ArenaError(
                        f"the connection to the referee dropped ({dropped}) and could not be "
                        f"joined again within {limit_s:g} s"
                    ) from None
                cap_s = REJOIN_CAP_S if away_s < rejoin_s else RECONNECT_CAP_S
                wait_s = min(backoff_s(attempt, cap_s, self.rng), limit_s - away_s)
                attempt += 1
                log.warning("the connection dropped (%s): joining again", dropped)
                time.sleep(wait_s)

    def _stream(self) -> None:
        """One stream: Hello, then every message until the session ends. Raises _Dropped when
        the connection broke or the referee went away, ArenaError for what trying again
        cannot mend."""
        hello = pb.Hello(token=self.token, bot_name=self.bot.name or type(self.bot).__name__)
        hello.sdk_version = __version__
        outgoing: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
        self.outgoing = outgoing
        self.welcomed = False
        outgoing.put(pb.PlayRequest(hello=hello))
        stub = referee_pb2_grpc.RefereeServiceStub(self.channel)
        try:
            for response in stub.Play(self._requests(outgoing)):
                if not self._handle(response):
                    break
        except grpc.RpcError as error:
            raise self._verdict(error.code(), error.details() or "") from None
        finally:
            outgoing.put(None)

    def _verdict(self, code: grpc.StatusCode, details: str) -> Exception:
        """What a stream's status means: _Dropped to try again, or the ArenaError to exit with."""
        if code == grpc.StatusCode.UNAVAILABLE and _TLS_FAILURE.search(details):
            return ArenaError(f"the TLS handshake with the referee failed: {details}")
        trying = self.rejoin_s > 0 or self.reconnect_s > 0
        if code in _DROPPED_CODES and trying:
            return _Dropped(f"{code.name}: {details}")
        if code == grpc.StatusCode.ALREADY_EXISTS and self.rejoining:
            # A referee that keeps one stream per session has not yet seen the old stream drop
            # (a connection cut on the way can look open for a while): try again.
            return _Dropped(f"the old stream is still open at the referee: {details}")
        unknown = code == grpc.StatusCode.PERMISSION_DENIED and details == "unknown token"
        if unknown and self.rejoining and self._still_loading():
            return _Dropped("the referee does not know this token yet: it may have just started")
        if code == grpc.StatusCode.ABORTED:
            return ArenaError(
                f"another stream with this bot's token took its seat ({details}): is a second "
                "process running with the same token?"
            )
        return ArenaError(f"the referee ended the session: {code.name}: {details}")

    def _still_loading(self) -> bool:
        now = time.monotonic()
        if self.unknown_since is None:
            self.unknown_since = now
        return now - self.unknown_since < UNKNOWN_AFTER_DROP_S

    def _handle(self, response: pb.PlayResponse) -> bool:
        kind = response.WhichOneof("message")
        if kind == "welcome":
            self.welcomed = True
            self.unknown_since = None
            self.grace_s = response.welcome.rejoin_grace_ms / 1000
        elif kind == "decision_request":
            self._tell(response.decision_request.events)
            self._decide(response.decision_request)
        elif kind == "match_start":
            self.bot.on_match_start(response.match_start)
        elif kind == "match_end":
            self._tell(response.match_end.events)
            self.summary.matches += 1
            self.bot.on_match_end(response.match_end)
        elif kind == "notice":
            log.warning("referee notice: %s", response.notice.message)
        elif kind == "session_end":
            self.summary.end_reason = response.session_end.reason
            return False
        return True

    def _tell(self, events: Iterable[pb.Event]) -> None:
        """Events come inside the request or end they precede; a bot sees them one by one."""
        for event in events:
            self.bot.on_event(event)

    def _decide(self, request: pb.DecisionRequest) -> None:
        legal = list(request.legal_actions)
        index, mistake = sent_index(self.bot.act(unwrap(request.observation), legal), legal)
        if mistake is not None:
            print(
                f"arena_sdk: {mistake}: sent as index {index}, which the referee refuses "
                "(illegal_action)",
                file=sys.stderr,
                flush=True,
            )
        self.summary.decisions += 1
        decision = pb.Decision(
            match_id=request.match_id, decision_id=request.decision_id, index=index
        )
        self.outgoing.put(pb.PlayRequest(decision=decision))
