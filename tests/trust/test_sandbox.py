"""Sandbox tiers for real: bots over their CPU or memory limit die and forfeit, with the limit
named in their log; a bot in bubblewrap cannot reach the network, write outside its private
/tmp, read the replays or the referee's environment, or take more memory than it is given, and
still plays a whole match over the Unix socket. The docker tier, with no engine here, is tested
as the container spec it builds and as the clear error it gives."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from referee.deals import practice_secret
from referee.games import get_game
from referee.host import SeriesPlan, run_series
from referee.launcher import SpecError, parse_spec, start_bot
from referee.match import MatchOutcome
from referee.sandbox import Sandbox, SandboxError, Tier, bot_address, confine, probe_bubblewrap
from referee.sandbox_docker import SPEC_VARIABLE, container_spec
from referee.settings import MatchSettings

GAME = get_game("opposing-force")
ESCAPE_BOT = Path(__file__).resolve().parent.parent / "bots" / "escape_bot.py"
# Long enough that a limit, not the clock, ends a hogging bot, even on a loaded machine.
PATIENT = MatchSettings(decision_ms=30_000, time_bank_ms=0)
BWRAP_PROBLEM = probe_bubblewrap()
needs_bwrap = pytest.mark.skipif(
    BWRAP_PROBLEM is not None, reason=f"bubblewrap cannot run here: {BWRAP_PROBLEM}"
)


def escape_bot(*args: str) -> str:
    return f"cmd:{sys.executable} {ESCAPE_BOT} {' '.join(args)}"


async def play_one(spec: str, sandbox: Sandbox, replays: Path) -> MatchOutcome:
    """One match of the bot (seat 0) against the random bot."""
    bots = [parse_spec(spec), parse_spec("example:random")]
    plan = SeriesPlan(
        GAME, bots, 1, secret=practice_secret(5), settings=PATIENT, replays=replays, sandbox=sandbox
    )
    [(outcome, _lineup)] = await run_series(plan)
    return outcome


def bot_log(replays: Path) -> str:
    [log] = (replays / "logs").glob("0-*.log")
    return log.read_text(encoding="utf-8")


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside /tmp, writable on the host, so that a sandbox's private /tmp does
    not hide it."""
    folder = Path(tempfile.mkdtemp(prefix="arena-sandbox-test-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.timeout(60)
def test_a_bot_over_its_memory_limit_dies_and_forfeits(tmp_path: Path) -> None:
    sandbox = Sandbox(tier=Tier.RLIMITS, memory_mb=400)
    outcome = asyncio.run(play_one(escape_bot("--hog", "memory"), sandbox, tmp_path))
    [forfeit] = outcome.forfeits
    assert (forfeit.seat, forfeit.cause.value) == (0, "crash")
    log = bot_log(tmp_path)
    assert "MemoryError" in log
    assert "[arena] the bot's process exited with code 1" in log


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tier", [Tier.RLIMITS, pytest.param(Tier.BUBBLEWRAP, marks=needs_bwrap)])
def test_a_bot_over_its_cpu_limit_is_killed_and_forfeits(tmp_path: Path, tier: Tier) -> None:
    sandbox = Sandbox(tier=tier, cpu_seconds=2)
    outcome = asyncio.run(play_one(escape_bot("--hog", "cpu"), sandbox, tmp_path))
    [forfeit] = outcome.forfeits
    assert (forfeit.seat, forfeit.cause.value) == (0, "crash")
    assert "killed by SIGXCPU: it used up its CPU-time limit of 2 s" in bot_log(tmp_path)


def _escape_lines(log: str) -> dict[str, str]:
    """escape: NAME: OUTCOME lines of the escape bot, by name."""
    found = {}
    for line in log.splitlines():
        if line.startswith("escape: ") and line.count(":") >= 2:
            name, _, outcome = line.removeprefix("escape: ").partition(": ")
            found[name] = outcome
    return found


@needs_bwrap
@pytest.mark.timeout(90)
def test_a_bot_in_bubblewrap_is_kept_in_and_still_plays(
    outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same escapes, made by the same bot without a sandbox, succeed: the probes can tell."""
    monkeypatch.setenv("REFEREE_SECRET", "hunter2")
    host_tmp = Path(tempfile.gettempdir()) / f"arena-escape-{os.getpid()}"

    async def scenario() -> tuple[int, MatchOutcome, MatchOutcome]:
        knocks = 0

        async def knock(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal knocks
            knocks += 1
            writer.close()

        listener = await asyncio.start_server(knock, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]

        def attempts(name: str) -> str:
            return escape_bot(
                f"--tcp 127.0.0.1:{port} --write {outside / name}.txt --peek {outside / name}",
                f"--secret-env REFEREE_SECRET --tmp-file {host_tmp}-{name}.txt --grab-mb 800",
            )

        jailed, free = await asyncio.gather(
            play_one(
                attempts("jailed"), Sandbox(tier=Tier.BUBBLEWRAP, memory_mb=400), outside / "jailed"
            ),
            play_one(attempts("free"), Sandbox(tier=Tier.NONE), outside / "free"),
        )
        listener.close()
        return knocks, jailed, free

    knocks, jailed, free = asyncio.run(scenario())
    tried = _escape_lines(bot_log(outside / "jailed"))
    assert tried["address"] == "unix"
    for name in ("tcp", "write", "peek", "secret", "memory"):
        assert tried[name].startswith("blocked"), (name, tried[name])
    assert "Read-only file system" in tried["write"]
    assert tried["tmp"].startswith("allowed")
    assert not jailed.forfeits and jailed.decisions > 0 and jailed.result.reason
    assert not (outside / "jailed.txt").exists()
    assert not Path(f"{host_tmp}-jailed.txt").exists()
    # Without a sandbox every escape but the memory grab works, and knocks on the host.
    loose = _escape_lines(bot_log(outside / "free"))
    for name in ("tcp", "write", "peek", "secret"):
        assert loose[name].startswith("ESCAPED"), (name, loose[name])
    assert knocks == 1
    assert (outside / "free.txt").exists() and not free.forfeits
    Path(f"{host_tmp}-free.txt").unlink()


def test_a_bot_without_network_needs_a_unix_address() -> None:
    sandbox = Sandbox(tier=Tier.BUBBLEWRAP)
    with pytest.raises(
        SandboxError, match=re.escape("only through a Unix socket, not 127.0.0.1:5")
    ):
        confine(sandbox, ("bot",), {"ARENA_ADDRESS": "127.0.0.1:5"})
    with pytest.raises(SandboxError, match="start the referee with a Unix socket too"):
        bot_address(sandbox, "127.0.0.1:5", None)
    assert bot_address(sandbox, "127.0.0.1:5", "unix:/s/referee.sock") == "unix:/s/referee.sock"
    assert bot_address(Sandbox(tier=Tier.RLIMITS), "127.0.0.1:5", "unix:/s") == "127.0.0.1:5"
    assert Sandbox(tier=Tier.DOCKER).needs_unix_socket
    assert not Sandbox(tier=Tier.RLIMITS).needs_unix_socket


def test_sandbox_settings_are_checked() -> None:
    with pytest.raises(ValidationError, match="tier"):
        Sandbox.model_validate({"tier": "jail"})
    with pytest.raises(ValidationError, match="memory"):
        Sandbox.model_validate({"tier": "rlimits", "memory": 5})
    with pytest.raises(ValidationError, match="memory_mb"):
        Sandbox(memory_mb=1)


def test_the_container_spec_has_no_network_and_every_limit(tmp_path: Path) -> None:
    socket = tmp_path / "sock" / "referee.sock"
    replays = ESCAPE_BOT.parent / "replays"
    sandbox = Sandbox(
        tier=Tier.DOCKER, memory_mb=300, cpus=0.5, processes=32, cpu_seconds=20, hidden=(replays,)
    )
    env = {"ARENA_ADDRESS": f"unix:{socket}", "ARENA_TOKEN": "t0k", "REFEREE_SECRET": "x"}
    spec = container_spec(sandbox, parse_spec(escape_bot("--tcp", "1.2.3.4:5")).argv, env)
    assert spec.command[:2] == ["python", str(ESCAPE_BOT)]
    assert spec.network_mode == "none" and spec.read_only
    assert spec.volumes == {
        str(socket.parent): {"bind": str(socket.parent), "mode": "rw"},
        str(ESCAPE_BOT.parent): {"bind": str(ESCAPE_BOT.parent), "mode": "ro"},
    }
    assert spec.tmpfs["/tmp"].startswith("rw,size=64m")
    assert str(replays) in spec.tmpfs  # inside a mounted folder: covered
    assert (spec.mem_limit, spec.memswap_limit) == ("300m", "300m")
    assert (spec.nano_cpus, spec.pids_limit) == (500_000_000, 32)
    assert {"name": "cpu", "soft": 20, "hard": 21} in spec.ulimits
    assert spec.user == "65534:65534" and spec.cap_drop == ["ALL"]
    assert spec.environment == {"ARENA_ADDRESS": f"unix:{socket}", "ARENA_TOKEN": "t0k"} | {
        "PYTHONUNBUFFERED": "1"
    }


@pytest.mark.timeout(60)
def test_the_docker_tier_says_plainly_when_no_engine_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    bot = parse_spec("example:random")
    sandbox = Sandbox(tier=Tier.DOCKER)
    with pytest.raises(SpecError, match="needs a Docker engine, and none is reachable"):
        asyncio.run(start_bot(bot, f"unix:{tmp_path}/referee.sock", "t", None, sandbox))
    # The runner the referee would start says the same, without a traceback.
    spec = container_spec(sandbox, bot.argv, {"ARENA_ADDRESS": f"unix:{tmp_path}/r.sock"})
    runner = subprocess.run(
        [sys.executable, "-m", "referee.sandbox_docker"],
        env=dict(os.environ, **{SPEC_VARIABLE: spec.model_dump_json()}),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert runner.returncode == 2
    assert runner.stderr.startswith("sandbox: the docker tier needs a Docker engine")
    assert "Traceback" not in runner.stderr
