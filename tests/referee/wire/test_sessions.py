"""A session settles a decision only with the answer to that very decision."""

from __future__ import annotations

import asyncio

from arena.v1 import referee_pb2 as pb

from referee.matches.decisions import EncodedRequest
from referee.wire.sessions import BotSession


def test_a_late_answer_from_an_earlier_match_settles_nothing() -> None:
    async def scenario() -> None:
        session = BotSession(token="t", name="bot")
        first = EncodedRequest.of(pb.DecisionRequest(match_id="first", decision_id=5))
        timed_out = asyncio.create_task(session.decide(first))
        await asyncio.sleep(0)
        timed_out.cancel()  # as the match's deadline does
        request = EncodedRequest.of(pb.DecisionRequest(match_id="second", decision_id=5))
        asking = asyncio.create_task(session.decide(request))
        await asyncio.sleep(0)
        stale = pb.Decision(match_id="first", decision_id=5, index=0)
        session.receive(pb.PlayRequest(decision=stale))
        await asyncio.sleep(0)
        assert not asking.done()
        assert session.notices == ["decision 5 of match 'first' was not asked or has expired"]
        answer = pb.Decision(match_id="second", decision_id=5, index=1)
        session.receive(pb.PlayRequest(decision=answer))
        assert (await asking).index == 1

    asyncio.run(scenario())
