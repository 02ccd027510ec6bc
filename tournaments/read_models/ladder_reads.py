"""The ladder's read model: what its web server serves, as one Python API over a ladder folder;
what it answers with are ladder_models.py's models, and its refusals its own exceptions (and
errors.py's). Reads open the database for each call (serve writes meanwhile); operator actions
need the operator token, and an author registers a remote bot with the ladder token. Tokens are
compared in constant time and never returned but the remote bot's own secret, once, to the one
who registered it.

What anyone may read (state, leaderboard, matches, bot pages) holds no bot output, no path of
this machine and no SPEC (a `cmd:` line may hold a secret); a match whose deal is still in play
shows neither how it ended nor its ranks nor its forfeits. A match's bot output is the
operator's, and only once every seating of its deal has ended (match_output).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from arena_games import get_game

from referee.bots.output import match_file
from referee.matches.seat_times import SeatTimes
from tournaments import audit_log
from tournaments.config import ConfigError
from tournaments.contest import Release
from tournaments.disk_room import disk_room
from tournaments.ladder import authors, discards, freeze, roster, uploads
from tournaments.ladder.bot_health import forfeits_of
from tournaments.ladder.config_file import LadderConfig, load_ladder
from tournaments.ladder.database import (
    DATABASE,
    HOUSE,
    WAITING_META,
    Finished,
    LadderStore,
    LadderStoreError,
)
from tournaments.ladder.running_totals import RunningTotals
from tournaments.ladder.vetting import BELOW_BUBBLEWRAP, takes_uploads
from tournaments.lock import holder
from tournaments.read_models.changes import Changes
from tournaments.read_models.errors import BadQuery, FolderError
from tournaments.read_models.ladder_models import (
    Added,
    AuditLog,
    AuthorTicket,
    BotPage,
    BotStatus,
    DiskSpace,
    ForfeitInfo,
    LadderProgress,
    LadderState,
    LeaderboardRow,
    MatchOutput,
    MatchSummary,
    RemoteTicket,
    SeatInfo,
    SeatOutput,
    Submitted,
    VersionInfo,
)
from tournaments.submissions.intake import Archive, accept, discard

Z95 = 1.96
AUDIT_ROWS = 100_000  # of the log one answer holds at most (a ladder's months of actions)
OUTPUT_BYTES = 4 * 1024 * 1024  # of each seat's output a reader gets, at most: its end
HELD_PLAYING = "the match is still being played"
HELD_DISCARDED = "the match was discarded (its serve stopped): it never counted"
HELD_DEAL = "another seating of its deal is still to be played: its replay would show its cards"
HELD_UNWRITTEN = "its replay could not be written (see the ladder's log)"
HELD_RELEASE = "it finished after the freeze, and the ladder's results since are not released"


class AccessDenied(Exception):
    """A wrong or missing token."""


class RegistrationClosed(Exception):
    """Authors do not register over HTTP on this ladder."""


class WrongInvite(Exception):
    """An invite token that is not the ladder's."""


class UploadsClosed(Exception):
    """The ladder takes no uploads: its bots run below bubblewrap."""


class NoSuchMatch(Exception):
    """No such match on the ladder, or a replay gone from its folder."""


class ReplayHeld(Exception):
    """A match whose replay may not be shown now, or at all."""


