"""Tests example_bots/node (the Node.js bot) against referee.hosting.series and referee.wire.

The Node.js example bot (example_bots/node/bot.js: grpc-js, the .proto files loaded at run
time) plays every game, at every seat count, against Python bots in real matches over gRPC, and
the command the README gives for it works as written.

Skipped where node or the bot's npm packages are missing, except under ARENA_REQUIRE_NODE (CI),
where the suite fails instead (tests/conftest.py)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from arena_games import GAMES
from arena_games import replay_file as replay
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings

from referee.bots.launcher import parse_spec
from referee.bots.sandbox import Sandbox, Tier
from referee.hosting.series import SeriesPlan, bot_logs, run_series
from referee.replays.verify import verify
from referee.wire.server import start_server
from tests.e2e.conftest import NODE_BOT, node_bot_problem
from tests.e2e.test_rejoin import drop_first_bot_mid_match, remote_series
from tests.trust.test_sandbox import needs_bwrap
from tests.trust.test_tls import make_certificate

PROBLEM = node_bot_problem()
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=f"Node.js bot: {PROBLEM}")

REPO = NODE_BOT.parents[2]
NODE_SPEC = f"cmd:node {NODE_BOT}"
CASES = [(name, seats) for name, game in sorted(GAMES.items()) for seats in game.seat_counts]


def decisions_by_seat(path: Path) -> dict[int, int]:
    """Decisions each seat made itself (not substituted by the referee), from the replay."""
    made: dict[int, int] = {}
    for record in replay.read(path):
        if isinstance(record, replay.DecisionRecord) and record.substituted_for is None:
            made[record.seat] = made.get(record.seat, 0) + 1
    return made


@pytest.mark.timeout(240)
@pytest.mark.parametrize(("game_name", "seats"), CASES)
def test_node_bot_plays_every_game_against_python_bots(
    game_name: str, seats: int, tmp_path: Path
) -> None:
    # Node in the even seats, the SDK's random bot in the odd ones; one match per rotation,
    # so the Node bot sits in every seat.
    specs = [NODE_SPEC if seat % 2 == 0 else "example:random" for seat in range(seats)]
    plan = SeriesPlan(
        GAMES[game_name],
        [parse_spec(spec) for spec in specs],
        seats,
        secret=practice_secret(5),
        replays=tmp_path,
        settings=MatchSettings(decision_ms=5000),
    )
    outcomes = asyncio.run(run_series(plan, stop_at_exit=True))
    assert len(outcomes) == seats
    for outcome, lineup in outcomes:
        assert not outcome.forfeits, outcome.forfeits
        assert outcome.replay_path is not None
        verify(outcome.replay_path)
        made = decisions_by_seat(outcome.replay_path)
        node_seats = [seat for seat, bot in enumerate(lineup) if bot % 2 == 0]
        assert any(made.get(seat, 0) > 0 for seat in node_seats), made
    for log in bot_logs(plan, 0, plan.bots[0].name):
        text = log.read_text()
        assert "node-bot: session over after" in text, text
        assert "(the series is over)" in text, text


def against_random(replays: Path, node_spec: str = NODE_SPEC, **plan: object) -> SeriesPlan:
    """Two matches of the Node bot against the SDK's random bot."""
    bots = [parse_spec(node_spec), parse_spec("example:random")]
    game = GAMES["opposing-force"]
    secret = practice_secret(6)
    return SeriesPlan(game, bots, 2, secret, replays=replays, **plan)  # type: ignore[arg-type]


def play_on(
    listen: str, replays: Path, tls_cert: Path | None = None, tls_key: Path | None = None
) -> None:
    """The Node bot against the SDK's random bot, two matches, on a referee listening there."""

    async def scenario() -> None:
        server = await start_server(listen, tls_cert=tls_cert, tls_key=tls_key)
        try:
            plan = against_random(replays)
            outcomes = await run_series(plan, server=server, stop_at_exit=True)
            assert [o.forfeits for o, _ in outcomes] == [[], []]
        finally:
            await server.stop()

    asyncio.run(scenario())


@pytest.mark.timeout(120)
def test_node_bot_joins_over_a_unix_socket(tmp_path: Path) -> None:
    play_on(f"unix:{tmp_path}/referee.sock", tmp_path / "replays")


@needs_bwrap
@pytest.mark.timeout(120)
def test_node_bot_plays_in_the_bubblewrap_tier_given_the_proto_folder(tmp_path: Path) -> None:
    # The sandbox shows a bot only the folders its command line names: the .proto files'
    # folder is given as the bot's argument (docs/protocol.md, "Connecting").
    # The bot gets the series' private Unix socket: the sandbox has no network.
    spec = f"{NODE_SPEC} {REPO / 'proto'}"
    plan = against_random(tmp_path / "replays", spec, sandbox=Sandbox(tier=Tier.BUBBLEWRAP))
    outcomes = asyncio.run(run_series(plan, stop_at_exit=True))
    assert [o.forfeits for o, _ in outcomes] == [[], []]
    log = (tmp_path / "replays" / "logs" / "0-node.log").read_text()
    assert "node-bot: session over after 1 matches" in log, log


@pytest.mark.timeout(120)
def test_node_bot_joins_over_tls_with_the_root_certificate_in_arena_root_cert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The certificate names 127.0.0.1, the host the bots dial (see docs/protocol.md).
    cert, key = make_certificate(tmp_path, "referee")
    monkeypatch.setenv("ARENA_ROOT_CERT", str(cert))  # both bot processes inherit it
    play_on("127.0.0.1:0", tmp_path / "replays", tls_cert=cert, tls_key=key)


@pytest.mark.timeout(120)
def test_the_readme_command_plays_the_node_bot(tmp_path: Path) -> None:
    replays = tmp_path / "replays"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tournaments.cli.arena_app",
            "play",
            "opposing-force",
            "--bot",
            "cmd:node example_bots/node/bot.js",
            "--bot",
            "example:random",
            "--games",
            "2",
            "--replays",
            str(replays),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "match   2" in done.stdout
    files = sorted(replays.glob("*.jsonl"))
    assert len(files) == 2
    for file in files:
        verify(file)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("referee_sees_it_after_s", [0.0, 2.0])
def test_node_bot_whose_connection_drops_rejoins_with_its_token_and_finishes(
    tmp_path: Path, referee_sees_it_after_s: float
) -> None:
    """Welcome.rejoin_grace_ms honoured as docs/protocol.md says: a stream that ends with
    UNAVAILABLE is joined again with the same token, and the waiting request is answered; a
    rejoin refused with ALREADY_EXISTS (the referee still holds the old stream) tries again."""

    log = tmp_path / "logs" / "node.log"
    play = drop_first_bot_mid_match(parse_spec(NODE_SPEC), log, referee_sees_it_after_s)
    outcome, sessions = asyncio.run(remote_series(20.0, play, tmp_path))
    assert not outcome.forfeits, outcome.forfeits
    assert sessions[0].rejoins == 1
    said = log.read_text()
    assert "the connection dropped" in said and "rejoining" in said, said
    assert outcome.replay_path is not None
    verify(outcome.replay_path)
