"""What an author reads of their own, and nobody else does (the operator has their own routes):
their bots, versions and statuses, their W-D-L against each opponent, every match their bots
played, and of each match their seat's view (the viewer's model and the replay file cut to
that seat, referee/replays/seat_file.py) and their bot's output.

Every read takes the author's token (in constant time: authors.authenticate; a wrong one is
AccessDenied, which the web counts as a failed token check). A match is theirs when one of its
seats holds a version of one of their bots (not their team mates': each author sees their own).
Another's match, or one that does not exist, is NoSuchMatch with the same words, so nobody
learns which matches exist by asking. A match's views and log open only once every seating of
its deal has ended (ReplayHeld before, as the public replay): until then they would tell the
cards of the seatings still to play; and a match whose deal is in play shows no rank, no
forfeit and no reason, as the public list.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tournaments.ladder import freeze, roster
from tournaments.ladder.authors import Author
from tournaments.ladder.bot_health import forfeits_of
from tournaments.ladder.database import Finished, LadderStore
from tournaments.ladder.uploads import content_hashes
from tournaments.read_models.author_models import (
    Against,
    Me,
    MyBot,
    MyMatch,
    MyMatches,
    MyVersion,
)
from tournaments.read_models.ladder_models import MatchOutput, SeatInfo
from tournaments.read_models.ladder_reads import (
    HELD_DEAL,
    HELD_DISCARDED,
    HELD_PLAYING,
    HELD_RELEASE,
    HELD_UNWRITTEN,
    LadderApi,
    NoSuchMatch,
    ReplayHeld,
)


@dataclass(frozen=True)
class SeatReplay:
    """A match of the author's, open to them: its replay and the seat they read it as."""

    match_id: str
    seat: int
    path: Path


class AuthorReads:
    def __init__(self, api: LadderApi) -> None:
        self.api = api

    def me(self, token: str) -> Me:
        with self.api.opened() as store:
            author = self.api.author_of(token, store)
            cutoff = self.api.cutoff(store, author=True)
            with store.snapshot():
                bots = _my_bots(store, author.name)
                owners = {b.name: b.author for b in roster.bots(store)}
            if cutoff is not None:  # ratings as they stood at the freeze
                bots = _as_frozen(bots, {p.version: p for p in freeze.pins(store)})
            played = self._played(store, author, cutoff)
            in_play = store.deals_in_play()
        ended = [f for f in played if f.record.deal not in in_play]
        names = {b.name for b in bots}
        return Me(
            author=author.name, team=author.team, bots=bots, record=_record(ended, names, owners)
        )

    def matches(self, token: str, limit: int = 50, offset: int = 0) -> MyMatches:
        """The author's finished matches, the latest first, `limit` of them from `offset`."""
        with self.api.opened() as store:
            author = self.api.author_of(token, store)
            played = self._played(store, author, self.api.cutoff(store, author=True))
            keys = _keys(store, author)
            files = dict(zip(keys, content_hashes(store, tuple(keys)), strict=True))
            in_play = store.deals_in_play()
        newest = played[::-1][offset : offset + limit]
        return MyMatches(
            total=len(played),
            offset=offset,
            limit=limit,
            matches=[_match(f, files, in_play) for f in newest],
        )

    def replay(self, token: str, match_id: str, seat: int | None = None) -> SeatReplay:
        """The replay of a match of the author's, to be read as their seat (`seat`, one of
        theirs; their first when None)."""
        chosen = self._seat(token, match_id, seat)
        with self.api.opened() as store:
            released = self.api.cutoff(store, author=True) is None
        return SeatReplay(match_id, chosen, self.api.replay(match_id, whole=released))

    def output(self, token: str, match_id: str) -> MatchOutput:
        """What the author's bot wrote in the match: their seats' logs only."""
        seats = self._mine(token, match_id)
        self._ended(match_id)
        return seat_logs(self.api, match_id, seats)

    # --- whose and when --------------------------------------------------------------------

    def _played(
        self, store: LadderStore, author: Author, until: str | None = None
    ) -> list[Finished]:
        """The author's finished matches (by `until`, when given: the release's), oldest
        first."""
        keys = _keys(store, author)
        return [f for f in store.finished(until=until) if keys & set(f.record.bots)]

    def _mine(self, token: str, match_id: str) -> list[tuple[int, str]]:
        """(seat, version) of each of the author's seats in the match; NoSuchMatch when it has
        none, in the words used for a match that does not exist."""
        with self.api.opened() as store:
            author = self.api.author_of(token, store)
            keys = _keys(store, author)
            row = store.db.execute(
                "SELECT bots FROM matches WHERE match_id = ?", (match_id,)
            ).fetchone()
        seated: list[str] = [] if row is None else json.loads(row[0])
        mine = [(seat, key) for seat, key in enumerate(seated) if key in keys]
        if not mine:
            raise NoSuchMatch(f"no match {match_id!r} of yours on the ladder")
        return mine

    def _seat(self, token: str, match_id: str, seat: int | None) -> int:
        seats = [s for s, _ in self._mine(token, match_id)]
        if seat is None:
            return seats[0]
        if seat not in seats:
            raise NoSuchMatch(f"match {match_id}: your seats are {', '.join(map(str, seats))}")
        return seat

    def _ended(self, match_id: str) -> None:
        """ReplayHeld unless every seating of the match's deal has ended, and the release
        lets the author see it."""
        with self.api.opened() as store:
            found = store.match_state(match_id)
            in_play = store.deals_in_play()
            cutoff = self.api.cutoff(store, author=True)
            finished_at = store.finished_at(match_id)
        if found is None:
            raise NoSuchMatch(f"no match {match_id!r} of yours on the ladder")
        if cutoff is not None and finished_at is not None and finished_at > cutoff:
            raise ReplayHeld(f"match {match_id}: {HELD_RELEASE}")
        status, deal, _ = found
        held = {"scheduled": HELD_PLAYING, "discarded": HELD_DISCARDED}.get(status)
        held = held or (HELD_DEAL if deal in in_play else None)
        if held is not None:
            raise ReplayHeld(f"match {match_id}: {held}")


