"""What the ladder's HTTP layer serves, as one Python API over a ladder folder; its pydantic
models are the one schema of the JSON endpoints. Reads open the database for each call (serve
writes meanwhile); operator actions need the operator token, and an author registers a remote
bot with the ladder token. Tokens are compared in constant time and never returned but the
remote bot's own secret, once, to the one who registered it.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from tournaments import ratings
from tournaments.ladder import roster
from tournaments.ladder.bot_health import forfeits_of
from tournaments.ladder.ladder_file import LadderConfig, load_ladder
from tournaments.ladder.ladder_store import Finished, LadderStore
from tournaments.lock import holder
from tournaments.records import MatchRecord

Z95 = 1.96
LOG_LINES = 40


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class LeaderboardRow(_Model):
    rank: int
    bot: str
    version: str  # NAME@N, the version that plays now
    status: str  # active, paused, retired
    remote: bool
    connected: bool
    provisional: bool
    mu: float
    sigma: float
    low: float  # mu - 1.96 sigma: openskill's 95% interval
    high: float
    conservative: float  # mu - 3 sigma: the order of the board
    matches: int
    elo: float | None  # Bradley-Terry Elo of the version, two-seat ladders only
    elo_error95: float | None
    score_against: float | None  # points per meeting against the selected bot's version
    meetings_against: int


class SeatInfo(_Model):
    version: str
    rank: int
    forfeit: str | None  # cause, when this seat forfeited


class MatchSummary(_Model):
    match_id: str
    finished_at: str
    seats: list[SeatInfo]
    reason: str
    replay: str | None


class ForfeitInfo(_Model):
    match_id: str
    version: str
    cause: str
    detail: str
    finished_at: str


class VersionInfo(_Model):
    version: str
    spec: str
    added_at: str
    mu: float
    sigma: float
    matches: int
    current: bool


class BotPage(_Model):
    name: str
    status: str
    reason: str
    remote: bool
    connected: bool
    versions: list[VersionInfo]
    recent_matches: list[MatchSummary]
    forfeits: list[ForfeitInfo]
    log: str | None  # the newest log of the current version
    log_tail: list[str]


class LadderState(_Model):
    name: str
    game: str
    seats: int
    serving: bool  # a serve holds the folder now
    referee_address: str | None


class RemoteTicket(_Model):
    bot: str
    version: str
    address: str  # ARENA_ADDRESS
    token: str  # ARENA_TOKEN: the bot's own secret


class AccessDenied(Exception):
    """A wrong or missing token."""


class LadderApi:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.config: LadderConfig = load_ladder(folder)

    @contextmanager
    def _store(self) -> Iterator[LadderStore]:
        store = LadderStore.open(self.folder)
        try:
            yield store
        finally:
            store.close()

    def state(self) -> LadderState:
        with self._store() as store:
            address = store.meta("referee_address")
        c = self.config
        return LadderState(
            name=c.name,
            game=c.game,
            seats=c.table.seats,
            serving=holder(self.folder).alive,
            referee_address=address,
        )

    def leaderboard(
        self, against: str | None = None, retired: bool = False
    ) -> list[LeaderboardRow]:
        """One row per bot (its current version), best conservative rating first; with
        `against` (a bot's name), each row's points per meeting against its current version."""
        with self._store() as store:
            bots = [b for b in roster.bots(store) if retired or b.status != "retired"]
            finished = [f.record for f in store.finished()]
            keys = [v.key for v in roster.versions(store)]
        table = ratings.crosstable(finished, keys)
        elo = self._elo(finished, keys)
        target = next((b.current.key for b in bots if b.name == against), None)
        rows = sorted(bots, key=lambda b: -(b.current.mu - 3 * b.current.sigma))
        return [
            _row(rank, bot, self.config, elo.get(bot.current.key), table, target)
            for rank, bot in enumerate(rows, 1)
        ]

    def _elo(self, finished: list[MatchRecord], keys: list[str]) -> dict[str, ratings.EloRow]:
        if self.config.table.seats != 2 or not finished:
            return {}
        return {row.name: row for row in ratings.elo_table(finished, keys)}

    def recent_matches(self, limit: int = 50, version: str | None = None) -> list[MatchSummary]:
        with self._store() as store:
            return [_summary(f) for f in reversed(store.finished(version=version, limit=limit))]

    def bot_page(self, name: str, matches: int = 20) -> BotPage:
        with self._store() as store:
            bot = roster.bot_row(store, name)
            versions = roster.versions(store, name)
            played = [f for v in versions for f in store.finished(version=v.key)]
        played.sort(key=lambda f: f.seq)
        forfeits = [
            ForfeitInfo(
                match_id=f.record.match_id,
                version=v.key,
                cause=cause,
                detail=detail,
                finished_at=f.finished_at,
            )
            for v in versions
            for f in played
            if v.key in f.record.bots
            for cause, detail in forfeits_of(f.record, v.key)
        ]
        log = self._newest_log(bot.current.key)
        return BotPage(
            name=bot.name,
            status=bot.status,
            reason=bot.reason,
            remote=bot.remote,
            connected=bot.connected,
            versions=[_version(v, v.key == bot.current.key) for v in versions],
            recent_matches=[_summary(f) for f in reversed(played[-matches:])],
            forfeits=forfeits[-matches:],
            log=str(log) if log else None,
            log_tail=_tail(log) if log else [],
        )

    def _newest_log(self, key: str) -> Path | None:
        logs = sorted((self.folder / "logs").glob(f"{key}-*.log"), key=lambda p: p.stat().st_mtime)
        return logs[-1] if logs else None

    # --- actions ---------------------------------------------------------------------------

    def check_operator(self, token: str) -> None:
        if not hmac.compare_digest(token, self.config.tokens.operator.get_secret_value()):
            raise AccessDenied("the operator token is wrong")

    def add_bot(self, token: str, name: str, spec: str) -> str:
        self.check_operator(token)
        with self._store() as store:
            roster.add_bot(store, name, spec)
        return roster.version_key(name, 1)

    def update_bot(self, token: str, name: str, spec: str | None) -> str:
        self.check_operator(token)
        with self._store() as store:
            return roster.update_bot(store, name, spec)

    def set_status(self, token: str, name: str, status: str, reason: str = "") -> None:
        """pause (status "paused"), resume ("active") or retire ("retired") a bot."""
        self.check_operator(token)
        with self._store() as store:
            roster.set_status(store, name, status, reason or f"{status} by the operator")

    def register_remote(self, ladder_token: str, name: str) -> RemoteTicket:
        """An author's remote bot joins the ladder: what it connects with."""
        if not hmac.compare_digest(ladder_token, self.config.tokens.ladder.get_secret_value()):
            raise AccessDenied("the ladder token is wrong")
        with self._store() as store:
            secret = roster.add_bot(store, name, None, remote=True)
            address = store.meta("referee_address") or self.config.run.listen
        assert secret is not None
        return RemoteTicket(
            bot=name, version=roster.version_key(name, 1), address=address, token=secret
        )


def _row(
    rank: int,
    bot: roster.BotRow,
    config: LadderConfig,
    elo: ratings.EloRow | None,
    table: ratings.Crosstable,
    target: str | None,
) -> LeaderboardRow:
    v = bot.current
    points = table.points.get((v.key, target), 0.0) if target else 0.0
    meetings = table.games.get((v.key, target), 0) if target else 0
    return LeaderboardRow(
        rank=rank,
        bot=bot.name,
        version=v.key,
        status=bot.status,
        remote=bot.remote,
        connected=bot.connected,
        provisional=v.matches < config.matchmaking.provisional_matches,
        mu=v.mu,
        sigma=v.sigma,
        low=v.mu - Z95 * v.sigma,
        high=v.mu + Z95 * v.sigma,
        conservative=v.mu - 3 * v.sigma,
        matches=v.matches,
        elo=elo.elo if elo else None,
        elo_error95=elo.error95 if elo else None,
        score_against=points / meetings if meetings else None,
        meetings_against=meetings,
    )


def _summary(f: Finished) -> MatchSummary:
    r = f.record
    forfeited = {seat: cause for seat, cause, _ in r.forfeits}
    return MatchSummary(
        match_id=r.match_id,
        finished_at=f.finished_at,
        seats=[
            SeatInfo(version=key, rank=r.ranks[s], forfeit=forfeited.get(s))
            for s, key in enumerate(r.bots)
        ],
        reason=r.reason,
        replay=r.replay,
    )


def _version(v: roster.VersionRow, current: bool) -> VersionInfo:
    return VersionInfo(
        version=v.key,
        spec=v.spec,
        added_at=v.added_at,
        mu=v.mu,
        sigma=v.sigma,
        matches=v.matches,
        current=current,
    )


def _tail(path: Path, lines: int = LOG_LINES) -> list[str]:
    """The last lines of a log, reading only its end (a bot's log may be large)."""
    with path.open("rb") as log:
        log.seek(0, 2)
        size = log.tell()
        log.seek(max(0, size - 64 * 1024))
        text = log.read().decode(errors="replace")
    return text.splitlines()[-lines:]