class LadderApi:
    def __init__(self, folder: Path, after_change: Callable[[], None] | None = None) -> None:
        self.folder = folder
        self.config: LadderConfig = load_ladder(folder)
        self.totals = RunningTotals()
        # In serve's own process: returns once serve has taken a roster change in (a remote
        # bot's secret answered over HTTP then works at once).
        self.after_change = after_change or (lambda: None)

    @classmethod
    def open(cls, folder: Path, after_change: Callable[[], None] | None = None) -> LadderApi:
        """The API of a ladder folder, read once: FolderError when it holds no readable
        ladder."""
        try:
            api = cls(folder, after_change)
            api.progress()
        except (ConfigError, LadderStoreError, sqlite3.DatabaseError) as exc:
            raise FolderError(str(exc).splitlines()[0]) from None
        return api

    @contextmanager
    def opened(self) -> Iterator[LadderStore]:
        """The ladder's store, open for one read (or write) and closed after it: the one way
        every read model of the ladder (author, challenge, history) opens it."""
        store = LadderStore.open(self.folder)
        try:
            yield store
        finally:
            store.close()

    @property
    def database(self) -> Path:
        return self.folder / DATABASE

    def state(self) -> LadderState:
        with self.opened() as store:
            address = store.meta("referee_address")
            progress = _progress(store, self.folder)
            matchmaking = store.meta(WAITING_META) or None
            frozen = freeze.frozen_at(store, self.config)
            released = freeze.release_of(store, self.config) if frozen else None
        c = self.config
        room = disk_room(self.folder, c.run.disk_reserve_mb)
        return LadderState(
            name=c.name,
            game=c.game,
            title=get_game(c.game).title,
            seats=c.table.seats,
            serving=progress.serving,
            referee_address=address,
            progress=progress,
            disk=DiskSpace(free_mb=round(room.free_mb, 1), reserve_mb=room.reserve_mb),
            waiting=(room.why_waiting() or matchmaking) if progress.serving else None,
            frozen_at=None if frozen is None else freeze.iso(frozen),
            release=None if released is None else released.value,
        )

    def progress(self) -> LadderProgress:
        """Counts and a digest only: cheap enough to ask after every change of the database."""
        with self.opened() as store:
            return _progress(store, self.folder)

    def changes(self) -> Changes[LadderProgress]:
        """What the live feed asks after every interval: the progress, once it changed."""
        return Changes(self.folder, self.database, self._readable_progress)

    def _readable_progress(self) -> LadderProgress:
        try:
            return self.progress()
        except (LadderStoreError, sqlite3.DatabaseError) as exc:
            raise FolderError(f"cannot read the ladder: {exc}") from None

    def leaderboard(
        self, against: str | None = None, retired: bool = False, whole: bool = False
    ) -> list[LeaderboardRow]:
        """One row per bot (its current version), best conservative rating first; with
        `against` (a bot's name, a retired one's too), each row's points per meeting against its
        current version (a draw is half a point): BadQuery when no bot has that name. The sums
        over the finished matches are kept between reads (running_totals.py). After a freeze
        whose results are not released (and `whole` unset: the operator's), the board as it
        stood at the freeze: its pinned versions and their ratings then, no Elo, no scores, no
        times. Seat times are of the rated matches only: a deal in play adds none."""
        with self.opened() as store:
            cutoff = None if whole else self.cutoff(store)
            bots = roster.bots(store)
            keys = [v.key for v in roster.versions(store)]
            self.totals.update(store)
            if cutoff is not None:
                bots = _as_frozen(bots, freeze.pins(store))
        two_seats = self.config.table.seats == 2 and self.totals.rated > 0
        elo = self.totals.elo(keys) if two_seats and cutoff is None else {}
        target = next((b.current.key for b in bots if b.name == against), None)
        if against is not None and target is None:
            raise BadQuery(f"no bot {against!r} on the ladder")
        target = target if cutoff is None else None
        shown = [b for b in bots if retired or b.status != "retired"]
        rows = sorted(shown, key=lambda b: -(b.current.mu - 3 * b.current.sigma))
        timed = cutoff is None  # frozen: the times since the freeze are not shown either
        return [
            _row(rank, bot, self.config, elo.get(bot.current.key), self.totals, target, timed)
            for rank, bot in enumerate(rows, 1)
        ]

    def cutoff(self, store: LadderStore, author: bool = False) -> str | None:
        """The freeze time (ISO 8601 UTC) after which nothing is shown, or None: before the
        freeze, once released to the public, or (author: an author's own) to participants. The
        first read after the freeze's time pins it when serve has not."""
        if freeze.frozen_at(store, self.config) is None:
            return None
        freeze.pin_if_due(store, self.config)
        released = freeze.release_of(store, self.config)
        if released is Release.PUBLIC or (author and released is Release.PARTICIPANTS):
            return None
        when = freeze.frozen_at(store, self.config)
        return None if when is None else freeze.iso(when)

    def recent_matches(
        self, limit: int = 50, version: str | None = None, whole: bool = False
    ) -> list[MatchSummary]:
        with self.opened() as store:
            cutoff = None if whole else self.cutoff(store)
            in_play = store.deals_in_play()
            found = store.finished(version=version, limit=limit, until=cutoff, discarded=True)
            gone = discards.discarded(store)
        return [_summary(f, in_play, gone) for f in reversed(found)]

    def replay(self, match_id: str, whole: bool = False) -> Path:
        """The replay file of a match whose replay may be shown: only once every seating of
        its deal has finished (the others replay the same cards), and (unless `whole`) not one
        finished after a freeze whose results are not released. NoSuchMatch or ReplayHeld
        says why not."""
        with self.opened() as store:
            found = store.match_state(match_id)
            in_play = store.deals_in_play()
            cutoff = None if whole else self.cutoff(store)
            finished_at = store.finished_at(match_id)
            by_operator = match_id in discards.discarded(store)
        if cutoff is not None and finished_at is not None and finished_at > cutoff:
            raise ReplayHeld(f"match {match_id}: {HELD_RELEASE}")
        if found is None:
            raise NoSuchMatch(f"no match {match_id!r} on the ladder")
        status, deal, replay = found
        if status == "discarded" and by_operator:
            raise ReplayHeld(f"match {match_id}: {discards.BY_OPERATOR}")
        held = {"scheduled": HELD_PLAYING, "discarded": HELD_DISCARDED}.get(status)
        held = held or (HELD_DEAL if deal in in_play else None)
        held = held or (HELD_UNWRITTEN if replay is None else None)
        if held is not None:
            raise ReplayHeld(f"match {match_id}: {held}")
        path = self.folder / "replays" / Path(str(replay)).name
        if not path.is_file():
            # No path in the answer: the page is public.
            raise NoSuchMatch(f"match {match_id}: its replay is gone from the ladder's replays")
        return path

    def bot_page(self, name: str, matches: int = 20, whole: bool = False) -> BotPage:
        with self.opened() as store:
            cutoff = None if whole else self.cutoff(store)
            bot = roster.bot_row(store, name)
            versions = roster.versions(store, name)
            if cutoff is not None:
                frozen = _as_frozen([bot], freeze.pins(store))
                if not frozen:  # came after the freeze: not on the board as it stood then
                    raise roster.NoSuchBot(f"no bot {name!r} on the ladder")
                bot = frozen[0]
                pinned = {v.key: v for v in _as_frozen_versions(versions, freeze.pins(store))}
                versions = [pinned.get(v.key, v) for v in versions if v.added_at <= cutoff]
            played = [f for v in versions for f in store.finished(version=v.key, until=cutoff)]
            in_play = store.deals_in_play()
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
            if v.key in f.record.bots and f.record.deal not in in_play
            for cause, detail in forfeits_of(f.record, v.key)
        ]
        return BotPage(
            name=bot.name,
            author=bot.author,
            team=bot.team,
            status=bot.status,
            reason=bot.reason,
            remote=bot.remote,
            connected=bot.connected,
            versions=[_version(v, v.key == bot.current.key) for v in versions],
            recent_matches=[_summary(f, in_play) for f in reversed(played[-matches:])],
            forfeits=forfeits[-matches:],
        )

    def match_output(self, token: str, match_id: str, seat: int | None = None) -> MatchOutput:
        """What each seat's bot wrote in the match (or seat's only): the operator's, once
        every seating of its deal has ended (before, it would tell the cards of the seatings
        still to play). AccessDenied, NoSuchMatch or ReplayHeld say why not."""
        self.check_operator(token)
        with self.opened() as store:
            found = store.match_state(match_id)
            in_play = store.deals_in_play()
            seated = store.db.execute(
                "SELECT bots FROM matches WHERE match_id = ?", (match_id,)
            ).fetchone()
        if found is None or seated is None:
            raise NoSuchMatch(f"no match {match_id!r} on the ladder")
        status, deal, _ = found
        held = {"scheduled": HELD_PLAYING, "discarded": HELD_DISCARDED}.get(status)
        held = held or (HELD_DEAL if deal in in_play else None)
        if held is not None:
            raise ReplayHeld(f"match {match_id}: {held}")
        bots: list[str] = json.loads(seated[0])
        if seat is not None and not 0 <= seat < len(bots):
            raise NoSuchMatch(f"match {match_id} has seats 0 to {len(bots) - 1}")
        seats = range(len(bots)) if seat is None else [seat]
        return MatchOutput(
            match_id=match_id, seats=[self.seat_output(match_id, s, bots[s]) for s in seats]
        )

    def seat_output(self, match_id: str, seat: int, version: str) -> SeatOutput:
        name = match_file(Path(), match_id, seat, version)
        # The match's folder is under logs/, or logs/referee-N/ with the cores executor.
        found = [self.folder / "logs" / name, *(self.folder / "logs").glob(f"referee-*/{name}")]
        path = next((p for p in found if p.is_file()), None)
        text, size = _end_of(path) if path is not None else ("", 0)
        whole = size <= OUTPUT_BYTES
        return SeatOutput(seat=seat, version=version, output=text, bytes=size, whole=whole)

    def audit(self, token: str) -> AuditLog:
        """The audit log, oldest first: the operator's (AccessDenied otherwise)."""
        self.check_operator(token)
        with self.opened() as store:
            return AuditLog(entries=audit_log.entries(store.db, limit=AUDIT_ROWS))

    # --- actions ---------------------------------------------------------------------------

    def is_operator(self, token: str) -> bool:
        """In constant time: whether the token is the operator's."""
        return _same(token, self.config.tokens.operator.get_secret_value())

    def check_operator(self, token: str) -> None:
        if not self.is_operator(token):
            raise AccessDenied("the operator token is wrong")

    def add_bot(
        self,
        token: str,
        name: str,
        spec: str | None,
        remote: bool = False,
        author: str = HOUSE,
        why: str = "",
    ) -> Added:
        """A bot the ladder starts (spec), or one its author runs elsewhere (remote)."""
        self.check_operator(token)
        most = self.config.authors.bots_per_author
        with self.opened() as store:
            secret = roster.add_bot(store, name, spec, remote, author, most, why=why)
            ticket = None if secret is None else self._ticket(store, name, secret)
        self.after_change()
        return Added(version=roster.version_key(name, 1), remote=ticket)

    def _ticket(
        self, store: LadderStore, name: str, secret: str, version: str | None = None
    ) -> RemoteTicket:
        address = store.meta("referee_address") or self.config.run.listen
        key = version or roster.version_key(name, 1)
        return RemoteTicket(bot=name, version=key, address=address, token=secret)

    def update_bot(self, token: str, name: str, spec: str | None, why: str = "") -> str:
        """A new version (the operator's: after the freeze too, and logged)."""
        self.check_operator(token)
        with self.opened() as store:
            version = roster.update_bot(store, name, spec, why=why)
        self.after_change()
        return version

    def set_status(self, token: str, name: str, status: str, reason: str = "") -> BotStatus:
        """pause (status "paused"), resume ("active") or retire ("retired") a bot."""
        self.check_operator(token)
        reason = "" if status == "active" else reason or f"{status} by the operator"
        with self.opened() as store:
            roster.set_status(store, name, status, reason, self.config.authors.bots_per_author)
            bot = roster.bot_row(store, name)
        self.after_change()
        return BotStatus(name=name, status=bot.status, reason=bot.reason)

    def register_remote(self, token: str, name: str) -> RemoteTicket:
        """A remote bot joins the ladder: what it connects with. With the ladder token it is
        the house's; with an author's token it is that author's, and a name of that author's
        remote bots gives it a new version (its secret stays)."""
        most = self.config.authors.bots_per_author
        with self.opened() as store:
            if _same(token, self.config.tokens.ladder.get_secret_value()):
                owner = HOUSE
            else:
                try:
                    owner = authors.authenticate(store, token).name
                except authors.BadToken:
                    raise AccessDenied(
                        "the token is neither the ladder's nor a live author's"
                    ) from None
            freeze.refuse_if_frozen(store, self.config, "registering a remote bot")
            who = "ladder token" if owner == HOUSE else f"author {owner}"
            if owner != HOUSE and _owns_remote(store, owner, name):
                version = roster.update_bot(store, name, None, who=who)
                secret = roster.remote_secret(store, name)
            else:
                version = roster.version_key(name, 1)
                secret = roster.add_bot(store, name, None, True, owner, most, who=who)
            assert secret is not None
            ticket = self._ticket(store, name, secret, version)
        self.after_change()
        return ticket

    def author_of(self, token: str, store: LadderStore | None = None) -> authors.Author:
        """The live author whose token this is (in constant time); AccessDenied otherwise."""
        if store is None:
            with self.opened() as opened:
                return self.author_of(token, opened)
        try:
            return authors.authenticate(store, token)
        except authors.BadToken:
            raise AccessDenied("the token is no author's (or it was revoked)") from None

    def check_upload(self, token: str, name: str) -> authors.Author:
        """The author, when they may upload a version of the bot `name` now (before the
        archive is read): AccessDenied, UploadsClosed, uploads.UploadRefused (NotYours: another
        author's bot) otherwise."""
        with self.opened() as store:
            author = self.author_of(token, store)
            freeze.refuse_if_frozen(store, self.config, "submitting a version")
            if not takes_uploads(self.config.sandbox):
                tier = self.config.sandbox.tier.value
                raise UploadsClosed(BELOW_BUBBLEWRAP.format(tier=tier))
            most = self.config.authors.bots_per_author
            uploads.check_upload(store, author.name, name, most)
        return author

    def upload(self, author: authors.Author, name: str, archive: Archive) -> Submitted:
        """The archive stored (tournaments/submissions) and recorded as the bot's next version,
        `building`, for serve to build and validate; SubmissionRefused or UploadRefused with
        nothing stored otherwise."""
        versions = self.folder / uploads.VERSIONS_FOLDER
        stored = accept(archive, self.config.submissions, versions)
        most = self.config.authors.bots_per_author
        try:
            with self.opened() as store:
                spec = stored.manifest.spec_in(stored.folder)
                key = uploads.record_upload(
                    store, author.name, name, stored.hash, spec, most, self._still_open
                )
        except BaseException:
            # Nothing of a refused upload stays, unless a version recorded meanwhile has it.
            if stored.fresh and not self._in_use(stored.hash):
                discard(stored.folder)
            raise
        return Submitted(
            version=key, status="building", content_hash=stored.hash, fresh=stored.fresh
        )

    def _still_open(self, store: LadderStore) -> None:
        freeze.refuse_if_frozen(store, self.config, "submitting a version")

    def _in_use(self, digest: str) -> bool:
        with self.opened() as store:
            found = store.db.execute(
                "SELECT 1 FROM versions WHERE content_hash = ?", (digest,)
            ).fetchone()
        return found is not None

    def register_author(self, invite: str, name: str, team: str | None) -> AuthorTicket:
        """Someone with the invite token becomes an author: their token, shown this once."""
        if self.config.authors.registration != "invite":
            raise RegistrationClosed(
                "authors do not register here: the operator adds them ([authors] registration "
                "is closed)"
            )
        with self.opened() as store:
            try:
                authors.check_invite(store, invite)
            except authors.BadToken as exc:
                raise WrongInvite(str(exc)) from None
            freeze.refuse_if_frozen(store, self.config, "registering as an author")
            token = authors.add_author(store, name, team, new_team_only=True)
        return AuthorTicket(author=name, team=team, token=token)


