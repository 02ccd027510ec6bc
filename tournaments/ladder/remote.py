"""Remote bots: bots their authors run elsewhere, which connect to the ladder's referee with the
secret `arena ladder add --remote` gave them, over the same wire as every bot (ARENA_ADDRESS,
ARENA_TOKEN; one Play stream). The secret is the token of the bot's session in the referee's
lobby; serve keeps one session per active remote bot, and a new one under the same secret when
the last has ended, so the bot can come and go. It is seated only while its stream is open,
in one match at a time, and shown connected only while its stream is open.

When serve stops, or the bot leaves the ladder, its stream is closed with UNAVAILABLE ("come
back later"), not with a SessionEnd ("the series is over, exit"): the SDK then keeps trying to
reconnect, and plays again once serve is back with the bot in its roster.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from referee.hosting.bot_pool import LiveBot
from referee.hosting.venue import MatchHost
from referee.wire.sessions import BotSession, Lobby

NOT_CONNECTED = "the remote bot was not connected"
GONE = "the ladder has no matches for this bot now: reconnect later"


@dataclass(eq=False)
class RemotePool:
    """A remote bot's one session, as a pool of the host: never two seatings of one deal."""

    name: str
    token: str
    lobby: Lobby
    rejoin_grace_s: float
    session: BotSession = field(init=False)
    deals: set[str] = field(default_factory=set)
    busy: bool = False

    def __post_init__(self) -> None:
        self.session = self._register()

    def _register(self) -> BotSession:
        session = self.lobby.register(self.name, "remote", token=self.token)
        session.rejoin_grace_s = self.rejoin_grace_s
        return session

    @property
    def streaming(self) -> bool:
        """The bot's stream is open now."""
        s = self.session
        return s.attached and s.closing is None and not s.ended

    @property
    def present(self) -> bool:
        return self.streaming and self.session.failure is None

    def renew_if_over(self) -> None:
        """A session whose stream is gone for good (past the grace, hung up, ended) cannot be
        joined again: the next connection gets a fresh one, under the same secret."""
        s = self.session
        if not s.attached and (s.failure is not None or s.closing is not None or s.ended):
            self.lobby.forget(s)
            self.session = self._register()

    async def checkout(self, deal: str) -> LiveBot:
        if deal in self.deals or self.busy:
            raise RuntimeError(f"remote bot {self.name} seated twice for deal {deal}")
        self.deals.add(deal)
        self.busy = True
        return LiveBot(self.session, None, no_show=None if self.present else NOT_CONNECTED)

    async def checkin(self, live: LiveBot, retire: bool) -> None:
        self.busy = False
        self.renew_if_over()

    async def drain(self) -> None:
        await self.close()

    async def close(self) -> None:
        self.session.turn_away("UNAVAILABLE", GONE)
        self.lobby.forget(self.session)


@dataclass(frozen=True)
class Remotes:
    """The remote versions whose stream is open now, and those of them free to play."""

    streaming: set[str]
    free: set[str]


def streaming(host: MatchHost) -> set[str]:
    """The keys of the remote versions whose stream is open now."""
    return {k for k, p in host.pools.items() if isinstance(p, RemotePool) and p.streaming}


async def sync_remotes(host: MatchHost, wanted: dict[str, str], grace_s: float) -> Remotes:
    """Keep a session for each wanted remote version (key -> secret), end the others'; which
    are connected, and which of them are free to play now."""
    held = set()  # secrets still held by a version that is leaving, until its match ends
    for key, pool in list(host.pools.items()):
        if isinstance(pool, RemotePool) and key not in wanted:
            if pool.busy:
                held.add(pool.token)
            else:
                await host.drop_pool(key)
    present = set()
    for key, token in wanted.items():
        if token in held:
            continue
        found = host.pools.get(key)
        remote = found if isinstance(found, RemotePool) else None
        if remote is None:
            remote = RemotePool(key, token, host.server.lobby, grace_s)
            host.pools[key] = remote
        remote.renew_if_over()
        if remote.present and not remote.busy:
            present.add(key)
    return Remotes(streaming(host), present)