def seat_logs(api: LadderApi, match_id: str, seats: list[tuple[int, str]]) -> MatchOutput:
    """What these (seat, version) wrote in the match, and no other seat: the caller has
    checked they are the reader's, and that every seating of the deal has ended."""
    return MatchOutput(
        match_id=match_id, seats=[api.seat_output(match_id, seat, key) for seat, key in seats]
    )


def _keys(store: LadderStore, author: Author) -> set[str]:
    """The version keys of the author's bots, retired ones' too."""
    rows = store.db.execute(
        "SELECT v.key FROM versions v JOIN bots b ON b.name = v.bot WHERE b.author = ?",
        (author.name,),
    ).fetchall()
    return {str(key) for (key,) in rows}


def _as_frozen(bots: list[MyBot], pins: dict[str, freeze.Pin]) -> list[MyBot]:
    """The author's bots with their pinned versions' ratings as they were at the freeze, and
    none of the versions added since."""
    return [
        bot.model_copy(
            update={
                "versions": [
                    _pinned(v, pins.get(v.version))
                    for v in bot.versions
                    if v.version in pins or not _after_pins(bot.name, v.version, pins)
                ]
            }
        )
        for bot in bots
    ]


def _after_pins(bot: str, version: str, pins: dict[str, freeze.Pin]) -> bool:
    """Whether the version came after the bot's pinned one (or the bot came after the freeze)."""
    pinned = next((p for p in pins.values() if p.bot == bot), None)
    number = int(version.rsplit("@", 1)[1])
    return pinned is None or number > int(pinned.version.rsplit("@", 1)[1])


def _pinned(v: MyVersion, pin: freeze.Pin | None) -> MyVersion:
    if pin is None:
        return v
    return v.model_copy(update={"mu": pin.mu, "sigma": pin.sigma, "matches": pin.matches})


