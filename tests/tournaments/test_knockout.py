"""The bracket's pure logic (tournaments/knockout.py) through its scheduler, on synthetic
results: every bracket size and table size plays to exactly one champion, every bot plays until
it is out, byes go only to the top seeds, seeds 1 and 2 meet only in the final, no match is
scheduled twice, a resume schedules neither a repeated nor a lost match; and the tournament
file's errors for these formats."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from tests.tournaments.web.harness import get_json, web_server
from tournaments import bracket_pool, bracket_results, knockout
from tournaments.cli import bracket_print
from tournaments.config import ConfigError, TournamentConfig, parse_config
from tournaments.deal_book import entry_of
from tournaments.records import MatchRecord
from tournaments.schedule import BracketSchedule, Ledger, MatchJob, scheduler_for
from tournaments.standings import standings_report
from tournaments.store import Store

GAME = {2: "capture-the-commander", 3: "capture-the-commander", 4: "strato-sphere"}
Result = Callable[[MatchJob], tuple[int, ...]]


def config(bots: int, **fmt: Any) -> TournamentConfig:
    seats = fmt.get("seats", 2)
    return parse_config(
        {
            "name": "bracket",
            "game": GAME[seats],
            "seed": 1,
            "bots": [{"spec": "example:random", "name": f"s{n}"} for n in range(1, bots + 1)],
            "format": {"kind": "knockout", **fmt},
        }
    )


def by_seed(job: MatchJob) -> tuple[int, ...]:
    """The better seed always finishes ahead."""
    numbers = [int(bot[1:]) for bot in job.bots]
    return tuple(sorted(numbers).index(n) for n in numbers)


def at_random(rng: random.Random) -> Result:
    """Any order, or everyone tied (what a mirrored duplicate deal gives), from rng."""

    def result(job: MatchJob) -> tuple[int, ...]:
        if rng.random() < 0.3:
            return (0,) * len(job.bots)
        order = list(range(len(job.bots)))
        rng.shuffle(order)
        return tuple(order)

    return result


def play_out(
    cfg: TournamentConfig, result: Result, stop: int | None = None, scheduler: Any = None
) -> Ledger:
    """The scheduler's matches, all played, until it has none left (or `stop` are played)."""
    scheduler = scheduler or BracketSchedule(cfg, cfg.format)  # type: ignore[arg-type]
    ledger = Ledger()
    while (jobs := scheduler.next_jobs(ledger)) is not None:
        assert jobs, "nothing in flight, nothing scheduled, yet not over"
        for job in jobs:
            assert job.match_id not in ledger.scheduled, job.match_id
            ledger.scheduled[job.match_id] = job
        for job in jobs:
            if stop is not None and len(ledger.finished) >= stop:
                return ledger
            ranks = result(job)
            ledger.finished[job.match_id] = MatchRecord(
                job.match_id, job.deal, job.bots, ranks, tuple(map(float, ranks)), "synthetic"
            )
    return ledger


def check_bracket(cfg: TournamentConfig, ledger: Ledger) -> bracket_results.Placings:
    """The invariants every finished bracket keeps; the placings."""
    scheduler = BracketSchedule(cfg, cfg.format)  # type: ignore[arg-type]
    states = scheduler.states(ledger)
    found = bracket_results.placings(scheduler.bracket, states)
    bots = cfg.bot_names()
    assert found.champion is not None and found.groups[0] == [found.champion]
    assert sorted(b for group in found.groups for b in group) == sorted(bots)
    lives = 1 if cfg.format.kind == "knockout" else 2
    if lives == 2 and cfg.format.seats > 2:
        check_grand_final(states, lives, cfg.format.going_on)
    else:
        losses = Counter(b for s in states.values() if s.status == "decided" for b in s.dropped)
        for bot in bots:
            # Out after one loss in a knockout, two in a double elimination; the champion's
            # losses are fewer.
            if bot == found.champion:
                assert losses[bot] < lives
            else:
                assert losses[bot] == lives, (bot, losses)
    check_byes(scheduler.bracket, states)
    return found