def _as_frozen(bots: list[roster.BotRow], pins: list[freeze.Pin]) -> list[roster.BotRow]:
    """The bots as they stood at the freeze: those pinned, each with its pinned version, its
    rating and its status then."""
    pinned = {p.bot: p for p in pins}
    return [
        replace(b, status=pinned[b.name].status, current=_pinned_version(b.current, pinned[b.name]))
        for b in bots
        if b.name in pinned
    ]


def _as_frozen_versions(
    versions: list[roster.VersionRow], pins: list[freeze.Pin]
) -> list[roster.VersionRow]:
    pinned = {p.version: p for p in pins}
    return [_pinned_version(v, pinned[v.key]) for v in versions if v.key in pinned]


def _pinned_version(v: roster.VersionRow, pin: freeze.Pin) -> roster.VersionRow:
    """The pinned version as it was at the freeze (not the bot's newest, when they differ)."""
    number = int(pin.version.rsplit("@", 1)[1])
    return replace(
        v, key=pin.version, number=number, mu=pin.mu, sigma=pin.sigma, matches=pin.matches
    )


def _owns_remote(store: LadderStore, author: str, name: str) -> bool:
    """Whether the bot is a remote bot of the author's (not retired): theirs to give versions."""
    found = next((b for b in roster.bots(store) if b.name == name), None)
    return found is not None and found.author == author and found.remote


