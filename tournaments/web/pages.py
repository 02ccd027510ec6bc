"""The web servers' HTML (a tournament's, a ladder's), from Jinja2 templates kept beside this
module (package data): the styles and the script are inlined, so a page needs nothing but the
server that sent it."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

import jinja2
from arena_games.match_settings import Misbehaviour

from tournaments.audit_log import AuditEntry
from tournaments.bracket_models import BracketRound, BracketView, TableStatus
from tournaments.read_models.history_models import BotHistory, PairPage
from tournaments.read_models.ladder_models import BotPage, LadderState, LeaderboardRow, MatchSummary
from tournaments.read_models.tournament_models import MatchList, MatchQuery, TournamentInfo
from tournaments.standings import StandingsReport
from tournaments.standings_grids import grids, sprt_text
from tournaments.web import rating_chart

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("tournaments.web", "templates"),
    autoescape=jinja2.select_autoescape(["html"]),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)

RESULTS = [("", "any"), ("win", "win"), ("draw", "draw"), ("loss", "loss"), ("playing", "playing")]
CAUSES = [("", "any or none"), ("any", "any cause")] + [(c.value, c.value) for c in Misbehaviour]


def tournament_page(
    info: TournamentInfo,
    standings: StandingsReport,
    query: MatchQuery,
    matches: MatchList | None,
    error: str | None = None,
) -> str:
    """The standings, then the match list (matches None and error said when the filters were
    refused)."""
    return _ENV.get_template("tournament.html").render(
        info=info,
        progress=info.progress.model_dump_json(),
        grids=grids(standings),
        sprt=sprt_text(standings.sprt) if standings.sprt else None,
        **bracket_parts(standings.bracket),
        query=query,
        matches=matches,
        error=error,
        results=RESULTS,
        causes=CAUSES,
        previous=_page_link(query, matches, -1),
        following=_page_link(query, matches, +1),
    )


def results_hidden_page(info: TournamentInfo, line: str) -> str:
    """The tournament page while its results are not the visitor's to see (release_guard.py):
    what the tournament is and how far it has got, and `line` in place of every result."""
    return _ENV.get_template("tournament_hidden.html").render(
        info=info, progress=info.progress.model_dump_json(), line=line
    )


def exported_page(
    info: TournamentInfo,
    standings: StandingsReport,
    matches: MatchList,
    exported_at: str,
    still_running: bool,
) -> str:
    """index.html of an exported site (tournaments/web/static_site.py): every match listed,
    their viewer links relative to the site."""
    return _ENV.get_template("exported.html").render(
        info=info,
        progress=info.progress.model_dump_json(),
        grids=grids(standings),
        sprt=sprt_text(standings.sprt) if standings.sprt else None,
        **bracket_parts(standings.bracket),
        matches=matches,
        exported_at=exported_at,
        still_running=still_running,
    )


@dataclass(frozen=True)
class BracketSide:
    """One block of the drawn bracket: the winners' side, the losers' side or the finals."""

    key: str
    title: str
    rounds: list[BracketRound]


SIDE_TITLES = {"winners": "Winners' side", "losers": "Losers' side", "finals": "Finals"}
STATUS_TEXT: dict[TableStatus, str] = {
    "waiting": "waiting",
    "bye": "bye",
    "playing": "playing",
    "decided": "decided",
}


def bracket_parts(bracket: BracketView | None) -> dict[str, object]:
    """What bracket.html draws: the bracket and its rounds by side (the grand final and its
    reset together, as the finals)."""
    by_side: dict[str, list[BracketRound]] = {}
    for bracket_round in bracket.rounds if bracket else []:
        key = "finals" if bracket_round.side in ("grand-final", "reset") else bracket_round.side
        by_side.setdefault(key, []).append(bracket_round)
    sides = [
        BracketSide(key, SIDE_TITLES[key], by_side[key]) for key in SIDE_TITLES if key in by_side
    ]
    if bracket is not None and bracket.format == "knockout" and len(sides) == 1:
        sides = [BracketSide(sides[0].key, "", sides[0].rounds)]
    return {"bracket": bracket, "sides": sides, "status_text": STATUS_TEXT}


def _page_link(query: MatchQuery, matches: MatchList | None, direction: int) -> str | None:
    if matches is None:
        return None
    offset = query.offset + direction * query.limit
    if (offset < 0 and query.offset == 0) or offset >= matches.total:
        return None
    params = query.model_dump(exclude_defaults=True) | {"offset": max(offset, 0)}
    return "/?" + urlencode({k: v for k, v in params.items() if v})


def ladder_page(
    state: LadderState,
    rows: list[LeaderboardRow],
    against: str | None,
    recent: list[MatchSummary],
) -> str:
    """The leaderboard (each row's win rate against the bot `against`), then recent matches."""
    return _ENV.get_template("ladder.html").render(
        state=state,
        progress=state.progress.model_dump_json(),
        rows=rows,
        against=against,
        two_seats=state.seats == 2,
        recent=recent,
    )


def ladder_bot_page(state: LadderState, bot: BotPage, history: BotHistory) -> str:
    """The bot's page, with its rating charts over matches and over time (SVG drawn by the page
    itself)."""
    return _ENV.get_template("ladder_bot.html").render(
        state=state,
        progress=state.progress.model_dump_json(),
        bot=bot,
        history=history,
        chart=rating_chart.chart(history),
        timeline=rating_chart.chart(history, "time"),
    )


def ladder_pair_page(state: LadderState, pair: PairPage) -> str:
    """Two bots' matches together, and the first's W-D-L against the second."""
    return _ENV.get_template("ladder_pair.html").render(
        state=state, progress=state.progress.model_dump_json(), pair=pair
    )


def me_page() -> str:
    """An author's page: a form for their token and the script that reads /api/me with it; no
    data of anyone's in the page itself."""
    return _ENV.get_template("me.html").render()


def final_audit_page(name: str, entries: list[AuditEntry]) -> str:
    """A tournament's audit log, written whole by the server (the operator's server only)."""
    return _ENV.get_template("final_audit.html").render(name=name, entries=entries)


def audit_page() -> str:
    """The operator's audit page: a form for their token and the script that reads /api/audit
    with it; nothing of the log in the page itself."""
    return _ENV.get_template("audit.html").render()


def error_page(status: int, message: str) -> str:
    return _ENV.get_template("error.html").render(status=status, message=message)
