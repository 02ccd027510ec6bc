"""A bracket's state (tournaments/knockout.py) as its read model (tournaments/bracket_models.py):
what `arena tournament standings`, its --json, the web page and an exported site show."""

from __future__ import annotations

from collections.abc import Mapping

from tournaments import bracket_results, knockout
from tournaments.bracket_models import (
    BracketEntrant,
    BracketRound,
    BracketTable,
    BracketView,
    Side,
)

_SIDE_ORDER: dict[Side, int] = {"winners": 0, "losers": 1, "grand-final": 2, "reset": 3}
_STAGES = ["Final", "Semi-finals", "Quarter-finals"]  # by rounds before the side's end


def bracket_view(
    bracket: knockout.Bracket,
    states: Mapping[str, bracket_results.TableState],
    found: bracket_results.Placings,
) -> BracketView:
    rounds: dict[tuple[Side, int], list[BracketTable]] = {}
    # The grand final feeds its reset once the reset is on (the plan leaves the grand final's
    # `feeds` empty: it is the last table unless the losers' side wins it).
    reset = next((p.table_id for p in bracket.tables if p.side == "reset"), None)
    for plan in bracket.tables:
        state = states.get(plan.table_id)
        if state is not None:
            feeds = reset if plan.side == "grand-final" and reset in states else plan.feeds
            rounds.setdefault((plan.side, plan.round), []).append(_table(bracket, state, feeds))
    last = _last_rounds(rounds)
    return BracketView(
        format=bracket.kind,
        seats=bracket.seats,
        through=bracket.through,
        rounds=[
            BracketRound(
                side=side,
                round=number,
                label=_label(bracket.kind, side, number, last),
                tables=tables,
            )
            for (side, number), tables in sorted(
                rounds.items(), key=lambda item: (_SIDE_ORDER[item[0][0]], item[0][1])
            )
        ],
        champion=found.champion,
        placings=found.groups,
    )


def _last_rounds(rounds: Mapping[tuple[Side, int], list[BracketTable]]) -> dict[Side, int]:
    last: dict[Side, int] = {}
    for side, number in rounds:
        last[side] = max(last.get(side, 0), number)
    return last


def _label(kind: str, side: Side, number: int, last: Mapping[Side, int]) -> str:
    if side == "grand-final":
        return "Grand final"
    if side == "reset":
        return "Grand final reset"
    if side == "losers":
        return "Losers' final" if number == last[side] else f"Losers' round {number}"
    to_go = last[side] - number
    stage = _STAGES[to_go] if to_go < len(_STAGES) else None
    if kind == "knockout":
        return stage or f"Round {number}"
    if stage is None:
        return f"Winners' round {number}"
    return f"Winners' {stage[0].lower()}{stage[1:]}"


def _table(
    bracket: knockout.Bracket, state: bracket_results.TableState, feeds: str | None
) -> BracketTable:
    plan = state.plan
    played = state.status in ("playing", "decided")
    entrants = [
        BracketEntrant(
            bot=bot,
            seed=bracket.seed(bot),
            points=state.points.get(bot) if played and state.deals else None,
            through=bot in state.sent_on,
        )
        for bot in state.known
    ]
    entrants.extend(
        BracketEntrant(bot=None, seed=None, points=None, through=False)
        for _ in range(state.unknown)
    )
    return BracketTable(
        table_id=plan.table_id,
        side=plan.side,
        round=plan.round,
        entrants=entrants,
        status=state.status,
        decided_by=state.decided_by,
        deals=state.deals,
        matches=list(state.matches),
        feeds=feeds,
        losers_feed=plan.losers_feed,
    )