def _same(given: str, token: str) -> bool:
    """In constant time; as bytes, since compare_digest refuses a str that is not ASCII."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


def _row(
    rank: int,
    bot: roster.BotRow,
    config: LadderConfig,
    elo: tuple[float, float] | None,
    totals: RunningTotals,
    target: str | None,
    timed: bool = True,
) -> LeaderboardRow:
    v = bot.current
    points = totals.points.get((v.key, target), 0.0) if target else 0.0
    meetings = totals.meetings.get((v.key, target), 0) if target else 0
    return LeaderboardRow(
        rank=rank,
        bot=bot.name,
        author=bot.author,
        team=bot.team,
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
        elo=elo[0] if elo else None,
        elo_error95=elo[1] if elo else None,
        score_against=points / meetings if meetings else None,
        meetings_against=meetings,
        time=totals.times.get(v.key, SeatTimes()) if timed else SeatTimes(),
    )


def _progress(store: LadderStore, folder: Path) -> LadderProgress:
    scheduled, finished = store.progress()
    digest = hashlib.blake2b(digest_size=8)
    for bot in roster.bots(store):
        digest.update(f"{bot.name}:{bot.status}:{bot.connected}:{bot.current.key};".encode())
    return LadderProgress(
        scheduled=scheduled,
        finished=finished,
        serving=holder(folder).alive,
        roster=digest.hexdigest(),
    )


def _summary(f: Finished, in_play: set[str], gone: frozenset[str] = frozenset()) -> MatchSummary:
    """A finished match; while its deal is in play neither its replay nor how it ended shows;
    one the operator discarded is marked so, with neither (it no longer counts)."""
    r = f.record
    forfeited = {seat: cause for seat, cause, _ in r.forfeits}
    held = HELD_DEAL if r.deal in in_play else None if r.replay else HELD_UNWRITTEN
    if r.match_id in gone:
        in_play = in_play | {r.deal}  # shown as a deal in play is: no ranks, no reason
        held = discards.BY_OPERATOR
    return MatchSummary(
        match_id=r.match_id,
        deal=r.deal,
        finished_at=f.finished_at,
        seats=[
            SeatInfo(version=key, rank=None, forfeit=None)
            if r.deal in in_play
            else SeatInfo(version=key, rank=r.ranks[s], forfeit=forfeited.get(s))
            for s, key in enumerate(r.bots)
        ],
        reason=None if r.deal in in_play else r.reason,
        viewer=None if held else f"/matches/{r.match_id}",
        held=held,
    )


def _version(v: roster.VersionRow, current: bool) -> VersionInfo:
    return VersionInfo(
        version=v.key,
        added_at=v.added_at,
        mu=v.mu,
        sigma=v.sigma,
        matches=v.matches,
        current=current,
    )


def _end_of(path: Path, most: int = OUTPUT_BYTES) -> tuple[str, int]:
    """The text of a log (its last `most` bytes, when longer), and its size."""
    with path.open("rb") as log:
        size = log.seek(0, 2)
        log.seek(max(0, size - most))
        return log.read().decode(errors="replace"), size
