"""A planned bracket (tournaments/knockout.py) played out from its tables' finished games, pure:
who sits at each table, who went on and how it was decided, which deals a table still needs,
and the placings. A table plays its `deals`, then one tie-break deal at a time while it is tied
at the cut between the last place going on and the first place out, up to `tiebreak_deals`;
after that the better seed goes on. Only deals that ended in every seating count."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tournaments.bracket_models import Decider, TableStatus
from tournaments.knockout import Bracket, Source, TablePlan
from tournaments.records import MatchRecord

_EPSILON = 1e-9  # points are sums of thirds and halves: equal within this are a tie


@dataclass(frozen=True)
class TableGames:
    """A table's games as the ledger holds them: by game number (deal * seats + seating)."""

    scheduled: Mapping[int, str] = field(default_factory=dict)  # game -> match id
    finished: Mapping[int, MatchRecord] = field(default_factory=dict)


@dataclass(frozen=True)
class TableState:
    plan: TablePlan
    known: tuple[str, ...]  # its bots known so far, seed order
    arrivals: tuple[str, ...]  # the same, in the order of the plan's sources
    unknown: int  # seats still waiting on an earlier table
    status: TableStatus
    standing: tuple[str, ...] = ()  # once decided: through first, then the others, best first
    decided_by: Decider | None = None
    points: Mapping[str, float] = field(default_factory=dict)
    deals: int = 0  # deals complete (every seating finished), tie-breaks included
    wanted: int = 0  # deals it needs scheduled (0 until its bots are known, and once decided)
    matches: tuple[str, ...] = ()

    @property
    def decided(self) -> bool:
        return self.status in ("decided", "bye")

    @property
    def sent_on(self) -> tuple[str, ...]:
        return self.standing[: self.plan.through] if self.decided else ()

    @property
    def dropped(self) -> tuple[str, ...]:
        return self.standing[self.plan.through :] if self.decided else ()


@dataclass(frozen=True)
class Rules:
    deals: int
    tiebreak_deals: int


def resolve(
    bracket: Bracket, rules: Rules, games: Mapping[str, TableGames]
) -> dict[str, TableState]:
    """Every table's state, in the bracket's order; the reset only once the losers' champion
    has won the grand final."""
    states: dict[str, TableState] = {}
    for plan in bracket.tables:
        if plan.side == "reset" and not _reset_needed(states.get("GF"), bracket.through):
            continue
        known, unknown = _seated(plan, bracket, states)
        seated = (tuple(sorted(known, key=bracket.seed)), tuple(known))
        table_games = games.get(plan.table_id, TableGames())
        if unknown:
            states[plan.table_id] = TableState(plan, *seated, unknown, "waiting")
        elif len(known) <= plan.through:
            states[plan.table_id] = TableState(plan, *seated, 0, "bye", seated[0])
        else:
            states[plan.table_id] = _judge(plan, seated, bracket, rules, table_games)
    return states


def _reset_needed(grand: TableState | None, finalists: int) -> bool:
    """The losers' side won the grand final: the first loss of every unbeaten finalist."""
    if grand is None or not grand.decided:
        return False
    # The first `finalists` sources are the winners' side: arrivals keeps the sources' order.
    return grand.standing[0] not in grand.arrivals[:finalists]


def _source_bots(
    source: Source, bracket: Bracket, states: Mapping[str, TableState]
) -> tuple[str, ...] | None:
    """The bot a source stands for: () when absent (a seed past the field, or an empty table's
    drop), None while the table it comes from is undecided."""
    if source.table is None:
        return (bracket.bots[source.seed - 1],) if source.seed <= len(bracket.bots) else ()
    state = states.get(source.table)
    if state is None or not state.decided:
        return None
    chosen = state.dropped if source.dropped else state.sent_on
    return chosen[source.index : source.index + 1]


def _seated(
    plan: TablePlan, bracket: Bracket, states: Mapping[str, TableState]
) -> tuple[list[str], int]:
    """The table's bots known so far (in source order), and how many seats are not known yet."""
    known: list[str] = []
    unknown = 0
    for source in plan.sources:
        bots = _source_bots(source, bracket, states)
        if bots is None:
            unknown += 1
        else:
            known.extend(bots)
    return known, unknown


def _judge(
    plan: TablePlan,
    seated: tuple[tuple[str, ...], tuple[str, ...]],
    bracket: Bracket,
    rules: Rules,
    games: TableGames,
) -> TableState:
    """A table whose bots are known: the deals it needs, or how it was decided."""
    bots = seated[0]
    seats = len(bots)
    complete = 0
    while all(complete * seats + s in games.finished for s in range(seats)):
        complete += 1
    matches = tuple(games.scheduled[g] for g in sorted(games.scheduled))
    status: TableStatus = "playing" if games.scheduled else "waiting"
    played = rules.deals
    while True:
        if complete < played:
            points = _points(bots, games, min(complete, played))
            return TableState(plan, *seated, 0, status, (), None, points, complete, played, matches)
        points = _points(bots, games, played)
        standing = tuple(sorted(bots, key=lambda b: (-points[b], bracket.seed(b))))
        last_in, first_out = standing[plan.through - 1], standing[plan.through]
        clear = points[last_in] - points[first_out] > _EPSILON
        limit = played >= rules.deals + rules.tiebreak_deals
        if clear or limit:
            by: Decider = "seed"
            if clear:
                by = "points" if played == rules.deals else "tie-break deals"
            return TableState(plan, *seated, 0, "decided", standing, by, points, played, 0, matches)
        played += 1


def _points(bots: tuple[str, ...], games: TableGames, deals: int) -> dict[str, float]:
    """Each bot's points over the first `deals` deals, in game order (the same sum each time)."""
    points = dict.fromkeys(bots, 0.0)
    for game in range(deals * len(bots)):
        record = games.finished[game]
        for bot in record.bots:
            points[bot] += record.points(bot)
    return points


@dataclass(frozen=True)
class Placings:
    champion: str | None
    groups: list[list[str]]  # from the top: bots still in first, then out by round, latest first


def placings(bracket: Bracket, states: Mapping[str, TableState]) -> Placings:
    """Who placed where: a final table ranks its bots one by one; bots knocked out in the same
    earlier round share a place; bots still in play share the best place still open."""
    out: dict[str, tuple[int, int, int]] = {}
    champion = None
    for state in states.values():
        plan = state.plan
        if state.status != "decided" or not _eliminates(plan, bracket, states):
            continue
        final = plan.feeds is None
        for index, bot in enumerate(state.dropped):
            out[bot] = (1 if final else 0, plan.round, index if final else 0)
        if final:
            champion = state.standing[0]
    groups: list[list[str]] = []
    alive = [b for b in bracket.bots if b not in out and b != champion]
    if champion is not None:
        groups.append([champion])
    elif alive:
        groups.append(alive)
    for key in sorted(set(out.values()), key=lambda k: (-k[0], -k[1], k[2])):
        groups.append([b for b in bracket.bots if out.get(b) == key])
    return Placings(champion, groups)


def _eliminates(plan: TablePlan, bracket: Bracket, states: Mapping[str, TableState]) -> bool:
    """Whether a table's dropped bots are out: in a double elimination a winners' table sends
    its losers to the losers' side, and a grand final won by the losers' champion to a reset."""
    if bracket.kind == "knockout" or plan.side in ("losers", "reset"):
        return True
    return plan.side == "grand-final" and "GF2" not in states