def check_grand_final(
    states: dict[str, bracket_results.TableState], lives: int, finalists: int
) -> None:
    """A double elimination at 3-4 seats: every bot out before the grand final is out after
    two losses; the grand final seats the winners' side's `finalists` unbeaten and the losers'
    side's with one loss, and is replayed whole (the reset) only when the losers' side won it."""
    before = [s for s in states.values() if s.plan.side in ("winners", "losers")]
    losses = Counter(b for s in before for b in s.dropped)
    grand = states["GF"]
    unbeaten, beaten = grand.arrivals[:finalists], grand.arrivals[finalists:]
    assert [losses[b] for b in unbeaten] == [0] * finalists, (unbeaten, losses)
    assert [losses[b] for b in beaten] == [1] * len(beaten), (beaten, losses)
    assert all(losses[b] == lives for b in losses if b not in grand.arrivals), losses
    assert ("GF2" in states) == (grand.standing[0] in beaten)
    if "GF2" in states:
        assert states["GF2"].arrivals == grand.arrivals


def check_byes(bracket: knockout.Bracket, states: dict[str, bracket_results.TableState]) -> None:
    """Only the top seeds sit out the first round, and every table played is full."""
    first = [s for s in states.values() if s.plan.side == "winners" and s.plan.round == 1]
    resting = sorted(bracket.seed(b) for s in first if s.status == "bye" for b in s.known)
    assert resting == list(range(1, len(resting) + 1))
    assert all(len(s.known) <= bracket.through for s in first if s.status == "bye")
    assert all(len(s.known) == bracket.seats for s in first if s.status != "bye")


SIZES = [
    (seats, through, n)
    for seats, through in ((2, 1), (3, 1), (4, 1), (4, 2))
    for n in range(seats, 34)
]


@settings(max_examples=60, deadline=None)
@given(size=st.sampled_from(SIZES), seed=st.integers(0, 2**32), tiebreaks=st.integers(0, 2))
def test_a_knockout_of_any_size_plays_to_one_champion(
    size: tuple[int, int, int], seed: int, tiebreaks: int
) -> None:
    seats, through, bots = size
    cfg = config(bots, seats=seats, through=through, tiebreak_deals=tiebreaks)
    check_bracket(cfg, play_out(cfg, at_random(random.Random(seed))))


@settings(max_examples=40, deadline=None)
@given(bots=st.integers(2, 33), seed=st.integers(0, 2**32))
def test_a_double_elimination_of_any_size_plays_to_one_champion(bots: int, seed: int) -> None:
    cfg = config(bots, kind="double-elimination", tiebreak_deals=1)
    check_bracket(cfg, play_out(cfg, at_random(random.Random(seed))))


DOUBLE_AT_FOUR = [n for n in range(4, 34) if knockout.fitting(n, 4, 2)]
UNEVEN_DOUBLE = [(seats, 1, n) for seats in (3, 4) for n in range(seats, 34)] + [
    (4, 2, n) for n in range(7, 34, 2)
]


@settings(max_examples=60, deadline=None)
@given(size=st.sampled_from(UNEVEN_DOUBLE), seed=st.integers(0, 2**32))
def test_a_double_elimination_planned_round_by_round_plays_to_one_champion(
    size: tuple[int, int, int], seed: int
) -> None:
    """At 3 seats, at 4 with 1 through, and at 4 with 2 through and an odd count: every bot
    out before the grand final after exactly two losses, the grand final the winners' side's
    unbeaten finalists and the losers' side's, the reset only when the losers' side wins."""
    seats, through, bots = size
    cfg = config(bots, kind="double-elimination", seats=seats, through=through, tiebreak_deals=1)
    check_bracket(cfg, play_out(cfg, at_random(random.Random(seed))))


@pytest.mark.parametrize(("seats", "through"), [(3, 1), (4, 1), (4, 2)])
@pytest.mark.parametrize("bots", [6, 7, 8, 9, 11, 14, 17])
def test_a_bracket_planned_round_by_round_by_seed_has_the_total_known(
    seats: int, through: int, bots: int
) -> None:
    """Without tie-breaks or a reset a bracket plays exactly the matches counted in advance,
    every table it plays full, and seed 1 wins."""
    for kind in ("knockout", "double-elimination"):
        if kind != "knockout" and (seats, through, bots) == (4, 2, 5):
            continue
        cfg = config(bots, kind=kind, seats=seats, through=through)
        ledger = play_out(cfg, by_seed)
        assert check_bracket(cfg, ledger).champion == "s1"
        assert len(ledger.scheduled) == BracketSchedule(cfg, cfg.format).total  # type: ignore[arg-type]
        assert all(len(j.bots) == seats for j in ledger.scheduled.values())


