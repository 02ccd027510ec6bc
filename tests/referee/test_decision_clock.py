"""A decision's clock starts when its request leaves for the bot, not when the match queued it,
and stops when the answer comes in, not when the match gets to it: time a request or an answer
waits in a busy referee is the referee's, not the bot's."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest
from arena.v1 import referee_pb2 as pb

from referee import replay
from referee.deals import DealKey, practice_secret
from referee.decisions import EncodedRequest
from referee.games import get_game
from referee.host import SeriesPlan, run_series
from referee.match import Match, MatchOutcome, _DecisionTiming
from referee.seats import DecisionClock
from referee.sessions import BotSession, OutgoingRequest
from referee.settings import MatchSettings
from referee.verify import verify
from tests.e2e.conftest import rawbot

GAME = get_game("opposing-force")
ALLOWED_MS = 150
QUEUED_S = 0.1  # each under the allowance, together over it
THINKS_S = 0.08
ANSWER_WAITS_S = 0.05


class _QueuedSeat:
    """A seat whose requests wait QUEUED_S in the referee before they are sent, whose bot then
    answers after THINKS_S, and whose answer waits ANSWER_WAITS_S before the match has it."""

    def __init__(self, seed: int) -> None:
        self.name = f"queued-{seed}"
        self.rng = random.Random(seed)

    async def start(self, start: pb.MatchStart) -> None:
        return None

    async def decide(
        self, request: EncodedRequest, clock: DecisionClock | None = None
    ) -> pb.Decision:
        await asyncio.sleep(QUEUED_S)
        assert clock is not None
        clock.sent()
        await asyncio.sleep(THINKS_S)
        clock.answered()
        await asyncio.sleep(ANSWER_WAITS_S)
        index = int(self.rng.random() * request.legal_count)
        return pb.Decision(match_id=request.match_id, decision_id=request.decision_id, index=index)

    async def end(self, end: pb.MatchEnd) -> None:
        return None


def test_time_waiting_in_the_referee_is_not_charged_to_the_bot() -> None:
    settings = MatchSettings(decision_ms=ALLOWED_MS, time_bank_ms=0)
    match = Match(
        get_game("strato-sphere"),
        [_QueuedSeat(0), _QueuedSeat(1)],
        deal=DealKey.practice(3),
        match_id="m-clock",
        settings=settings,
    )

    async def first_decisions() -> None:
        # Two decisions are enough; a whole match at 0.18 s a decision would be slow.
        while len([r for r in match.records if isinstance(r, replay.DecisionRecord)]) < 2:
            if match.state.is_chance():
                match._broadcast(match.state.apply_chance(match.state.chance_outcomes()[0][0]))
            else:
                await match._decide_round()

    asyncio.run(first_decisions())
    assert not match.forfeits
    decisions = [r for r in match.records if isinstance(r, replay.DecisionRecord)]
    for record in decisions:
        assert record.substituted_for is None  # a timeout would have substituted a move
        assert THINKS_S * 1000 <= record.time_ms < (THINKS_S + ANSWER_WAITS_S) * 1000
        # recorded, as the referee's own delay
        assert record.queued_ms >= (QUEUED_S + ANSWER_WAITS_S) * 1000


class _Clock:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def sent(self) -> bool:
        self.calls.append("sent")
        return True

    def answered(self) -> None:
        self.calls.append("answered")


def test_a_session_runs_the_clock_of_its_own_request_only() -> None:
    async def scenario() -> list[str]:
        session = BotSession(token="t", name="bot")
        clock, other_clock = _Clock(), _Clock()
        request = EncodedRequest.of(pb.DecisionRequest(match_id="m", decision_id=7))
        asking = asyncio.ensure_future(session.decide(request, clock))
        await asyncio.sleep(0)
        session.sending(OutgoingRequest(b"", other_clock))
        notice = pb.PlayResponse(notice=pb.Notice(message="hello"))
        assert session.sending(notice) is notice
        assert clock.calls == []
        queued = session.outbox.get_nowait()
        assert queued is not None
        written = session.sending(queued)
        assert clock.calls == ["sent"]
        assert pb.PlayResponse.FromString(written).decision_request == request.message()
        session.receive(pb.PlayRequest(decision=pb.Decision(match_id="m", decision_id=8)))
        assert clock.calls == ["sent"]  # another decision's answer
        session.receive(pb.PlayRequest(decision=pb.Decision(match_id="m", decision_id=7)))
        await asking
        return clock.calls + other_clock.calls

    assert asyncio.run(scenario()) == ["sent", "answered", "sent"]


@pytest.mark.timeout(120)
def test_a_request_held_in_a_busy_referee_past_its_allowance_is_not_the_bots_timeout(
    tmp_path: Path,
) -> None:
    """Issue 16: a request that waited in the send queue past its whole allowance made the
    clock reschedule an expired timer; the RuntimeError ended the bot's stream (UNKNOWN) and
    every later match of the bot was recorded as a crash. Here the referee's event loop is
    blocked for 250 ms at a time while two bots play on 100 ms clocks with no bank."""
    settings = MatchSettings(decision_ms=100, time_bank_ms=0)
    bots = [rawbot("play"), rawbot("play")]
    plan = SeriesPlan(GAME, bots, 2, secret=practice_secret(5), replays=tmp_path, settings=settings)

    async def hogged() -> list[MatchOutcome]:
        async def hog() -> None:
            while True:
                await asyncio.sleep(0.05)
                time.sleep(0.25)  # the whole loop stands still, as under a flood of work

        hogging = asyncio.create_task(hog())
        try:
            return [outcome for outcome, _ in await run_series(plan)]
        finally:
            hogging.cancel()

    outcomes = asyncio.run(hogged())
    assert all(not outcome.forfeits for outcome in outcomes), [o.forfeits for o in outcomes]
    decisions = [r for o in outcomes for r in o.records if isinstance(r, replay.DecisionRecord)]
    # The referee's delays really were over the allowance, and were recorded as its own.
    assert max(r.queued_ms for r in decisions) > 100
    assert all(r.substituted_for is None for r in decisions)
    for outcome in outcomes:
        assert outcome.replay_path is not None
        verify(outcome.replay_path)


class _Stalled:
    """A seat whose stream has been stuck in a write for ever, or never."""

    def __init__(self, stuck: bool) -> None:
        self.stuck = stuck

    def stalled(self, since: float) -> bool:
        return self.stuck


def test_the_clock_never_raises_and_times_out_only_a_stalled_stream() -> None:
    async def scenario(stuck: bool) -> tuple[str, bool]:
        timing = _DecisionTiming(0.05, _Stalled(stuck))  # type: ignore[arg-type]
        try:
            async with asyncio.timeout(None) as deadline:
                timing.arm(deadline)
                await asyncio.sleep(0.3)  # six allowances, the request never sent
            outcome = "waited"
        except TimeoutError:
            outcome = "timeout"
        timing.finish()
        return outcome, timing.sent()  # a request whose decision is over: not sent, no raise

    assert asyncio.run(scenario(stuck=True)) == ("timeout", False)
    assert asyncio.run(scenario(stuck=False)) == ("waited", False)
