"""Tests example_bots/cpp (the C++ bot) against referee.hosting.series, referee.wire and
`arena bot check`.

The bot is built once per test session with the system's cmake, protoc, grpc_cpp_plugin and
grpc++ (the stubs generated from proto/ at build time), then plays every game at every seat count
against the SDK's random bot in real matches over gRPC, passes `arena bot check` plain and under
bubblewrap, joins over TLS only a referee its root signed, and rejoins after a dropped stream.

Skipped where the C++ toolchain is missing (Debian: cmake, g++, libgrpc++-dev,
protobuf-compiler-grpc, pkg-config), except under ARENA_REQUIRE_CPP (CI), where it fails."""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from arena_games import GAMES
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings

from referee.bots.launcher import parse_spec, start_bot, stop_bot
from referee.hosting.series import SeriesPlan, bot_logs, run_series
from referee.replays.verify import verify
from referee.wire.server import RefereeServer, start_server
from referee.wire.sessions import BotSession
from tests.e2e.test_node_bot import decisions_by_seat
from tests.e2e.test_rejoin import (
    SILENT_CUT_SETTINGS,
    SLEEPY,
    CuttingProxy,
    drop_first_bot_mid_match,
    remote_series,
)
from tests.trust.test_sandbox import needs_bwrap
from tests.trust.test_tls import make_certificate

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "example_bots" / "cpp"
REQUIRED = "ARENA_REQUIRE_CPP"
TOOLS = ("cmake", "c++", "make", "pkg-config", "protoc", "grpc_cpp_plugin")
CASES = [(name, seats) for name, game in sorted(GAMES.items()) for seats in game.seat_counts]
BUILD_TIMEOUT_S = 600  # measured 40 s on 2 idle cores at -O1; the machine is shared


def toolchain_problem() -> str | None:
    """None when the C++ bot can be built here, else what is missing."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return f"no {', '.join(missing)} on PATH"
    found = subprocess.run(
        ["pkg-config", "--exists", "grpc++", "protobuf"], capture_output=True, timeout=30
    )
    if found.returncode != 0:
        return "pkg-config finds no grpc++ or protobuf (Debian: libgrpc++-dev)"
    return None


def build(into: Path) -> Path:
    """Configures and builds the bot in `into` (-O1: it plays well enough, and builds faster)."""
    steps = [
        ["cmake", "-S", str(SOURCE), "-B", str(into), "-DCMAKE_BUILD_TYPE=None"],
        ["cmake", "--build", str(into), "--parallel", "2"],
    ]
    for step in steps:
        done = subprocess.run(
            step,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            env=dict(os.environ, CXXFLAGS="-O1"),
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"{' '.join(step)} failed:\n{(done.stdout + done.stderr)[-3000:]}")
    return into / "arena-cpp-bot"


def sources_digest() -> str:
    """A digest of everything the build reads from this repository."""
    digest = hashlib.sha256()
    for path in sorted([*SOURCE.rglob("*"), *(REPO / "proto").rglob("*.proto")]):
        if path.is_file() and "build" not in path.relative_to(REPO).parts:
            digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@pytest.fixture(scope="session")
def cpp_bot(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built bot, built once for these sources: kept in pytest's cache (.pytest_cache), so
    that xdist's workers and `make test`'s second run (the realtime tests) share one build,
    made under a lock by whoever comes first."""
    problem = toolchain_problem()
    if problem is not None:
        if os.environ.get(REQUIRED):
            pytest.fail(f"{REQUIRED} is set but the C++ bot cannot be built: {problem}")
        pytest.skip(f"C++ bot: {problem}")
    cache = getattr(request.config, "cache", None)
    shared = cache.mkdir("cpp-bot") if cache is not None else tmp_path_factory.mktemp("cpp-bot")
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        into = shared / sources_digest()
        binary = into / "arena-cpp-bot"
        if not binary.exists():
            for old in shared.iterdir():  # builds of earlier sources, or one cut short
                if old.is_dir():
                    shutil.rmtree(old, ignore_errors=True)
            binary = build(into)
    return binary


@pytest.mark.timeout(BUILD_TIMEOUT_S + 120)
@pytest.mark.parametrize(("game_name", "seats"), CASES)
def test_cpp_bot_plays_every_game_at_every_seat_count(
    game_name: str, seats: int, cpp_bot: Path, tmp_path: Path
) -> None:
    # C++ in the even seats, the SDK's random bot in the odd ones; one match per rotation, so
    # the C++ bot sits in every seat.
    specs = [f"cmd:{cpp_bot}" if seat % 2 == 0 else "example:random" for seat in range(seats)]
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
        cpp_seats = [seat for seat, bot in enumerate(lineup) if bot % 2 == 0]
        assert all(made.get(seat, 0) > 0 for seat in cpp_seats), made
    for log in bot_logs(plan, 0, plan.bots[0].name):
        text = log.read_text()
        assert "cpp-bot: session over after" in text, text
        assert "(the series is over)" in text and "exited with code 0" in text, text