def test_a_double_elimination_at_three_seats_reaches_the_reset() -> None:
    """Seed 8 loses its first table, then wins every other: it wins the grand final from the
    losers' side, and the reset replays the same three."""
    cfg = config(8, kind="double-elimination", seats=3)
    ledger = play_out(cfg, favouring("s8", "W1"))
    check_bracket(cfg, ledger)
    grand = {j.bots for j in ledger.scheduled.values() if j.match_id.startswith("GF-")}
    reset = {j.bots for j in ledger.scheduled.values() if j.match_id.startswith("GF2-")}
    assert reset and {frozenset(b) for b in grand} == {frozenset(b) for b in reset}


def test_a_table_of_three_sending_one_on_cannot_seat_an_even_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """8 bots at 3 seats must lose 7 times: the plan sends two of one table on (a wide table).
    Control: with every table sending one on (what a round knocks out rounded down to whole
    tables), 8 cannot be planned, and 7 still can."""
    plan = knockout.plan_bracket("knockout", [f"s{n}" for n in range(1, 9)], 3, 1)
    played = [t for t in plan.tables if len(t.sources) == 3]
    assert sum(3 - t.through for t in played) == 7
    assert sorted(t.through for t in played) == [1, 1, 1, 2]
    assert knockout.plannable("knockout", 8, 3, 1)
    wide = bracket_pool.knocked_out

    def whole_tables(waiting: int, seats: int, through: int, keep: int) -> int:
        return (seats - through) * (wide(waiting, seats, through, keep) // (seats - through))

    monkeypatch.setattr(bracket_pool, "knocked_out", whole_tables)
    assert not knockout.plannable("knockout", 8, 3, 1)
    assert not knockout.plannable("double-elimination", 8, 3, 1)
    assert knockout.plannable("knockout", 7, 3, 1)


@settings(max_examples=40, deadline=None)
@given(bots=st.sampled_from(DOUBLE_AT_FOUR), seed=st.integers(0, 2**32))
def test_a_double_elimination_at_four_seats_plays_to_one_champion(bots: int, seed: int) -> None:
    """Two of each table of four go on, two drop (once) to the losers' side, where tables of
    four again send two on; the grand final is both sides' two finalists."""
    cfg = config(bots, kind="double-elimination", seats=4, tiebreak_deals=1)
    check_bracket(cfg, play_out(cfg, at_random(random.Random(seed))))


@pytest.mark.parametrize("bots", DOUBLE_AT_FOUR)
def test_a_double_elimination_at_four_seats_by_seed_ends_in_seed_order(bots: int) -> None:
    cfg = config(bots, kind="double-elimination", seats=4, deals=2)
    ledger = play_out(cfg, by_seed)
    found = check_bracket(cfg, ledger)
    assert found.champion == "s1" and found.groups[1:4] == [["s2"], ["s3"], ["s4"]]
    assert len(ledger.scheduled) == BracketSchedule(cfg, cfg.format).total  # type: ignore[arg-type]
    tables = Counter(j.match_id.rsplit("-g", 1)[0] for j in ledger.scheduled.values())
    # Each table plays its two deals in four seatings: eight matches, each once.
    assert set(tables.values()) == {8} and len(set(ledger.scheduled)) == len(ledger.scheduled)
    met = Counter(frozenset(j.bots) for j in ledger.scheduled.values())
    if bots in (8, 16, 32):  # without byes (they thin the losers' side) the only four to
        # meet twice are the winners' final's, whose drops win the losers' side: in the GF.
        twice = [four for four, count in met.items() if count > 8]
        assert twice == [frozenset(["s1", "s2", "s3", "s4"])] and met[twice[0]] == 16


def test_a_double_elimination_at_four_seats_reaches_the_reset() -> None:
    """The losers' side's seed 8 wins every table after its first: it wins the grand final,
    and the reset replays the same four."""
    cfg = config(8, kind="double-elimination", seats=4)
    ledger = play_out(cfg, favouring("s8", "W1"))
    check_bracket(cfg, ledger)
    assert any(m.startswith("GF2-") for m in ledger.scheduled)


def test_a_winners_finalist_winning_the_grand_final_needs_no_reset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seed 1 finishes last at the grand final, won by seed 2, the other unbeaten finalist: no
    reset. Control: the two-seat rule (a reset unless source 0 wins) plays one, which the
    check above refuses."""
    cfg = config(8, kind="double-elimination", seats=4)
    ledger = play_out(cfg, favouring("s1", "GF", elsewhere=None))
    assert check_bracket(cfg, ledger).champion == "s2"
    assert not any(m.startswith("GF2-") for m in ledger.scheduled)

    def two_seat_rule(grand: bracket_results.TableState | None, finalists: int) -> bool:
        return grand is not None and grand.decided and grand.standing[0] != grand.arrivals[0]

    monkeypatch.setattr(bracket_results, "_reset_needed", two_seat_rule)
    ledger = play_out(cfg, favouring("s1", "GF", elsewhere=None))
    assert any(m.startswith("GF2-") for m in ledger.scheduled)
    with pytest.raises(AssertionError):
        check_bracket(cfg, ledger)


@pytest.mark.parametrize("bots", range(2, 34))
def test_every_size_by_seed_ends_in_seed_order_with_the_total_known(bots: int) -> None:
    for kind in ("knockout", "double-elimination"):
        cfg = config(bots, kind=kind, deals=2)
        ledger = play_out(cfg, by_seed)
        found = check_bracket(cfg, ledger)
        assert found.champion == "s1" and found.groups[1] == ["s2"]
        # No tie-break and no reset: the matches played are the total known in advance.
        assert len(ledger.scheduled) == BracketSchedule(cfg, cfg.format).total  # type: ignore[arg-type]
        view = standings_report(cfg, ledger).bracket
        assert view is not None
        finals = [t for r in view.rounds for t in r.tables if t.side == "grand-final"]
        assert all(t.feeds is None for t in finals)  # no reset: the grand final is the last
        met = [j for j in ledger.scheduled.values() if {"s1", "s2"} <= set(j.bots)]
        # Seeds 1 and 2 meet only in the final (in double elimination, the winners' final and
        # the grand final).
        assert met
        last_winners = f"W{knockout.rounds_for(bots, 2, 1)}-T1"
        assert {j.match_id.rsplit("-g", 1)[0] for j in met} <= {last_winners, "GF"}


def test_a_book_of_deals_plays_the_bracket_through() -> None:
    """With a book of deals the deals are renamed (their book entry in the name): the bracket
    still finds its tables by match id, and a deal's seatings share one entry."""
    cfg = config(6, tiebreak_deals=2)
    booked = scheduler_for(cfg, b"s" * 32, book_entries=3)
    ledger = play_out(cfg, at_random(random.Random(5)), scheduler=booked)
    deals = Counter(job.deal for job in ledger.scheduled.values())
    assert all(entry_of(deal) is not None for deal in deals) and set(deals.values()) == {2}
    entries = [entry_of(deal) for deal in dict.fromkeys(j.deal for j in ledger.scheduled.values())]
    assert entries == [n % 3 for n in range(len(entries))]
    check_bracket(cfg, ledger)


def test_the_seed_checks_catch_a_bracket_seeded_in_file_order() -> None:
    """Control: seeding tables in file order (1 v 2, 3 v 4) puts seeds 1 and 2 together in the
    first round, and byes to the bottom seeds: the checks above see both."""
    cfg = config(6)
    plain = knockout.Bracket(
        "knockout",
        2,
        1,
        tuple(cfg.bot_names()),
        (
            knockout.TablePlan("W1-T1", "winners", 1, _seeds(1, 2), 1),
            knockout.TablePlan("W1-T2", "winners", 1, _seeds(3, 4), 1),
            knockout.TablePlan("W1-T3", "winners", 1, _seeds(5), 1),
            knockout.TablePlan("W1-T4", "winners", 1, _seeds(6), 1),
        ),
    )
    states = bracket_results.resolve(plain, bracket_results.Rules(1, 0), {})
    with pytest.raises(AssertionError):
        check_byes(plain, states)
    assert set(states["W1-T1"].known) == {"s1", "s2"}


def _seeds(*seeds: int) -> tuple[knockout.Source, ...]:
    return tuple(knockout.Source(None, seed=s) for s in seeds)


def favouring(bot: str, loses_at: str, elsewhere: int | None = 0) -> Result:
    """`bot` finishes last at tables whose id starts with `loses_at`, first everywhere else
    (`elsewhere` None: by seed everywhere else); the others by seed."""

    def result(job: MatchJob) -> tuple[int, ...]:
        ranks = list(by_seed(job))
        lost = job.match_id.startswith(loses_at)
        if bot in job.bots and (lost or elsewhere is not None):
            mine = job.bots.index(bot)
            last = len(job.bots) - 1 if lost else 0
            others = [i for i in sorted(range(len(ranks)), key=ranks.__getitem__) if i != mine]
            order = [*others[:last], mine, *others[last:]]
            ranks = [order.index(i) for i in range(len(ranks))]
        return tuple(ranks)

    return result


# A knockout of eight (14 matches), and a double elimination of eight at four seats through
# its reset (28): cut at every stage.
RESUMED: list[tuple[dict[str, Any], Result, int]] = [
    *[({"tiebreak_deals": 1}, by_seed, stop) for stop in (1, 5, 9, 12, 13)],
    *[
        ({"kind": "double-elimination", "seats": 4}, favouring("s8", "W1"), stop)
        for stop in (1, 7, 9, 13, 17, 21, 25, 27)
    ],
]


@pytest.mark.parametrize(("fmt", "result", "stop"), RESUMED)
def test_a_resume_mid_bracket_repeats_and_loses_nothing(
    fmt: dict[str, Any], result: Result, stop: int
) -> None:
    """The scheduler of a resumed runner (a fresh object over the ledger read back, with
    matches scheduled but never finished) schedules none of those again, and the bracket then
    ends exactly as an unbroken run does."""
    cfg = config(8, **fmt)
    whole = play_out(cfg, result)
    cut = play_out(cfg, result, stop=stop)
    assert len(cut.finished) < len(cut.scheduled) <= len(whole.scheduled)
    resumed = BracketSchedule(cfg, cfg.format)  # type: ignore[arg-type]
    fresh = resumed.next_jobs(cut) or []
    assert not {j.match_id for j in fresh} & set(cut.scheduled)
    for job in fresh:
        cut.scheduled[job.match_id] = job
    for match_id, job in cut.scheduled.items():  # the runner replays what was in flight
        if match_id not in cut.finished:
            ranks = result(job)
            cut.finished[match_id] = MatchRecord(match_id, job.deal, job.bots, ranks, (), "s")
    while (jobs := resumed.next_jobs(cut)) is not None:
        for job in jobs:
            cut.scheduled[job.match_id] = job
            ranks = result(job)
            cut.finished[job.match_id] = MatchRecord(
                job.match_id, job.deal, job.bots, ranks, (), ""
            )
    assert sorted(cut.scheduled) == sorted(whole.scheduled)


def test_a_scheduler_blind_to_the_matches_in_flight_would_repeat_them() -> None:
    """Control: a scheduler that knows only the finished matches (as one keeping its state in
    memory would after a restart, or one reading only the results) schedules again the
    matches that were in flight."""
    cfg = config(8)
    cut = play_out(cfg, by_seed, stop=1)
    in_flight = set(cut.scheduled) - set(cut.finished)
    assert in_flight
    done = {m: j for m, j in cut.scheduled.items() if m in cut.finished}
    scheduler = BracketSchedule(cfg, cfg.format)  # type: ignore[arg-type]
    again = scheduler.next_jobs(Ledger(done, dict(cut.finished))) or []
    assert {j.match_id for j in again} == in_flight
    assert not scheduler.next_jobs(cut)  # with the ledger's schedule: nothing again


@pytest.mark.parametrize(
    ("bots", "fmt", "message"),
    [
        (
            8,
            {"seats": 4, "through": 3},
            "format.knockout: through (3) must divide seats (4) and be fewer",
        ),
        (8, {"seats": 2, "through": 2}, "fill the next round's: 1"),
        (3, {"seats": 4}, "bots: 3 cannot fill a table of 4"),
        (
            5,
            {"kind": "double-elimination", "seats": 4},
            "bots: 5 cannot all be seated at full tables (a double elimination at 4 seats with 2",
        ),
        (5, {"kind": "double-elimination", "seats": 4}, "through); 4 or 6 bots would be"),
        (8, {"deals": 0}, "format.knockout.deals: Input should be greater than or equal to 1"),
    ],
)
def test_a_bracket_that_cannot_be_played_is_refused_in_one_line(
    bots: int, fmt: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        config(bots, **fmt)
    assert message in str(caught.value)
    assert len(str(caught.value).splitlines()) == 2  # the source, then the one problem


def test_the_refused_sizes_pass_once_they_fill_the_tables() -> None:
    """Control for the above: the same formats with a size or a cut that fits."""
    config(6, seats=4, through=2)
    config(7, seats=4, through=1)
    config(8, seats=3)
    config(8, kind="double-elimination")
    config(4, kind="double-elimination", seats=4)
    config(7, kind="double-elimination", seats=4)
    config(8, kind="double-elimination", seats=3)
    config(8, kind="double-elimination", seats=4, through=1)


def test_the_command_line_refuses_a_bad_bracket_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "cup.toml"
    bots = "".join(f'[[bots]]\nspec = "example:random"\nname = "b{n}"\n' for n in range(5))
    path.write_text(
        f'name = "cup"\ngame = "strato-sphere"\n{bots}[format]\nkind = "double-elimination"\n'
        "seats = 4\n"
    )
    ran = subprocess.run(
        [sys.executable, "-m", "tournaments.cli.arena_app", "tournament", "run", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode != 0 and "Traceback" not in ran.stderr
    assert "bots: 5 cannot all be seated at full tables" in ran.stderr


def test_the_served_bracket_counts_a_deal_only_once_every_seating_has_ended(
    tmp_path: Path,
) -> None:
    """Over HTTP (`arena web`, the public's /api/standings): W1-T1's deal has ended in one
    seating, its other seating still to play, and W1-T2's deal has ended in both. The
    bracket shows W1-T2's points and nothing of W1-T1's: they would tell how its deal goes."""
    cfg = config(4).model_copy(update={"output": str(tmp_path)})
    store = Store.create(tmp_path, cfg)
    jobs = BracketSchedule(cfg, cfg.format).next_jobs(Ledger()) or []  # type: ignore[arg-type]
    store.schedule(jobs)
    ledger = Ledger({j.match_id: j for j in jobs})
    ended = [j for j in jobs if j.match_id in ("W1-T1-g0", "W1-T2-g0", "W1-T2-g1")]
    for job in ended:  # the first seat wins each
        record = MatchRecord(job.match_id, job.deal, job.bots, (0, 1), (1.0, 0.0), "synthetic")
        store.finish(record, "w", 0.1)
        ledger.finished[job.match_id] = record
    store.close()
    with web_server(tmp_path) as url:
        status, report = get_json(f"{url}/api/standings")
    assert status == 200
    shown = {t["table_id"]: t for r in report["bracket"]["rounds"] for t in r["tables"]}
    assert [e["points"] for e in shown["W1-T1"]["entrants"]] == [None, None]
    assert shown["W1-T1"]["deals"] == 0 and shown["W1-T1"]["status"] == "playing"
    assert [e["points"] for e in shown["W1-T2"]["entrants"]] == [1.0, 1.0]
    # Control: points summed over every finished match (the guard off) tell who won W1-T1's
    # first seating; the operator's own report (the whole ledger) still counts no half deal.
    naive = Counter[str]()
    for record in ledger.finished.values():
        for bot in record.bots:
            naive[bot] += record.points(bot)
    assert naive["s1"] == 1.0 and naive["s4"] == 0.0
    whole = standings_report(cfg, ledger).bracket
    assert whole is not None and whole.rounds[0].tables[0].entrants[0].points is None


def test_the_printed_bracket_shows_a_hostile_name_escaped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bot named with terminal escapes (a ladder's final takes its authors' names) reaches
    the organiser's terminal only as visible text; control: with visible() the identity, the
    raw escape comes through."""
    hostile = "evil\x1b]0;pwned\x07\x1b[2J"
    raw = config(4).model_dump()
    raw["bots"][0]["name"] = hostile
    cfg = parse_config(raw)
    seeds = cfg.bot_names()

    def better_seed_wins(job: MatchJob) -> tuple[int, ...]:
        numbers = [seeds.index(bot) for bot in job.bots]
        return tuple(sorted(numbers).index(n) for n in numbers)

    report = standings_report(cfg, play_out(cfg, better_seed_wins))
    assert report.bracket is not None and report.bracket.champion == hostile

    def printed() -> str:
        out = StringIO()
        bracket_print.print_bracket(report.bracket, Console(file=out, width=200))  # type: ignore[arg-type]
        return out.getvalue()

    shown = printed()
    assert "\x1b" not in shown and "\x07" not in shown
    assert "champion: evil\\x1b]0;pwned\\x07\\x1b[2J" in shown
    monkeypatch.setattr(bracket_print, "visible", lambda text: text)
    assert "\x1b]0;pwned" in printed() and "\x1b[2J" in printed()
