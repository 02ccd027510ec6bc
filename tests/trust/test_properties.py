"""Tests referee.wire.server and arena_games.legal_actions with hypothesis, and every engine.

Property-based tests (hypothesis) of everything the referee reads from a bot, and of every
game's action handling.

- Any bytes as a bot's opening message or mid-session, through a real referee on loopback:
  a clean status naming the fault, or a notice; never an unexplained error.
- Any Decision, typed (every game's Action message, near misses included) or by index, through
  resolve_decision: a legal action that is exactly the one named, or None.
- Any sequence of integers, in range or not, played into every game at every seat count the way
  the match runner does (index check, then apply): the state keeps its invariants, and whatever
  is refused raises IllegalActionError and changes nothing.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
import pytest
from arena.v1 import referee_pb2 as pb
from arena_games import GAMES
from arena_games.base import GameDefinition, GameOptions, GameState, IllegalActionError
from arena_games.legal_actions import resolve_decision
from arena_games.playout import sample_chance
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.wire.server import RefereeServer, start_server
from tests.games.invariants import check_events, check_history_round_trip, check_step

CASES = [(name, seats) for name, game in sorted(GAMES.items()) for seats in game.seat_counts]
PLAY = "/arena.v1.RefereeService/Play"
UINT32 = 2**32
M = TypeVar("M", bound=Message)

# -- protobuf messages of any shape, from their descriptors ---------------------------------------

_INTS = {
    FieldDescriptor.CPPTYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.CPPTYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.CPPTYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.CPPTYPE_UINT64: (0, 2**64 - 1),
}


def _scalar(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    if field.cpp_type in _INTS:
        low, high = _INTS[field.cpp_type]
        # Mostly the small numbers card games use, sometimes anything the type holds.
        return st.one_of(st.integers(max(low, -2), 60), st.integers(low, high))
    if field.cpp_type == FieldDescriptor.CPPTYPE_ENUM:
        assert field.enum_type is not None
        known = [v.number for v in field.enum_type.values]
        return st.one_of(st.sampled_from(known), st.integers(-3, 40))  # proto3 enums are open
    if field.cpp_type == FieldDescriptor.CPPTYPE_BOOL:
        return st.booleans()
    if field.cpp_type in (FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT):
        return st.floats(width=32)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=16)
    return st.text(max_size=12)


@st.composite
def messages(draw: st.DrawFn, descriptor: Descriptor, depth: int = 0) -> Message:
    """A message of this type with any subset of its fields set (one field per oneof at most),
    nested messages to depth 4."""
    message = message_factory.GetMessageClass(descriptor)()
    oneof_pick = {o.name: draw(st.sampled_from([None, *o.fields])) for o in descriptor.oneofs}
    for field in descriptor.fields:
        oneof = field.containing_oneof
        if oneof is not None and oneof_pick[oneof.name] is not field:
            continue
        if oneof is None and not draw(st.booleans()):
            continue
        if field.message_type is not None:
            if depth >= 4:
                continue
            values = draw(st.lists(messages(field.message_type, depth + 1), min_size=1, max_size=3))
            if field.is_repeated:
                getattr(message, field.name).extend(values)
            else:
                getattr(message, field.name).CopyFrom(values[0])
        elif field.is_repeated:
            getattr(message, field.name).extend(draw(st.lists(_scalar(field), max_size=3)))
        else:
            setattr(message, field.name, draw(_scalar(field)))
    return message


def of_type(cls: type[M]) -> st.SearchStrategy[M]:
    descriptor: Descriptor = cls.DESCRIPTOR  # type: ignore[assignment]
    return messages(descriptor)  # type: ignore[return-value]


# -- bytes from a bot, through a real referee -----------------------------------------------------


@dataclass
class Referee:
    loop: asyncio.AbstractEventLoop
    server: RefereeServer
    channel: grpc.aio.Channel

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=30)


@pytest.fixture(scope="module")
def referee() -> Iterator[Referee]:
    """One referee for every example, on an event loop of its own thread."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def open_() -> tuple[RefereeServer, grpc.aio.Channel]:
        server = await start_server("127.0.0.1:0", hello_timeout_s=5.0)
        return server, grpc.aio.insecure_channel(server.address)

    server, channel = asyncio.run_coroutine_threadsafe(open_(), loop).result(timeout=30)
    referee = Referee(loop, server, channel)
    try:
        yield referee
    finally:

        async def close() -> None:
            await channel.close(None)
            await server.stop(0)

        referee.run(close())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