def bot_check(spec: str, game: str, sandbox: str) -> dict[str, object]:
    """`arena bot check` as an author runs it, every seat count, its JSON verdict."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "tournaments.cli.arena_app", "bot", "check", spec),
            *("--game", game, "--all-seat-counts", "--games", "1", "--json"),
            *("--sandbox", sandbox, "--decision-ms", "5000"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    verdict: dict[str, object] = json.loads(done.stdout)
    assert (done.returncode == 0) == verdict["clean"], done.stderr
    return verdict


@pytest.mark.timeout(BUILD_TIMEOUT_S + 300)
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bubblewrap", marks=needs_bwrap)])
def test_cpp_bot_passes_bot_check(sandbox: str, cpp_bot: Path) -> None:
    # Under bubblewrap the bot sees /usr and /lib, where Debian's grpc++ and protobuf libraries
    # are, and its own folder (the program's, which its command names): nothing else.
    verdict = bot_check(f"cmd:{cpp_bot}", "capture-the-commander", sandbox)
    assert verdict["clean"], verdict
    assert len(verdict["seats"]) == 2 + 3 + 4  # type: ignore[arg-type]
    assert int(verdict["decisions"]) > 0  # type: ignore[call-overload]


@pytest.mark.timeout(BUILD_TIMEOUT_S + 60)
def test_cpp_bot_needs_only_libraries_that_bubblewrap_shows(cpp_bot: Path) -> None:
    # The dynamic libraries the bot loads all live under /usr or /lib: what the bubblewrap tier
    # mounts. A library found elsewhere (LD_LIBRARY_PATH, /opt) would fail it there.
    found = subprocess.run(
        ["ldd", str(cpp_bot)], capture_output=True, text=True, timeout=30, check=True
    )
    paths = [part for line in found.stdout.splitlines() for part in line.split() if "/" in part]
    assert any("libgrpc++" in path for path in paths), found.stdout
    outside = [path for path in paths if not path.startswith(("/usr/", "/lib", "/lib64/"))]
    assert not outside, outside


async def run_bot(binary: Path, address: str, root_cert: Path) -> tuple[int, str]:
    """The bot with a token nobody issued: how it ends, and what it said."""
    env = dict(
        os.environ,
        ARENA_ADDRESS=address,
        ARENA_TOKEN="a-token-nobody-issued",
        ARENA_ROOT_CERT=str(root_cert),
        ARENA_JOIN_TIMEOUT_S="30",
    )
    bot = await asyncio.create_subprocess_exec(
        str(binary), env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    said, _ = await asyncio.wait_for(bot.communicate(), 40)
    return bot.returncode or 0, said.decode(errors="replace")


@pytest.mark.timeout(BUILD_TIMEOUT_S + 60)
@pytest.mark.parametrize("signed_by_root", [False, True])
def test_cpp_bot_refuses_a_referee_whose_certificate_its_root_did_not_sign(
    signed_by_root: bool, cpp_bot: Path, tmp_path: Path
) -> None:
    """An impostor referee (its own self-signed certificate) is refused in the handshake: the
    bot exits at once, saying so, without sending its token. The control: the same referee,
    its certificate given as the root, completes the handshake and reads the Hello."""
    referee_cert, referee_key = make_certificate(tmp_path, "impostor")
    genuine_root, _ = make_certificate(tmp_path, "genuine")
    root = referee_cert if signed_by_root else genuine_root

    async def scenario() -> tuple[int, str]:
        server = await start_server("127.0.0.1:0", tls_cert=referee_cert, tls_key=referee_key)
        try:
            return await run_bot(cpp_bot, server.address, root)
        finally:
            await server.stop()

    code, said = asyncio.run(scenario())
    assert code == 2, said
    if signed_by_root:
        assert "the referee ended the session: PERMISSION_DENIED: unknown token" in said, said
    else:
        assert "cpp-bot: the TLS handshake with the referee failed: UNAVAILABLE" in said, said
        assert "certificate verify failed" in said, said


@pytest.mark.timeout(BUILD_TIMEOUT_S + 120)
def test_cpp_bot_plays_over_tls_with_the_root_in_arena_root_cert(
    cpp_bot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = make_certificate(tmp_path, "referee")  # names 127.0.0.1, the host bots dial
    monkeypatch.setenv("ARENA_ROOT_CERT", str(cert))  # both bot processes inherit it

    async def scenario() -> None:
        server = await start_server("127.0.0.1:0", tls_cert=cert, tls_key=key)
        try:
            bots = [parse_spec(f"cmd:{cpp_bot}"), parse_spec("example:random")]
            plan = SeriesPlan(
                GAMES["opposing-force"], bots, 2, practice_secret(6), replays=tmp_path
            )
            outcomes = await run_series(plan, server=server, stop_at_exit=True)
            assert [o.forfeits for o, _ in outcomes] == [[], []]
        finally:
            await server.stop()

    asyncio.run(scenario())


@pytest.mark.timeout(BUILD_TIMEOUT_S + 120)
@pytest.mark.parametrize(
    ("grace_s", "referee_sees_it_after_s"), [(20.0, 0.0), (20.0, 2.0), (0.0, 0.0)]
)
def test_cpp_bot_whose_connection_drops_rejoins_within_the_grace(
    grace_s: float, referee_sees_it_after_s: float, cpp_bot: Path, tmp_path: Path
) -> None:
    """The bot's connection is cut mid-match (by a proxy: at once on both sides, or on the
    bot's side 2 s before the referee's, which then refuses a rejoin with ALREADY_EXISTS for a
    while): it joins again with its token and finishes the match. The control, without a grace
    (0, as in `arena play`): the same cut costs the seat a crash."""
    log = tmp_path / "logs" / "cpp.log"
    play = drop_first_bot_mid_match(parse_spec(f"cmd:{cpp_bot}"), log, referee_sees_it_after_s)
    outcome, sessions = asyncio.run(remote_series(grace_s, play, tmp_path))
    said = log.read_text()
    if grace_s == 0:
        causes = [(f.seat, f.cause.value) for f in outcome.forfeits]
        assert causes == [(0, "crash")], outcome.forfeits
        assert sessions[0].rejoins == 0
        assert "rejoining" not in said and "cpp-bot: the referee ended the session" in said, said
        return
    assert not outcome.forfeits, outcome.forfeits
    assert sessions[0].rejoins == 1
    assert "cpp-bot: the connection dropped (UNAVAILABLE" in said and "rejoining" in said, said
    assert "session over after 1 matches" in said, said
    assert outcome.replay_path is not None
    verify(outcome.replay_path)


def stall_cpp_bot_mid_match(cpp_bot: Path, log_path: Path) -> object:
    """A remote_series play: the C++ bot reaches the referee through a CuttingProxy that stops
    forwarding its connection once it has been asked 3 decisions, closing neither side (a
    router that lost its route); the other seat is the SDK's sleepy bot."""

    async def play(server: RefereeServer, sessions: list[BotSession]) -> None:
        proxy = CuttingProxy(server.address)
        address = await proxy.start()
        bots = [
            await start_bot(parse_spec(f"cmd:{cpp_bot}"), address, sessions[0].token, log_path),
            await start_bot(parse_spec(str(SLEEPY)), server.address, sessions[1].token, None),
        ]
        async with asyncio.timeout(20):
            while sessions[0]._asked < 3:  # mid-match
                await asyncio.sleep(0.01)
        proxy.stall()
        async with asyncio.timeout(60):
            while not sessions[1].ended:  # the match is over
                await asyncio.sleep(0.05)
        for bot in bots:
            await stop_bot(bot, grace_s=1)  # a bot still on the dead stream never ends itself
        await proxy.stop()

    return play