def _my_bots(store: LadderStore, author: str) -> list[MyBot]:
    """The author's bots, each with every version and its status: the ones building,
    validating or failed too, which no public list shows (roster's lists hold live ones only).
    The version that plays is the newest live one."""
    rows = store.db.execute(
        "SELECT name, status, reason, remote_token IS NOT NULL, connected FROM bots "
        "WHERE author = ? ORDER BY name",
        (author,),
    ).fetchall()
    found = store.db.execute(
        "SELECT v.bot, v.key, v.added_at, v.mu, v.sigma, v.matches, v.status, v.reason "
        "FROM versions v JOIN bots b ON b.name = v.bot WHERE b.author = ? "
        "ORDER BY v.bot, v.number",
        (author,),
    ).fetchall()
    versions: dict[str, list[tuple[str, str, float, float, int, str, str | None]]] = {}
    for bot, *version in found:
        versions.setdefault(bot, []).append(tuple(version))
    bots = []
    for name, status, reason, remote, connected in rows:
        mine = versions.get(name, [])
        live = [v[0] for v in mine if v[5] == "live"]
        current = live[-1] if live else None
        bots.append(
            MyBot(
                name=name,
                status=status,
                reason=reason,
                remote=bool(remote),
                connected=bool(connected),
                versions=[_version(v, v[0] == current) for v in mine],
            )
        )
    return bots


def _version(v: tuple[str, str, float, float, int, str, str | None], current: bool) -> MyVersion:
    key, added_at, mu, sigma, matches, status, reason = v
    return MyVersion(
        version=key,
        added_at=added_at,
        mu=mu,
        sigma=sigma,
        matches=matches,
        current=current,
        status=status,
        reason=reason or None,
    )


def _match(f: Finished, files: dict[str, str], in_play: set[str]) -> MyMatch:
    """files: each of the author's version keys and its files' hash ('' if not uploaded)."""
    r = f.record
    playing = r.deal in in_play
    held = HELD_DEAL if playing else None if r.replay else HELD_UNWRITTEN
    return MyMatch(
        match_id=r.match_id,
        deal=r.deal,
        finished_at=f.finished_at,
        seats=[
            SeatInfo(version=key, rank=None, forfeit=None)
            if playing
            else SeatInfo(version=key, rank=r.ranks[s], forfeit=_forfeit(f, key))
            for s, key in enumerate(r.bots)
        ],
        mine=[s for s, key in enumerate(r.bots) if key in files],
        files=[files[key] for key in r.bots if key in files],
        reason=None if playing else r.reason,
        held=held,
    )


def _forfeit(f: Finished, key: str) -> str | None:
    causes = [cause for cause, _ in forfeits_of(f.record, key)]
    return causes[0] if causes else None


def _record(ended: list[Finished], names: set[str], owners: dict[str, str]) -> list[Against]:
    """W-D-L of each of the author's bots against each opponent bot, most met first."""
    tally: Counter[tuple[str, str, str]] = Counter()
    for f in ended:
        bots = [key.rsplit("@", 1)[0] for key in f.record.bots]
        ranks = f.record.ranks
        for s, bot in enumerate(bots):
            if bot not in names:
                continue
            for o, other in enumerate(bots):
                if other in names:
                    continue  # their own bots never meet; if they did, no one's record
                outcome = (
                    "win" if ranks[s] < ranks[o] else "loss" if ranks[s] > ranks[o] else "draw"
                )
                tally[(bot, other, outcome)] += 1
    pairs = sorted({(bot, other) for bot, other, _ in tally})
    rows = [
        Against(
            bot=bot,
            opponent=other,
            opponent_author=owners.get(other, ""),
            wins=tally[(bot, other, "win")],
            draws=tally[(bot, other, "draw")],
            losses=tally[(bot, other, "loss")],
        )
        for bot, other in pairs
    ]
    return sorted(rows, key=lambda a: -(a.wins + a.draws + a.losses))
