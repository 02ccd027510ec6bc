"""What a challenger reads of their challenges, and nobody else but the operator: each
challenge, its matches' results, and of each match their seat's view and their bot's output
(never an opponent's), as they read a rated match of theirs (author_reads.py): only once every
seating of its deal has ended.

A challenge is the challenger's alone: another author, the challenged bots' authors and a
visitor get NoSuchChallenge (404) for it, in the words used for one that does not exist, so
nobody learns who challenges whom. The token decides who asks: the operator's sees every
challenge; an author's, their own; a wrong one is AccessDenied (401, counted)."""

from __future__ import annotations

import json
from pathlib import Path

from tournaments.ladder import challenges
from tournaments.ladder.challenges import Challenge, NoSuchChallenge, Opponents
from tournaments.ladder.database import LadderStore
from tournaments.read_models.author_reads import SeatReplay, seat_logs
from tournaments.read_models.challenge_models import (
    ChallengeDetail,
    ChallengeList,
    ChallengeMatch,
    ChallengeSummary,
)
from tournaments.read_models.ladder_models import MatchOutput, SeatInfo
from tournaments.read_models.ladder_reads import (
    HELD_DEAL,
    HELD_DISCARDED,
    HELD_PLAYING,
    HELD_UNWRITTEN,
    LadderApi,
    ReplayHeld,
)

_HELD = {"scheduled": HELD_PLAYING, "discarded": HELD_DISCARDED}
Seated = list[tuple[int, str]]  # (seat, version) of a match's seats


class ChallengeReads:
    def __init__(self, api: LadderApi) -> None:
        self.api = api

    def _asker(self, token: str, store: LadderStore) -> str | None:
        """None for the operator; the author's name otherwise (AccessDenied for neither)."""
        if self.api.is_operator(token):
            return None
        return self.api.author_of(token, store).name

    def ask(self, token: str, bot: str, against: Opponents, games: int) -> ChallengeSummary:
        with self.api.opened() as store:
            author = self.api.author_of(token, store)
            made = challenges.ask(store, self.api.config, author.name, bot, against, games)
            answer = summary(store, made)
        self.api.after_change()  # serve takes it at its next tick
        return answer

    def list(self, token: str) -> ChallengeList:
        with self.api.opened() as store, store.snapshot():
            asker = self._asker(token, store)
            found = challenges.challenges(store, author=asker)
            return ChallengeList(challenges=[summary(store, c) for c in found])

    def detail(self, token: str, number: int) -> ChallengeDetail:
        with self.api.opened() as store, store.snapshot():
            c = self._theirs(token, store, number)
            in_play = challenges.deals_in_play(store, c.id)
            rows = store.db.execute(
                "SELECT match_id, deal, status, finished_at, bots, ranks, reason, forfeits, "
                "replay FROM challenge_matches WHERE challenge = ? ORDER BY seq",
                (c.id,),
            ).fetchall()
            return ChallengeDetail(
                challenge=summary(store, c), matches=[_match(c, r, in_play) for r in rows]
            )

    def replay(self, token: str, number: int, match_id: str, seat: int | None) -> SeatReplay:
        """The replay of a challenge match, to be read as the challenger's seat: NoSuchChallenge
        when not theirs, ReplayHeld until every seating of its deal has ended."""
        seated, replay = self._ended(token, number, match_id)
        mine = [s for s, _ in seated]
        if seat is not None and seat not in mine:
            raise NoSuchChallenge(f"match {match_id}: your seats are {mine}")
        if replay is None:
            raise ReplayHeld(f"match {match_id}: {HELD_UNWRITTEN}")
        path = self.api.folder / "replays" / Path(replay).name
        if not path.is_file():
            raise NoSuchChallenge(f"match {match_id}: its replay is gone from the ladder")
        return SeatReplay(match_id, mine[0] if seat is None else seat, path)

    def output(self, token: str, number: int, match_id: str) -> MatchOutput:
        """What the challenger's bot wrote in a challenge match: its seats' logs, never an
        opponent's; held as the replay is."""
        seated, _ = self._ended(token, number, match_id)
        return seat_logs(self.api, match_id, seated)

    def _ended(self, token: str, number: int, match_id: str) -> tuple[Seated, str | None]:
        """(seat, version) of the challenger's seats in a match of their challenge (the
        challenging version's alone), and its replay's file name:
        NoSuchChallenge when not theirs, ReplayHeld until every seating of its deal has ended
        (before, it would tell the cards of the seatings still to play)."""
        with self.api.opened() as store, store.snapshot():
            c = self._theirs(token, store, number)
            row = store.db.execute(
                "SELECT deal, status, bots, replay FROM challenge_matches "
                "WHERE challenge = ? AND match_id = ?",
                (c.id, match_id),
            ).fetchone()
            in_play = challenges.deals_in_play(store, c.id)
        if row is None:
            raise NoSuchChallenge(f"challenge {number} has no match {match_id!r}")
        deal, status, bots, replay = row
        held = _HELD.get(status) or (HELD_DEAL if deal in in_play else None)
        if held is not None:
            raise ReplayHeld(f"match {match_id}: {held}")
        mine = [(s, key) for s, key in enumerate(json.loads(bots)) if key == c.version]
        return mine, None if replay is None else str(replay)

    def _theirs(self, token: str, store: LadderStore, number: int) -> Challenge:
        asker = self._asker(token, store)
        found = challenges.one(store, number)
        if found is None or (asker is not None and found.author != asker):
            raise NoSuchChallenge(f"no challenge {number} of yours on the ladder")
        return found


def summary(store: LadderStore, c: Challenge) -> ChallengeSummary:
    wins, draws, losses = challenges.record_of(store, c)
    (finished,) = store.db.execute(
        "SELECT COUNT(*) FROM challenge_matches WHERE challenge = ? AND status = 'finished'",
        (c.id,),
    ).fetchone()
    return ChallengeSummary(
        id=c.id,
        author=c.author,
        bot=c.bot,
        version=c.version,
        opponents=list(c.opponents),
        games=c.games,
        status=c.status,
        reason=c.reason,
        asked_at=c.asked_at,
        done_at=c.done_at,
        finished=int(finished),
        wins=wins,
        draws=draws,
        losses=losses,
    )


def _match(c: Challenge, row: tuple[object, ...], in_play: set[str]) -> ChallengeMatch:
    match_id, deal, status, finished_at, bots, ranks, reason, forfeits, replay = row
    keys: list[str] = json.loads(str(bots))
    shown = status == "finished" and deal not in in_play
    order = json.loads(str(ranks)) if shown else [None] * len(keys)
    causes = {int(s): str(cause) for s, cause, _ in json.loads(str(forfeits or "[]"))}
    held = _HELD.get(str(status)) or (HELD_DEAL if deal in in_play else None)
    return ChallengeMatch(
        match_id=str(match_id),
        deal=str(deal),
        status=str(status),
        finished_at=None if finished_at is None else str(finished_at),
        seats=[
            SeatInfo(version=k, rank=order[s], forfeit=causes.get(s) if shown else None)
            for s, k in enumerate(keys)
        ],
        mine=[s for s, k in enumerate(keys) if k == c.version],
        reason=str(reason) if shown and reason is not None else None,
        held=held or (HELD_UNWRITTEN if replay is None else None),
    )