@pytest.mark.realtime  # keepalive and decision clocks race: alone, not on a loaded machine
@pytest.mark.timeout(BUILD_TIMEOUT_S + 120)
@pytest.mark.parametrize("keepalive_s", ["1", "0"])
def test_cpp_bot_finds_a_silently_cut_connection_dead_by_its_pings(
    keepalive_s: str, cpp_bot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is closed and nothing arrives: with keepalive pings (ARENA_KEEPALIVE_S=1) the
    unanswered ping ends the stream UNAVAILABLE, the bot joins again through a new connection
    and its new stream takes the seat over. The control, without pings (0): it waits on the dead
    stream and its seat loses on time."""
    monkeypatch.setenv("ARENA_KEEPALIVE_S", keepalive_s)  # the bots' environment
    log = tmp_path / "logs" / "cpp.log"
    play = stall_cpp_bot_mid_match(cpp_bot, log)
    outcome, sessions = asyncio.run(remote_series(20.0, play, tmp_path, SILENT_CUT_SETTINGS))
    said = log.read_text()
    if keepalive_s == "0":
        assert [(f.seat, f.cause.value) for f in outcome.forfeits] == [(0, "timeout")], said
        assert sessions[0].rejoins == 0
        return
    assert not outcome.forfeits, (outcome.forfeits, said)
    assert sessions[0].rejoins == 1
    assert "cpp-bot: the connection dropped (UNAVAILABLE" in said, said
