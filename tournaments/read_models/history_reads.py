"""A bot's rating history and a pair of bots' meetings, as the ladder's public pages show them,
under the rules every public read of the ladder obeys:

- a point is written only once every seating of its deal has ended (rating_history.py), and a
  discarded deal's points are gone (the series is written again with the ratings);
- after a freeze whose results are not released, the series ends at the freeze: it holds the
  ratings' order up to the first match finished after it (a rating made later may move with a
  result after the freeze, even that of a match finished before it), and a bot that came after
  the freeze has no page. The operator (their token) sees it whole; under `participants` a bot's
  own author (their token) sees the rest of their own bot's series, as they see their matches;
- a pair's match list is the public one: a match whose deal is in play shows no result and
  counts in no tally, a discarded one is marked and counts in none, and none finished after a
  freeze whose results are not released (the operator sees all).
"""

from __future__ import annotations

from tournaments.ladder import discards, freeze, roster
from tournaments.ladder.database import LadderStore
from tournaments.read_models.errors import BadQuery
from tournaments.read_models.history_models import (
    BotHistory,
    HistoryPoint,
    Outcome,
    PairDay,
    PairMatch,
    PairPage,
    Tally,
    VersionPairTally,
)
from tournaments.read_models.ladder_models import MatchSummary
from tournaments.read_models.ladder_reads import LadderApi, _summary


class HistoryReads:
    def __init__(self, api: LadderApi) -> None:
        self.api = api

    def history(self, name: str, token: str | None = None) -> BotHistory:
        """The bot's series as `token`'s holder may see it (None: a visitor); a wrong token is
        AccessDenied, NoSuchBot when the bot is not on the ladder (as it stood at the freeze)."""
        with self.api.opened() as store:
            # Before the snapshot: the first read after the freeze may pin it (a write).
            cutoff = self._cutoff(store, name, token)
            return self._history(store, name, cutoff)

    def _history(self, store: LadderStore, name: str, cutoff: str | None) -> BotHistory:
        with store.snapshot():
            bot = roster.bot_row(store, name)
            if cutoff is not None and bot.name not in {p.bot for p in freeze.pins(store)}:
                raise roster.NoSuchBot(f"no bot {name!r} on the ladder")
            limit = _first_after(store, cutoff)
            rows = store.db.execute(
                "SELECT h.rated, h.at, h.match_id, h.version, h.mu, h.sigma, h.elo "
                "FROM rating_history h JOIN versions v ON v.key = h.version "
                "WHERE v.bot = ? AND h.rated < ? ORDER BY h.rated",
                (name, limit),
            ).fetchall()
            met = store.db.execute(
                "SELECT DISTINCT v.bot FROM rating_history mine "
                "JOIN versions own ON own.key = mine.version "
                "JOIN rating_history other ON other.rated = mine.rated "
                "JOIN versions v ON v.key = other.version "
                "WHERE own.bot = ? AND v.bot != ? AND mine.rated < ? ORDER BY v.bot",
                (name, name, limit),
            ).fetchall()
        points: list[HistoryPoint] = []
        for rated, at, match_id, version, mu, sigma, elo in rows:
            changed = bool(points) and points[-1].version != version
            points.append(
                HistoryPoint(
                    rated=rated,
                    finished_at=at,
                    match_id=match_id,
                    version=version,
                    mu=mu,
                    sigma=sigma,
                    conservative=mu - 3 * sigma,
                    elo=elo,
                    version_change=changed,
                )
            )
        return BotHistory(
            bot=name,
            points=points,
            changes=[p.version for p in points if p.version_change],
            opponents=[str(bot) for (bot,) in met],
            until=cutoff,
        )

    def _cutoff(self, store: LadderStore, name: str, token: str | None) -> str | None:
        if token is None:
            return self.api.cutoff(store)
        if self._operator(store, token):
            return None
        author = self.api.author_of(token, store)
        own = roster.bot_row(store, name).author == author.name
        return self.api.cutoff(store, author=own)

    def _operator(self, store: LadderStore, token: str) -> bool:
        """Whether the token is the operator's; else it must be a live author's (AccessDenied:
        a wrong token is refused, not taken for a visitor, so guesses count as failed checks)."""
        if self.api.is_operator(token):
            return True
        self.api.author_of(token, store)
        return False

    def pair(self, name: str, against: str, token: str | None = None) -> PairPage:
        """The two bots' matches together, and the first's W-D-L against the second: in all,
        by pair of versions, and by day (UTC). As the public match list: the operator (their
        token) sees the matches after a freeze too; anyone else, author or not, the public's."""
        if name == against:
            raise BadQuery(f"a pair is two bots: {name!r} twice")
        with self.api.opened() as store:
            whole = token is not None and self._operator(store, token)
            cutoff = None if whole else self.api.cutoff(store)  # may pin: before the snapshot
            with store.snapshot():
                pinned = {p.bot for p in freeze.pins(store)}
                for bot in (name, against):
                    roster.bot_row(store, bot)
                    if cutoff is not None and bot not in pinned:
                        raise roster.NoSuchBot(f"no bot {bot!r} on the ladder")
                theirs = {v.key for v in roster.versions(store, against)}
                found = {
                    f.record.match_id: f
                    for v in roster.versions(store, name)
                    for f in store.finished(version=v.key, until=cutoff, discarded=True)
                    if theirs & set(f.record.bots)
                }
                in_play = store.deals_in_play()
                gone = discards.discarded(store)
        ordered = sorted(found.values(), key=lambda f: f.seq, reverse=True)
        summaries = [_summary(f, in_play, gone) for f in ordered]
        played = [PairMatch(match=s, outcome=_outcome(s, name, against)) for s in summaries]
        return PairPage(
            bot=name,
            against=against,
            tally=_tally([m.outcome for m in played]),
            by_versions=_by_versions(played, name, against),
            by_day=_by_day(played),
            matches=played,
        )


