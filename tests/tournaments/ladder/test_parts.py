"""The ladder's parts on their own: matchmaking, the roster's refusals, the pause rule, and
the API's tokens, over a real SQLite state."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from tournaments import ratings
from tournaments.config import ConfigError
from tournaments.ladder import roster
from tournaments.ladder.bot_health import failing
from tournaments.ladder.config_file import write_new_ladder
from tournaments.ladder.database import LadderStore
from tournaments.ladder.matchmaker import Entrant, next_table, rate, table_jobs
from tournaments.read_models.ladder_reads import AccessDenied, LadderApi
from tournaments.records import MatchRecord
from tournaments.schedule import MatchJob


def entrant(key: str, seated: int = 20, last: int = 0, spec: str = "example:random") -> Entrant:
    return Entrant(key, spec, 25.0, 8.0, seated, last)


def test_a_table_plays_each_deal_once_per_rotation() -> None:
    table = [entrant("a@1"), entrant("b@1"), entrant("c@1")]
    jobs = table_jobs(7, table, deals=2, duplicate_deals=True)
    assert [j.deal for j in jobs] == ["t7-d0"] * 3 + ["t7-d1"] * 3
    for deal in ("t7-d0", "t7-d1"):
        seatings = [j.bots for j in jobs if j.deal == deal]
        # every bot holds every seat of the deal once
        assert all(sorted(s[seat] for s in seatings) == ["a@1", "b@1", "c@1"] for seat in range(3))
    assert jobs[0].specs == ("example:random",) * 3


def test_a_remote_bot_never_sees_two_seatings_of_a_deal() -> None:
    table = [entrant("a@1"), entrant("far@1", spec=roster.REMOTE_SPEC)]
    jobs = table_jobs(3, table, deals=2, duplicate_deals=True)
    assert len({j.deal for j in jobs}) == len(jobs) == 4


def test_a_provisional_version_is_seated_first_then_the_longest_waiting() -> None:
    rng = random.Random(1)
    field = [entrant("a@1", 50, last=9), entrant("b@1", 50, last=3), entrant("new@1", 2, last=9)]
    for _ in range(20):
        table = next_table(field, 2, provisional=10, rng=rng)
        assert table is not None and table[0].key == "new@1"
    settled = [entrant("a@1", 50, last=9), entrant("b@1", 50, last=3), entrant("c@1", 50, last=8)]
    table = next_table(settled, 2, provisional=10, rng=rng)
    assert table is not None and table[0].key == "b@1"
    assert next_table(settled[:1], 2, provisional=10, rng=rng) is None


def record(
    forfeit: bool, match: int, detail: str = "its process exited with code 1"
) -> MatchRecord:
    forfeits = ((0, "crash", detail),) if forfeit else ()
    return MatchRecord(f"m{match}", f"d{match}", ("x@1", "y@1"), (1, 0), (0.0, 1.0), "r", forfeits)


def test_a_bot_is_paused_past_the_threshold_of_its_recent_forfeits() -> None:
    mixed = [record(f, i) for i, f in enumerate([True, True, False, False, False, False])]
    assert failing(mixed, "x@1", window=4, max_failures=2) is None  # the old ones are out
    recent = [record(f, i) for i, f in enumerate([False, True, False, True])]
    why = failing(recent, "x@1", window=4, max_failures=2)
    assert why is not None and "2 of its last 4" in why and "crash x2" in why
    assert failing(recent, "y@1", window=4, max_failures=1) is None  # the opponent's forfeits


def test_a_pause_waits_for_the_deal_and_names_no_detail_of_a_forfeit() -> None:
    """The public pause reason tells nothing of a deal still in play, nor any forfeit's detail
    (an illegal action's names a card of the hand another seat holds in the other seating)."""
    illegal = "played 7H, which is not in its hand"
    recent = [record(False, 0), record(True, 1), record(True, 2, detail=illegal)]
    assert failing(recent, "x@1", window=4, max_failures=2, in_play={"d2"}) is None
    why = failing(recent, "x@1", window=4, max_failures=2)  # the control: the deal has ended
    assert why is not None and "2 of its last 3" in why and why.endswith("; last: crash")
    assert "7H" not in why and "exited" not in why


@pytest.fixture
def ladder(tmp_path: Path) -> Path:
    write_new_ladder(tmp_path, "opposing-force", 2, "127.0.0.1:0")
    LadderStore.create(tmp_path).close()
    return tmp_path


def test_the_roster_refuses_what_it_cannot_do(ladder: Path) -> None:
    store = LadderStore.open(ladder)
    roster.add_bot(store, "a", "example:random")
    with pytest.raises(roster.RosterError, match="already"):
        roster.add_bot(store, "a", "example:first")
    with pytest.raises(roster.RosterError, match="bot name"):
        roster.add_bot(store, "no spaces", "example:first")
    with pytest.raises(roster.RosterError, match="spec"):
        roster.add_bot(store, "b", "missing.py")
    with pytest.raises(roster.RosterError, match="no bot"):
        roster.set_status(store, "ghost", "paused")
    assert roster.update_bot(store, "a", "example:first") == "a@2"
    roster.set_status(store, "a", "retired", "gone")
    with pytest.raises(roster.RosterError, match="retired"):
        roster.set_status(store, "a", "active")
    assert [v.key for v in roster.versions(store, "a")] == ["a@1", "a@2"]


def test_init_refuses_a_table_the_game_cannot_seat(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="3 seats"):
        write_new_ladder(tmp_path, "opposing-force", 3, "127.0.0.1:0")


def test_actions_need_their_token(ladder: Path) -> None:
    api = LadderApi(ladder)
    operator = api.config.tokens.operator.get_secret_value()
    with pytest.raises(AccessDenied):
        api.add_bot("wrong", "a", "example:random")
    assert api.add_bot(operator, "a", "example:random").version == "a@1"
    with pytest.raises(AccessDenied):
        api.register_remote(operator, "far")  # the operator's token is not the ladder's
    ticket = api.register_remote(api.config.tokens.ladder.get_secret_value(), "far")
    assert ticket.version == "far@1" and len(ticket.token) >= 24
    assert [row.bot for row in api.leaderboard()] == ["a", "far"]
    # Kept out of logs: neither token shows in the configuration's repr or JSON.
    shown = repr(api.config) + api.config.model_dump_json()
    assert operator not in shown and api.config.tokens.ladder.get_secret_value() not in shown


def play(store: LadderStore, n: int, bots: tuple[str, str], ranks: tuple[int, int]) -> None:
    job = MatchJob(f"t{n}-g0", 0, f"t{n}-d0", bots, ("example:random",) * 2)
    store.schedule(n, [job])
    scores = tuple(float(r == 0) for r in ranks)
    store.finish(MatchRecord(job.match_id, job.deal, bots, ranks, scores, "r", ()), "w", 0.1, rate)


def test_the_leaderboard_adds_only_new_matches_and_equals_a_refit(ladder: Path) -> None:
    """The kept sums (running_totals.py) give the numbers a fit over every finished match
    gives, and a read after k more matches reads those k only."""
    store = LadderStore.open(ladder)
    for name in ("a", "b", "c"):
        roster.add_bot(store, name, "example:random")
    rng = random.Random(5)
    pairs = [("a@1", "b@1"), ("b@1", "c@1"), ("c@1", "a@1")]
    for n in range(30):
        play(store, n, rng.choice(pairs), (0, 1) if rng.random() < 0.6 else (1, 0))
    api = LadderApi(ladder)

    Numbers = dict[tuple[str, str], float | None]

    def refit() -> Numbers:
        """Elo, its error and the score against a, from every finished match afresh."""
        finished = [f.record for f in store.finished()]
        keys = [v.key for v in roster.versions(store)]
        elo = {row.name: row for row in ratings.elo_table(finished, keys)}
        table = ratings.crosstable(finished, keys)
        return {
            (key, what): value
            for key in keys
            for what, value in (
                ("elo", elo[key].elo),
                ("error", elo[key].error95),
                ("against", against(table, key)),
            )
        }

    def shown() -> Numbers:
        rows = api.leaderboard(against="a")
        return {
            (r.version, what): value
            for r in rows
            for what, value in (
                ("elo", r.elo),
                ("error", r.elo_error95),
                ("against", r.score_against),
            )
        }

    assert shown() == pytest.approx(refit())
    assert api.totals.update(store) == 0  # nothing new: nothing read
    for n in range(30, 33):
        play(store, n, ("a@1", "c@1"), (1, 0))
    assert api.totals.update(LadderStore.open(ladder)) == 3
    roster.update_bot(store, "b", "example:first")  # a version with no match yet: a refit
    now = shown()
    assert {key for key, _ in now} == {"a@1", "b@2", "c@1"}
    assert now == pytest.approx({k: v for k, v in refit().items() if k in now})
    assert api.totals.rated == 33


def against(table: ratings.Crosstable, key: str) -> float | None:
    games = table.games.get((key, "a@1"), 0)
    return table.points[key, "a@1"] / games if games else None


@pytest.mark.parametrize("guarded", [True, False], ids=["held", "control-rated-at-once"])
def test_no_rating_moves_while_a_seating_of_its_deal_is_in_play(
    ladder: Path, monkeypatch: pytest.MonkeyPatch, guarded: bool
) -> None:
    """The leaderboard tells nothing of a deal still in play (how it went would tell something
    of its cards): its seatings are rated together, in order, when the last one ends, or when
    the rest are discarded. The control rates each match as it ends."""
    if not guarded:
        monkeypatch.setattr(LadderStore, "_in_play", lambda self, deal: False)
    store = LadderStore.open(ladder)
    for name in ("a", "b", "c"):
        roster.add_bot(store, name, "example:random")
    api = LadderApi(ladder)
    specs = ("example:random",) * 2
    seatings = [
        MatchJob("t0-g0", 0, "t0-d0", ("a@1", "b@1"), specs),
        MatchJob("t0-g1", 0, "t0-d0", ("b@1", "a@1"), specs),
    ]
    store.schedule(0, seatings)

    def finish(job: MatchJob, ranks: tuple[int, int]) -> None:
        scores = tuple(float(r == 0) for r in ranks)
        record = MatchRecord(job.match_id, job.deal, job.bots, ranks, scores, "r", ())
        store.finish(record, "w", 0.1, rate)

    def board() -> dict[str, tuple[float, int]]:
        return {row.version: (row.mu, row.matches) for row in api.leaderboard()}

    before = board()
    finish(seatings[0], (0, 1))
    if guarded:
        assert board() == before  # a@1 won t0-g0: nothing of it shows yet
    else:
        assert board()["a@1"][0] > before["a@1"][0] and board()["a@1"][1] == 1
    finish(seatings[1], (0, 1))
    after = board()
    assert after["a@1"][1] == after["b@1"][1] == 2
    assert [number for number, _ in store.rated_since(0)] == [1, 2]
    # A deal whose other seating is discarded (its serve stopped) is rated all the same.
    store.schedule(1, [replace(seatings[0], match_id="t1-g0", deal="t1-d0")])
    store.schedule(1, [replace(seatings[1], match_id="t1-g1", deal="t1-d0", bots=("c@1", "a@1"))])
    finish(replace(seatings[0], match_id="t1-g0", deal="t1-d0"), (1, 0))
    assert (board()["b@1"][1] == 2) is guarded
    store.discard(["t1-g1"], rate)
    assert board()["b@1"][1] == 3 and board()["c@1"][1] == 0