def bot_bytes() -> st.SearchStrategy[bytes]:
    """Anything: random bytes, real PlayRequests, and real ones cut short or with junk after."""
    real = of_type(pb.PlayRequest).map(lambda m: m.SerializeToString())
    return st.one_of(
        st.binary(max_size=80),
        real,
        st.tuples(real, st.integers(0, 40)).map(lambda r: r[0][: r[1]]),
        st.tuples(real, st.binary(min_size=1, max_size=8)).map(lambda r: r[0] + r[1]),
    )


def decoded(raw: bytes) -> pb.PlayRequest | None:
    try:
        return pb.PlayRequest.FromString(raw)
    except DecodeError:
        return None


def raw_play(referee: Referee) -> grpc.aio.StreamStreamCall[bytes, pb.PlayResponse]:
    """A Play call that sends its messages as the bytes it is given."""
    play = referee.channel.stream_stream(PLAY, None, pb.PlayResponse.FromString)
    call: grpc.aio.StreamStreamCall[bytes, pb.PlayResponse] = play()  # type: ignore[call-arg]
    return call  # (grpc-stubs wants a request iterator, which grpc.aio does not need)


async def open_with(referee: Referee, raw: bytes) -> tuple[grpc.StatusCode, str]:
    """Send raw as the opening message; the status the referee ends the call with."""
    call = raw_play(referee)
    await call.write(raw)
    await call.done_writing()
    try:
        async for response in call:
            raise AssertionError(f"an opening message that is no valid Hello got {response}")
    except grpc.aio.AioRpcError as error:
        return error.code(), error.details() or ""
    raise AssertionError("the call ended without a status")


@pytest.mark.timeout(120)
@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(raw=bot_bytes())
def test_any_opening_message_gets_a_status_that_names_the_fault(
    referee: Referee, raw: bytes
) -> None:
    code, details = referee.run(open_with(referee, raw))
    message = decoded(raw)
    if message is None:
        assert (code, details.split(":")[0]) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "the first message is not a PlayRequest",
        )
    elif message.WhichOneof("message") == "hello":
        assert (code, details) == (grpc.StatusCode.PERMISSION_DENIED, "unknown token")
    else:
        assert (code, details) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "the first message must be Hello",
        )


async def mid_session(referee: Referee, raw: bytes) -> tuple[str, str]:
    """Join properly, then send raw: ("notice", text) or ("status", code and details)."""
    session = referee.server.lobby.register("property")
    call = raw_play(referee)
    try:
        await call.write(pb.PlayRequest(hello=pb.Hello(token=session.token)).SerializeToString())
        welcome = await call.read()
        assert isinstance(welcome, pb.PlayResponse) and welcome.HasField("welcome")
        await call.write(raw)
        try:
            answer = await call.read()
        except grpc.aio.AioRpcError as error:
            assert session.failure is not None and session.failure.kind.value == "malformed"
            return "status", f"{error.code().name}: {error.details()}"
        assert isinstance(answer, pb.PlayResponse) and answer.HasField("notice"), answer
        return "notice", answer.notice.message
    finally:
        call.cancel()
        session.end("example over")
        referee.server.lobby.forget(session)


@pytest.mark.timeout(120)
@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(raw=bot_bytes())
def test_any_message_mid_session_gets_a_notice_or_a_status_that_names_the_fault(
    referee: Referee, raw: bytes
) -> None:
    kind, text = referee.run(mid_session(referee, raw))
    message = decoded(raw)
    if message is None:
        assert kind == "status" and text.startswith("INVALID_ARGUMENT: sent bytes that are not")
    elif message.WhichOneof("message") == "decision":
        assert (kind, text) == (
            "notice",
            f"decision {message.decision.decision_id} of match {message.decision.match_id!r} "
            "was not asked or has expired",
        )
    else:
        assert (kind, text) == (
            "notice",
            f"unexpected {message.WhichOneof('message') or 'empty'} message ignored",
        )


# -- decisions, typed or by index, through resolve_decision ---------------------------------------