def _first_after(store: LadderStore, cutoff: str | None) -> int:
    """The first place in the ratings' order not shown: that of the first rated match that
    finished after the cutoff (none: past the last)."""
    if cutoff is not None:
        row = store.db.execute(
            "SELECT MIN(rated) FROM matches WHERE rated IS NOT NULL AND finished_at > ?",
            (cutoff,),
        ).fetchone()
        if row[0] is not None:
            return int(row[0])
    row = store.db.execute("SELECT COALESCE(MAX(rated), 0) + 1 FROM rating_history").fetchone()
    return int(row[0])


def _bot_of(version: str) -> str:
    return version.rsplit("@", 1)[0]


def _seat_of(match: MatchSummary, bot: str) -> int:
    return next(i for i, s in enumerate(match.seats) if _bot_of(s.version) == bot)


def _outcome(match: MatchSummary, name: str, against: str) -> Outcome | None:
    """The first bot's result against the second: above it (a lower rank) a win, level a draw;
    none while the ranks are withheld (deal in play, discarded)."""
    mine = match.seats[_seat_of(match, name)].rank
    theirs = match.seats[_seat_of(match, against)].rank
    if mine is None or theirs is None:
        return None
    return "win" if mine < theirs else "draw" if mine == theirs else "loss"


def _tally(outcomes: list[Outcome | None]) -> Tally:
    return Tally(
        wins=outcomes.count("win"), draws=outcomes.count("draw"), losses=outcomes.count("loss")
    )


def _by_versions(played: list[PairMatch], name: str, against: str) -> list[VersionPairTally]:
    outcomes: dict[tuple[str, str], list[Outcome | None]] = {}
    for m in reversed(played):  # oldest first: the versions in the order they met
        pair = (
            m.match.seats[_seat_of(m.match, name)].version,
            m.match.seats[_seat_of(m.match, against)].version,
        )
        outcomes.setdefault(pair, []).append(m.outcome)
    return [
        VersionPairTally(version=mine, against=theirs, tally=_tally(results))
        for (mine, theirs), results in outcomes.items()
    ]


def _by_day(played: list[PairMatch]) -> list[PairDay]:
    """Each UTC day with a result, oldest first, with the running total: by day rather than per
    so many matches, since a pair meets at the matchmaker's whim (ten times in an hour, then not
    for a week) and an author reads progress against the calendar of their uploads."""
    days: dict[str, list[Outcome | None]] = {}
    for m in reversed(played):
        if m.outcome is not None:
            days.setdefault(m.match.finished_at[:10], []).append(m.outcome)
    total: list[Outcome | None] = []
    made = []
    for day, results in days.items():
        total += results
        made.append(PairDay(day=day, tally=_tally(results), total=_tally(total)))
    return made
