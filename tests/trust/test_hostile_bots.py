"""Tests referee.wire.server and referee.wire.sessions against hostile bot processes.

Hostile bots: real processes (tests/bots/hostile.py) attacking a real referee on loopback.
Each attack gets a clear recorded outcome (a forfeit with its cause in the replay, or a gRPC
status with a message), honest bots on the same server play on untouched, and no process the
hostile bot started is left behind. Tokens unknown or in use by another stream, and illegal
answers, hangs and exits, are in tests/e2e."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import time
from pathlib import Path

import grpc
import pytest
from arena_games import get_game
from arena_games import replay_file as replay
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.bots.launcher import BotSpec, parse_spec, start_bot, stop_bot
from referee.hosting.series import SeriesPlan, run_series
from referee.matches.match import MatchOutcome
from referee.replays.verify import verify
from referee.wire.server import MAX_MESSAGE_BYTES, SERVICE_NAME, RefereeServer, start_server
from referee.wire.sessions import MAX_NOTICES, REPLACED, BotSession
from tests.e2e.conftest import rawbot

# Honest bots held to deadlines of a few hundred ms, or floods and refusals timed: these run
# alone, after the rest of the suite (make test), where no other test takes their cores.
pytestmark = pytest.mark.realtime
GAME = get_game("opposing-force")
HOSTILE = Path(__file__).resolve().parent.parent / "bots" / "hostile.py"
SETTINGS = MatchSettings(decision_ms=3000, time_bank_ms=2000)

Series = list[tuple[MatchOutcome, list[int]]]
Record = list[dict[str, object]]


def hostile(mode: str, record: Path) -> BotSpec:
    """A hostile bot process in the given mode, writing what it is told to record."""
    return parse_spec(f"cmd:{shlex.join([sys.executable, str(HOSTILE), mode, str(record)])}")


def plan(bots: list[BotSpec], replays: Path, games: int = 2, **kw: object) -> SeriesPlan:
    """A series whose bots each run one process (no duplicate deals), so a hostile bot's record
    is the record of one session."""
    return SeriesPlan(
        GAME,
        bots,
        games,
        secret=practice_secret(13),
        replays=replays,
        settings=SETTINGS,
        duplicate_deals=False,
        **kw,  # type: ignore[arg-type]
    )


def read_record(path: Path) -> Record:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def statuses(record: Record, call: str = "play") -> list[tuple[object, object]]:
    """(code, details) of every gRPC status the bot recorded for that call."""
    found = [r for r in record if r["kind"] == "status" and r["call"] == call]
    return [(r["code"], r["details"]) for r in found]


def assert_clean(series: Series) -> None:
    """Every match of the series played to its end with no forfeit, and its replay verifies."""
    assert series
    for outcome, _ in series:
        assert not outcome.forfeits, outcome.forfeits
        assert outcome.replay_path is not None
        verify(outcome.replay_path)


def assert_forfeits(series: Series, cause: str, detail: str) -> None:
    """Bot 0 forfeits every match of the series with this cause; the replay says so."""
    for outcome, lineup in series:
        seat = lineup.index(0)
        assert [(f.seat, f.cause.value) for f in outcome.forfeits] == [(seat, cause)]
        assert detail in outcome.forfeits[0].detail
        assert outcome.result.ranks[seat] == 1 and outcome.result.ranks[1 - seat] == 0
        assert outcome.replay_path is not None
        verify(outcome.replay_path)
        assert f'"cause":"{cause}"' in outcome.replay_path.read_text().replace(" ", "")


def decisions_of_bot_0(outcome: MatchOutcome, lineup: list[int]) -> int:
    seat = lineup.index(0)
    return sum(
        1 for r in outcome.records if isinstance(r, replay.DecisionRecord) and r.seat == seat
    )


def gone(pid: int) -> bool:
    """The process has exited: no such pid, or a zombie waiting for a parent to reap it (in a
    container whose init does not reap orphans, it stays one)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def still_running(pids: list[int], within_s: float = 5.0) -> list[int]:
    """The pids not yet gone after waiting up to within_s (a SIGKILL takes effect soon after
    it is sent, not at once)."""
    deadline = time.monotonic() + within_s
    while (left := [pid for pid in pids if not gone(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


async def on_one_server(server: RefereeServer, *plans: SeriesPlan) -> list[Series]:
    return list(await asyncio.gather(*(run_series(p, server=server) for p in plans)))


@pytest.mark.timeout(120)
def test_a_flood_ends_the_flooders_session_while_the_referee_stays_responsive(
    tmp_path: Path,
) -> None:
    record = tmp_path / "flood.jsonl"
    sessions: list[BotSession] = []

    async def scenario() -> tuple[Series, Series, int]:
        server = await start_server("127.0.0.1:0")
        try:
            flooding = plan([hostile("flood", record), rawbot("play")], tmp_path / "flood")
            honest = plan([rawbot("play"), rawbot("play")], tmp_path / "honest", 3)
            series = asyncio.gather(
                run_series(
                    flooding,
                    server=server,
                    on_sessions=lambda _, s: sessions.extend(own[0] for own in s),
                ),
                run_series(honest, server=server),
            )
            answered = 0
            async with grpc.aio.insecure_channel(server.address) as channel:
                health = health_pb2_grpc.HealthStub(channel)
                while not series.done():
                    ask = health_pb2.HealthCheckRequest(service=SERVICE_NAME)
                    reply = await health.Check(ask, timeout=10)
                    assert reply.status == health_pb2.HealthCheckResponse.SERVING
                    answered += 1
                    await asyncio.sleep(0.05)
            flooded, normal = await series
            return flooded, normal, answered
        finally:
            await server.stop()

    flooded, normal, answered = asyncio.run(scenario())
    assert answered > 0
    assert_clean(normal)
    assert_forfeits(flooded, "malformed", "flooded the referee")
    told = read_record(record)
    assert {"kind": "flooded", "messages": 5000} in told
    [(code, details)] = statuses(told)
    assert code == "RESOURCE_EXHAUSTED" and "flooded the referee" in str(details)
    # What the flood could make the referee hold stayed bounded.
    flooder = sessions[0]
    assert len(flooder.notices) == MAX_NOTICES
    # At most one notice over the budget per decision asked (one here), the hang-up, the end.
    assert flooder.outbox.qsize() <= MAX_NOTICES + 4


@pytest.mark.timeout(120)
def test_oversized_and_undecodable_messages_end_only_their_own_matches(tmp_path: Path) -> None:
    records = {mode: tmp_path / f"{mode}.jsonl" for mode in ("huge", "garbage", "junk")}

    async def scenario() -> list[Series]:
        server = await start_server("127.0.0.1:0")
        try:
            return await on_one_server(
                server,
                *(
                    plan([hostile(mode, path), rawbot("play")], tmp_path / mode, 1)
                    for mode, path in records.items()
                ),
                plan([rawbot("play"), rawbot("play")], tmp_path / "honest", 2),
            )
        finally:
            await server.stop()

    huge, garbage, junk, honest = asyncio.run(scenario())
    assert_clean(honest)
    # The referee reads a message over its limit (grpc's own is higher) and says why it hung up.
    assert_forfeits(huge, "malformed", f"over the referee's limit of {MAX_MESSAGE_BYTES} bytes")
    [(code, details)] = statuses(read_record(records["huge"]))
    assert code == "RESOURCE_EXHAUSTED" and f"limit of {MAX_MESSAGE_BYTES} bytes" in str(details)
    assert_forfeits(garbage, "malformed", "not a PlayRequest")
    told = read_record(records["garbage"])
    [(code, details)] = statuses(told, call="garbage_first")
    assert code == "INVALID_ARGUMENT" and "first message is not a PlayRequest" in str(details)
    [(code, details)] = statuses(told)
    assert code == "INVALID_ARGUMENT" and "not a PlayRequest" in str(details)
    # Junk below gRPC costs the junk writer its connection and nothing else.
    assert_clean(junk)
    assert [r["closed"] for r in read_record(records["junk"]) if r["kind"] == "junk"] == [True]


@pytest.mark.timeout(120)
def test_late_answers_are_noticed_and_settle_nothing(tmp_path: Path) -> None:
    """A bot that sends each answer twice: the first counts, the repeat (a decision asked
    before) is a notice."""
    record = tmp_path / "stale.jsonl"
    stale = asyncio.run(
        run_series(plan([hostile("stale", record), rawbot("play")], tmp_path / "stale", 2))
    )
    assert_clean(stale)
    told = read_record(record)
    notices = [str(r["message"]) for r in told if r["kind"] == "notice"]
    assert all("was not asked or has expired" in n for n in notices)
    [end] = [r for r in told if r["kind"] == "session_end"]
    asked = int(end["asked"])  # type: ignore[call-overload]
    # One notice per repeat (none before the first answer), and the replays hold exactly one
    # decision per request: the repeats settled nothing.
    assert len(notices) == asked - 1
    assert asked == sum(decisions_of_bot_0(o, lineup) for o, lineup in stale) > 0


@pytest.mark.timeout(120)
def test_an_answer_to_a_decision_never_asked_is_refused_at_once(tmp_path: Path) -> None:
    """Issue 16: an answer with a wrong decision_id (or match_id) got only a notice, and the
    bot then lost on time after deadline plus bank (5 s here). Now the waiting decision fails
    at once as a protocol mistake, and the notice names the decision the referee waits for."""
    record = tmp_path / "unasked.jsonl"
    began = time.perf_counter()
    unasked = asyncio.run(
        run_series(plan([hostile("unasked", record), rawbot("play")], tmp_path / "unasked", 2))
    )
    assert time.perf_counter() - began < SETTINGS.decision_ms / 1000  # both matches
    assert_forfeits(unasked, "protocol", "answered decision 100")
    assert all("expected decision" in f.detail for o, _ in unasked for f in o.forfeits)
    notices = [str(r["message"]) for r in read_record(record) if r["kind"] == "notice"]
    # The wrong answer that ended each match named the decision the referee waited for (the
    # bot's second wrong answer of a match may land while the next match's decision waits).
    assert sum("was never asked: the referee waits for decision" in n for n in notices) >= 2
    assert "of match 'no-such-match'" not in outcome_details(unasked)


@pytest.mark.timeout(120)
def test_an_answer_with_decision_id_left_at_zero_is_a_protocol_mistake(tmp_path: Path) -> None:
    """Decision ids start at 1, so 0 was never asked: a bot that forgot to set the id fails
    the waiting decision at once as a protocol mistake, not on time after deadline and bank
    (0 was taken for an answer "asked before", and late)."""
    record = tmp_path / "zeroid.jsonl"
    began = time.perf_counter()
    series = asyncio.run(
        run_series(plan([hostile("zeroid", record), rawbot("play")], tmp_path / "zeroid", 2))
    )
    assert time.perf_counter() - began < SETTINGS.decision_ms / 1000  # both matches
    assert_forfeits(series, "protocol", "answered decision 0")


def outcome_details(series: Series) -> str:
    return " ".join(f.detail for outcome, _ in series for f in outcome.forfeits)


@pytest.mark.timeout(120)
def test_a_second_stream_or_a_spent_token_is_refused_and_the_first_plays_on(
    tmp_path: Path,
) -> None:
    """Without a rejoin grace (`arena play`, the default plan) a session keeps its first stream
    for good: a second one with its token is refused and the first plays on."""
    record, reuse_record = tmp_path / "twice.jsonl", tmp_path / "reuse.jsonl"
    tokens: list[str] = []

    async def scenario() -> tuple[Series, int]:
        server = await start_server("127.0.0.1:0")
        try:
            twice = plan([hostile("twice", record), rawbot("play")], tmp_path / "twice")
            series = await run_series(
                twice,
                server=server,
                on_sessions=lambda _, s: tokens.extend(own[0].token for own in s),
            )
            # The series is over: its tokens are spent, whoever holds them.
            late = await start_bot(
                hostile("play", reuse_record), server.address, tokens[0], tmp_path / "late.log"
            )
            return series, await stop_bot(late, grace_s=20)
        finally:
            await server.stop()

    series, late_exit = asyncio.run(scenario())
    assert_clean(series)
    told = read_record(record)
    [(code, details)] = statuses(told, call="second")
    assert code == "ALREADY_EXISTS" and "token" in str(details)
    assert not statuses(told)  # the first stream was never disturbed
    assert late_exit == 1
    assert statuses(read_record(reuse_record)) == [("PERMISSION_DENIED", "unknown token")]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("grace_s", [2.0, 0.0])
def test_with_a_grace_a_second_stream_takes_the_seat_and_the_first_is_closed_as_replaced(
    tmp_path: Path, grace_s: float
) -> None:
    """With a rejoin grace, a bot process that opens a second stream with its own token
    mid-match hands its seat to that stream: the first is closed with ABORTED (replaced), the
    second is sent the match's start and the waiting request again. This one half-closes its
    second stream and never answers, so it loses its own matches (a crash once the grace is
    over); its opponent plays on undisturbed. Control, grace 0: the second stream is refused
    and the first plays on."""
    record = tmp_path / "twice.jsonl"
    bots = [hostile("twice", record), rawbot("play")]

    def give_grace(_: RefereeServer, sessions: list[list[BotSession]]) -> None:
        sessions[0][0].rejoin_grace_s = grace_s  # as a tournament gives its bots (10 s)

    series = asyncio.run(run_series(plan(bots, tmp_path / "twice"), on_sessions=give_grace))
    told = read_record(record)
    second = [r["got"] for r in told if r["kind"] == "second_stream"]
    if grace_s == 0:
        assert_clean(series)
        assert [code for code, _ in statuses(told, call="second")] == ["ALREADY_EXISTS"]
        assert not statuses(told) and not second
        return
    assert statuses(told) == [("ABORTED", REPLACED)]
    assert second[:3] == ["welcome", "match_start", "decision_request"]
    assert_forfeits(series, "crash", f"did not rejoin within {grace_s:g} s")


@pytest.mark.timeout(60)
def test_a_bot_that_never_says_hello_is_cut_off_and_counts_as_absent(tmp_path: Path) -> None:
    record = tmp_path / "silent.jsonl"

    async def scenario() -> Series:
        server = await start_server("127.0.0.1:0", hello_timeout_s=1.0)
        try:
            bots = [hostile("silent", record), rawbot("play")]
            return await run_series(plan(bots, tmp_path, 1, connect_timeout_s=5.0), server=server)
        finally:
            await server.stop()

    series = asyncio.run(scenario())
    # Cut off after 1 s, it exits: absent from then on, not after the 5 s join timeout, and
    # the cause says what it was.
    assert_forfeits(series, "no_show", "exited with code 1")
    assert_forfeits(series, "no_show", "turned away a stream that sent no Hello within 1 s")
    assert statuses(read_record(record)) == [("DEADLINE_EXCEEDED", "no Hello in time")]


@pytest.mark.timeout(60)
def test_a_bot_with_a_wrong_token_is_absent_and_the_cause_says_so(tmp_path: Path) -> None:
    record = tmp_path / "badtoken.jsonl"
    bots = [hostile("badtoken", record), rawbot("play")]
    series = asyncio.run(run_series(plan(bots, tmp_path, 1, connect_timeout_s=5.0)))
    assert_forfeits(series, "no_show", "turned away a Hello with unknown token")
    assert statuses(read_record(record)) == [("PERMISSION_DENIED", "unknown token")]


@pytest.mark.timeout(60)
def test_children_of_a_bot_that_exits_are_stopped_with_it(tmp_path: Path) -> None:
    record = tmp_path / "fork.jsonl"
    series = asyncio.run(run_series(plan([hostile("fork", record), rawbot("play")], tmp_path, 1)))
    [children] = [r for r in read_record(record) if r["kind"] == "children"]
    pids = [int(p) for p in children["pids"]]  # type: ignore[attr-defined]
    try:
        assert_forfeits(series, "crash", "its process exited with code 3")
        assert len(pids) == 3
        left = still_running(pids)
        assert not left, f"children left running: {left}"
    finally:
        for pid in pids:  # whatever the verdict, the test leaves nothing running
            if not gone(pid):
                os.kill(pid, 9)