def reach(
    game: GameDefinition[GameOptions], seats: int, seed: int, steps: int
) -> GameState[GameOptions]:
    """A decision point of a seeded random game: the one after `steps` decisions, or the last
    one before the end."""
    rng = random.Random(seed)
    state = game.new_state(None, seats)
    last = None
    for _ in range(steps):
        if past_chance(state, rng).is_over():
            break
        last = state.clone()
        seat = rng.choice(state.to_move())
        state.apply(seat, rng.choice(state.legal_actions(seat)))
    if past_chance(state, rng).is_over():
        assert last is not None, "a game over before its first decision"
        return last
    return state


def past_chance(state: GameState[GameOptions], rng: random.Random) -> GameState[GameOptions]:
    """The state, with the chance steps due now played from rng."""
    while state.is_chance():
        state.apply_chance(sample_chance(state.chance_outcomes(), rng))
    return state


@st.composite
def decisions(draw: st.DrawFn, state: GameState[GameOptions], seat: int) -> pb.Decision:
    """An index (in range or far out), a legal typed action, a near miss of one (a legal action
    with random fields merged in), or any Action at all, the other games' included."""
    legal = [state.action_message(a) for a in state.legal_actions(seat)]
    kind = draw(st.sampled_from(["index", "legal", "near", "any"]))
    if kind == "index":
        return pb.Decision(index=draw(st.integers(0, UINT32 - 1) | st.integers(0, len(legal) + 3)))
    action = pb.Action()
    if legal and kind in ("legal", "near"):
        action.CopyFrom(draw(st.sampled_from(legal)))
    if kind in ("near", "any"):
        action.MergeFrom(draw(of_type(pb.Action)))
    return pb.Decision(action=action)


@pytest.mark.parametrize(("game_name", "seats"), CASES)
@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 2**32), steps=st.integers(0, 400))
def test_any_decision_resolves_to_exactly_the_legal_action_it_names_or_to_none(
    game_name: str, seats: int, data: st.DataObject, seed: int, steps: int
) -> None:
    state = reach(GAMES[game_name], seats, seed, steps)
    seat = data.draw(st.sampled_from(range(seats)), label="seat")
    decision = data.draw(decisions(state, seat), label="decision")
    before = state.key()
    legal = state.legal_actions(seat)
    action = resolve_decision(state, seat, decision)
    assert state.key() == before
    if decision.WhichOneof("choice") == "index":
        assert action == (legal[decision.index] if decision.index < len(legal) else None)
    elif action is not None:
        assert action in legal and state.action_message(action) == decision.action
    else:
        assert all(state.action_message(a) != decision.action for a in legal)


# -- any integers into every game, the way the match runner plays them ----------------------------


def refused_without_change(state: GameState[GameOptions], seat: int, value: int) -> None:
    before = state.key()
    with pytest.raises(IllegalActionError, match=r"not (legal|to move)"):
        state.apply(seat, value)
    assert state.key() == before


@pytest.mark.parametrize(("game_name", "seats"), CASES)
@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    warmup=st.integers(0, 400),
    values=st.lists(st.integers(-3, 80) | st.integers(-(2**63), 2**63), max_size=200),
)
def test_any_integers_leave_every_game_consistent_or_are_refused(
    game_name: str, seats: int, seed: int, warmup: int, values: list[int]
) -> None:
    """After `warmup` random decisions (so that late positions are reached too), each integer
    picks a seat (any seat, to move or not) and is tried as that seat's index, the way a
    Decision reaches the runner, and as a raw action id straight into apply. What is refused
    changes nothing; the seat to move then plays the runner's substitute."""
    game = GAMES[game_name]
    chance = random.Random(seed)
    state = reach(game, seats, seed, warmup)
    for value in values:
        if past_chance(state, chance).is_over():
            break
        seat = abs(value) % seats
        legal = state.legal_actions(seat)
        if 0 <= value < UINT32:
            named = resolve_decision(state, seat, pb.Decision(index=value))
            assert named == (legal[value] if value < len(legal) else None)
        if value not in legal:
            refused_without_change(state, seat, value)
        else:
            check_events(state.apply(seat, value), seats)
            check_step(state, thorough=False)
            continue
        mover = state.to_move()[abs(value) % len(state.to_move())]
        options = state.legal_actions(mover)
        check_events(state.apply(mover, options[abs(value) % len(options)]), seats)
        check_step(state, thorough=False)
    check_step(state)
    check_history_round_trip(game, state)
