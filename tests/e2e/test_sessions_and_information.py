"""Tests referee.wire.server, referee.wire.sessions, referee.wire.spectators and arena_sdk.client.

Tokens, what each stream is told, spectators, health, reflection, Unix sockets and the SDK's
retry of a join that finds no referee yet. Real server, real processes, loopback only."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import grpc
import pytest
from arena.v1 import referee_pb2 as pb
from arena.v1 import referee_pb2_grpc
from arena_games import get_game
from arena_games import replay_file as replay
from arena_games.deals import DealKey, practice_secret
from arena_games.match_settings import MatchSettings
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from referee.bots.launcher import parse_spec, start_bot, stop_bot
from referee.hosting.series import SeriesPlan, run_series
from referee.matches.match import Match
from referee.wire.server import SERVICE_NAME, start_server
from referee.wire.sessions import Lobby, SessionSeat
from tests.e2e.conftest import free_port, rawbot

GAME = get_game("opposing-force")
RECORDER = Path(__file__).resolve().parent.parent / "bots" / "recorder_bot.py"


def _received(record_dir: Path) -> list[dict[str, object]]:
    lines: list[dict[str, object]] = []
    for file in sorted(record_dir.glob("*.jsonl")):
        lines += [json.loads(line) for line in file.read_text().splitlines()]
    return lines


@pytest.mark.timeout(120)
def test_each_stream_gets_exactly_what_its_seat_may_see(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = tmp_path / "received"
    records.mkdir()
    monkeypatch.setenv("ARENA_RECORD_DIR", str(records))
    bots = [parse_spec(str(RECORDER)), parse_spec(str(RECORDER))]
    plan = SeriesPlan(GAME, bots, 2, secret=practice_secret(5), replays=tmp_path)
    outcomes = asyncio.run(run_series(plan))
    received = _received(records)
    for outcome, _ in outcomes:
        assert outcome.replay_path is not None
        lines = replay.read(outcome.replay_path)
        header = lines[0]
        assert isinstance(header, replay.Header)
        state = GAME.new_state(header.options, 2)
        expected_obs: dict[int, list[dict[str, object]]] = {0: [], 1: []}
        for line in lines[1:]:
            if isinstance(line, replay.ChanceRecord):
                state.apply_chance(line.outcome)
            elif isinstance(line, replay.DecisionRecord):
                expected_obs[line.seat].append(
                    json_format.MessageToDict(state.observation(line.seat).opposing_force)
                )
                state.apply(line.seat, line.action)
        for seat in (0, 1):
            mine = [r for r in received if r["match"] == outcome.match_id and r["seat"] == seat]
            events = [r["message"] for r in mine if r["kind"] == "event"]
            visible = [
                e.event
                for e in lines
                if isinstance(e, replay.EventRecord) and (e.audience is None or seat in e.audience)
            ]
            assert events == visible
            observations = [r["message"] for r in mine if r["kind"] == "observation"]
            assert observations == expected_obs[seat]


@pytest.mark.timeout(60)
def test_tokens_unknown_reused_and_stolen(tmp_path: Path) -> None:
    async def scenario() -> None:
        server = await start_server("127.0.0.1:0")
        try:
            lobby = server.lobby
            thief, victim = lobby.register("thief"), lobby.register("victim")
            honest = await start_bot(rawbot("play"), server.address, victim.token, None)
            await asyncio.wait_for(victim.connected.wait(), 20)
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = referee_pb2_grpc.RefereeServiceStub(channel)
                for token, code in (
                    ("not-a-token", grpc.StatusCode.PERMISSION_DENIED),
                    (victim.token, grpc.StatusCode.ALREADY_EXISTS),
                ):
                    call = stub.Play()
                    await call.write(pb.PlayRequest(hello=pb.Hello(token=token)))
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await call.read()
                    assert refused.value.code() == code
            assert not thief.connected.is_set()
            match = Match(
                GAME,
                [SessionSeat(thief), SessionSeat(victim)],
                deal=DealKey.practice(1),
                match_id="stolen",
            )
            outcome = await match.run(no_shows={0: "did not join"})
            assert [(f.seat, f.cause.value) for f in outcome.forfeits] == [(0, "no_show")]
            assert outcome.result.ranks == (1, 0)
            victim.end("done")
            assert await stop_bot(honest) == 0
        finally:
            await server.stop()

    asyncio.run(scenario())


@pytest.mark.timeout(60)
def test_with_a_grace_a_stolen_token_takes_the_seat_and_the_owner_stops_rather_than_fight(
    tmp_path: Path,
) -> None:
    """A session with a rejoin grace (a remote bot's, a tournament's) gives its seat to the
    newest stream with its token: a thief who holds the token takes it from a playing owner
    (the token is a bearer secret either way; without a grace the thief is refused, above).
    The owner's SDK is told its stream was replaced and exits saying so, rather than taking
    the seat back and forth."""

    async def scenario() -> tuple[int, str]:
        server = await start_server("127.0.0.1:0")
        try:
            victim = server.lobby.register("victim")
            victim.rejoin_grace_s = 10.0
            log = tmp_path / "owner.log"
            owner = await start_bot(parse_spec("example:random"), server.address, victim.token, log)
            await asyncio.wait_for(victim.connected.wait(), 20)
            async with grpc.aio.insecure_channel(server.address) as channel:
                thief = referee_pb2_grpc.RefereeServiceStub(channel).Play()
                await thief.write(pb.PlayRequest(hello=pb.Hello(token=victim.token)))
                assert (await thief.read()).WhichOneof("message") == "welcome"
                code = await asyncio.wait_for(owner.wait(), 20)
                assert victim.attached and victim.rejoins == 1
                thief.cancel()
            await stop_bot(owner)
            return code, log.read_text()
        finally:
            await server.stop()

    code, said = asyncio.run(scenario())
    assert code == 2
    assert "another stream with this bot's token took its seat" in said


@pytest.mark.timeout(60)
def test_spectators_see_public_information_only_and_standard_tools_work(tmp_path: Path) -> None:
    async def scenario() -> list[pb.WatchResponse]:
        server = await start_server("127.0.0.1:0")
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                health = health_pb2_grpc.HealthStub(channel)
                reply = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME))
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
                reflect = reflection_pb2_grpc.ServerReflectionStub(channel)
                ask = reflection_pb2.ServerReflectionRequest(list_services="")
                async for answer in reflect.ServerReflectionInfo(iter([ask])):
                    names = [s.name for s in answer.list_services_response.service]
                    assert SERVICE_NAME in names
                stub = referee_pb2_grpc.RefereeServiceStub(channel)
                games = await stub.ListGames(pb.ListGamesRequest())
                assert "opposing-force" in [g.name for g in games.games]
                watch = stub.Watch(pb.WatchRequest(token=server.spectator_token))
                await asyncio.sleep(0.2)
                plan = SeriesPlan(
                    GAME, [rawbot("play"), rawbot("play")], 1, secret=practice_secret(3)
                )
                await run_series(plan, server=server)
                seen = []
                while True:
                    message = await asyncio.wait_for(watch.read(), 10)
                    seen.append(message)
                    if message.WhichOneof("message") == "match_end":
                        break
                watch.cancel()
                return seen
        finally:
            await server.stop()

    seen = asyncio.run(scenario())
    kinds = {m.WhichOneof("message") for m in seen}
    assert kinds == {"match_start", "event", "public_observation", "match_end"}
    for message in seen:
        if message.HasField("event"):
            assert message.event.public and not message.event.opposing_force.card_drawn.HasField(
                "card"
            )
        if message.HasField("public_observation"):
            observation = message.public_observation.opposing_force
            assert not observation.hand and not observation.HasField("seat")


@pytest.mark.timeout(60)
def test_bots_play_over_a_unix_socket(tmp_path: Path) -> None:
    address = f"unix:{tmp_path / 'referee.sock'}"
    plan = SeriesPlan(
        GAME,
        [rawbot("play"), parse_spec("example:random")],
        2,
        secret=practice_secret(9),
        replays=tmp_path,
    )
    outcomes = asyncio.run(run_series(plan, listen=address))
    assert all(not o.forfeits and o.result.reason for o, _ in outcomes)


@pytest.mark.timeout(60)
def test_sdk_retries_a_join_until_the_referee_is_up(tmp_path: Path) -> None:
    async def scenario() -> None:
        address = f"127.0.0.1:{free_port()}"
        lobby = Lobby()
        sessions = [lobby.register("early"), lobby.register("also-early")]
        bots = [
            await start_bot(parse_spec("example:random"), address, s.token, tmp_path / f"{i}.log")
            for i, s in enumerate(sessions)
        ]
        await asyncio.sleep(1.0)  # the bots start knocking before anyone listens
        server = await start_server(address, lobby=lobby)
        try:
            for session in sessions:
                await asyncio.wait_for(session.connected.wait(), 20)
            match = Match(
                GAME,
                [SessionSeat(s) for s in sessions],
                deal=DealKey.practice(2),
                match_id="late",
                settings=MatchSettings(),
            )
            outcome = await match.run()
            assert not outcome.forfeits
            for session in sessions:
                session.end("done")
            assert [await stop_bot(b) for b in bots] == [0, 0]
        finally:
            await server.stop()

    asyncio.run(scenario())


def test_sdk_bot_file_without_a_bot_class_is_a_clear_error(tmp_path: Path) -> None:
    import subprocess

    empty = tmp_path / "nobot.py"
    empty.write_text("x = 1\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena_sdk.launch",
            str(empty),
            "--address",
            "127.0.0.1:1",
            "--token",
            "t",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 2
    assert "must define exactly one Bot subclass" in run.stderr
    assert "Traceback" not in run.stderr
