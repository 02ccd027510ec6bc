"""Tests referee.bots.sandbox, referee.bots.sandbox_exec and referee.bots.sandbox_docker.

Sandbox tiers for real: bots over their CPU or memory limit die and forfeit, with the limit
named in their log; a bot in bubblewrap cannot reach the network, write outside its private
/tmp, read the replays or the referee's environment, or take more memory than it is given, and
still plays a whole match over the Unix socket. It sees only an allow-list of the machine: not
a root-only key, the tournament's file, another bot's source or another run's replays, and as a
uid of its own it cannot run more processes than it is given. With the referee as root, the
rlimits tier runs bots as such a uid too, or refuses plainly when the bot could not run so.
Every attack is made by the same bot without a sandbox too, where it succeeds. The docker tier,
with no engine here, is tested as the container spec it builds and as the clear error it gives.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from arena_games import get_game
from arena_games.deals import practice_secret
from arena_games.match_settings import MatchSettings
from pydantic import ValidationError

from referee.bots.launcher import SpecError, parse_spec, start_bot, stop_bot
from referee.bots.sandbox import (
    Sandbox,
    SandboxError,
    Tier,
    bot_address,
    confine,
    package_folders,
    private_socket,
    probe_bubblewrap,
    release,
)
from referee.bots.sandbox_docker import SPEC_VARIABLE, container_spec
from referee.hosting.series import SeriesPlan, run_series
from referee.matches.match import MatchOutcome

GAME = get_game("opposing-force")
ESCAPE_BOT = Path(__file__).resolve().parent.parent / "bots" / "escape_bot.py"
WHOAMI_BOT = ESCAPE_BOT.with_name("whoami_bot.sh")
# Long enough that a limit, not the clock, ends a hogging bot, even on a loaded machine.
PATIENT = MatchSettings(decision_ms=30_000, time_bank_ms=0)
BWRAP_PROBLEM = probe_bubblewrap()
needs_bwrap = pytest.mark.skipif(
    BWRAP_PROBLEM is not None, reason=f"bubblewrap cannot run here: {BWRAP_PROBLEM}"
)
AS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not AS_ROOT, reason="bots change uid only under a root referee")
# As root the rlimits tier runs a bot as a uid of its own, which cannot run an interpreter
# that only root may reach (one under /root, say): that refusal is tested on its own.
_python = Path(sys.executable).resolve()
PYTHON_CLOSED = AS_ROOT and any(not f.stat().st_mode & 0o001 for f in _python.parents)
python_for_all = pytest.mark.skipif(
    PYTHON_CLOSED, reason=f"other users cannot reach {_python}, as a bot at tier rlimits must"
)


def escape_bot(*args: str, bot: Path = ESCAPE_BOT) -> str:
    return f"cmd:{sys.executable} {bot} {' '.join(args)}"


async def play_one(spec: str, sandbox: Sandbox, replays: Path) -> MatchOutcome:
    """One match of the bot (seat 0) against the random bot."""
    bots = [parse_spec(spec), parse_spec("example:random")]
    plan = SeriesPlan(
        GAME, bots, 1, secret=practice_secret(5), settings=PATIENT, replays=replays, sandbox=sandbox
    )
    [(outcome, _lineup)] = await run_series(plan)
    return outcome


def bot_log(replays: Path) -> str:
    """All seat 0's bot wrote: its match's file (logs/MATCH/0-NAME.log), where what it prints
    while it plays goes, and its process's (logs/0-NAME.log), where what comes after the match
    goes, with the note of how it ended. A crash's last words land in either, by timing."""
    [process] = (replays / "logs").glob("0-*.log")
    matches = sorted((replays / "logs").glob("*/0-*.log"))
    return "".join(log.read_text(encoding="utf-8") for log in [*matches, process])


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside /tmp, writable on the host, so that a sandbox's private /tmp does
    not hide it; open to other users (0755), so that only a file's own mode keeps them out."""
    folder = Path(tempfile.mkdtemp(prefix="arena-sandbox-test-", dir="/var/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class Layout:
    """What a tournament organiser's machine holds beside a bot: where an attacker looks."""

    bot: Path  # the escape bot, in a folder of its own
    key: Path  # root's alone (0600)
    toml: Path  # the tournament's file
    rival: Path  # another bot's source
    old_replay: Path  # a replay of another run
    runs: Path  # where this test's runs keep their replays


@pytest.fixture
def layout(outside: Path) -> Layout:
    bots = outside / "bots"
    (bots / "escape").mkdir(parents=True)
    (bots / "rival").mkdir()
    bot = Path(shutil.copy(ESCAPE_BOT, bots / "escape" / ESCAPE_BOT.name))
    rival = bots / "rival" / "bot.py"
    rival.write_text("SECRET_OPENING = 'e4'\n", encoding="utf-8")
    key = outside / "referee.key"
    key.write_text("root's own\n", encoding="utf-8")
    key.chmod(0o600)
    toml = outside / "cup.toml"
    toml.write_text('name = "cup"\n[[bots]]\nspec = "bots/rival/bot.py"\n', encoding="utf-8")
    old_replay = outside / "runs" / "old-cup" / "replays" / "match-0001.json"
    old_replay.parent.mkdir(parents=True)
    old_replay.write_text('{"hands": ["As", "Kd"]}\n', encoding="utf-8")
    return Layout(bot, key, toml, rival, old_replay, outside / "runs")


LIMITED_TIERS = [
    pytest.param(Tier.RLIMITS, marks=python_for_all),
    pytest.param(Tier.BUBBLEWRAP, marks=needs_bwrap),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tier", LIMITED_TIERS)
def test_a_bot_over_its_memory_limit_dies_and_forfeits(tmp_path: Path, tier: Tier) -> None:
    sandbox = Sandbox(tier=tier, memory_mb=400)
    outcome = asyncio.run(play_one(escape_bot("--hog", "memory"), sandbox, tmp_path))
    [forfeit] = outcome.forfeits
    assert (forfeit.seat, forfeit.cause.value) == (0, "crash")
    log = bot_log(tmp_path)
    assert "MemoryError" in log
    assert "[arena] the bot's process exited with code 1" in log


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tier", LIMITED_TIERS)
def test_a_bot_over_its_cpu_limit_is_killed_and_forfeits(tmp_path: Path, tier: Tier) -> None:
    sandbox = Sandbox(tier=tier, cpu_seconds=2)
    outcome = asyncio.run(play_one(escape_bot("--hog", "cpu"), sandbox, tmp_path))
    [forfeit] = outcome.forfeits
    assert (forfeit.seat, forfeit.cause.value) == (0, "crash")
    assert "(SIGXCPU): it used up its CPU-time limit of 2 s" in bot_log(tmp_path)


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
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same escapes, made by the same bot without a sandbox, succeed: the probes can tell."""
    monkeypatch.setenv("REFEREE_SECRET", "hunter2")
    host_tmp = Path(tempfile.gettempdir()) / f"arena-escape-{os.getpid()}"
    own_folder = layout.bot.parent

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
                f"--tcp 127.0.0.1:{port} --write={own_folder / name}.txt",
                f"--peek={layout.runs / name} --secret-env REFEREE_SECRET",
                f"--tmp-file={host_tmp}-{name}.txt --grab-mb 800",
                bot=layout.bot,
            )

        jailed, free = await asyncio.gather(
            play_one(
                attempts("jailed"),
                Sandbox(tier=Tier.BUBBLEWRAP, memory_mb=400),
                layout.runs / "jailed",
            ),
            play_one(attempts("free"), Sandbox(tier=Tier.NONE), layout.runs / "free"),
        )
        listener.close()
        return knocks, jailed, free

    knocks, jailed, free = asyncio.run(scenario())
    tried = _escape_lines(bot_log(layout.runs / "jailed"))
    assert tried["address"] == "unix"
    for name in ("tcp", "write", "peek", "secret", "memory"):
        assert tried[name].startswith("blocked"), (name, tried[name])
    assert "Read-only file system" in tried["write"]  # its own folder, shown read-only
    assert tried["tmp"].startswith("allowed")
    assert not jailed.forfeits and jailed.decisions > 0 and jailed.result.reason
    assert not (own_folder / "jailed.txt").exists()
    assert not Path(f"{host_tmp}-jailed.txt").exists()
    # Without a sandbox every escape but the memory grab works, and knocks on the host.
    loose = _escape_lines(bot_log(layout.runs / "free"))
    for name in ("tcp", "write", "peek", "secret"):
        assert loose[name].startswith("ESCAPED"), (name, loose[name])
    assert knocks == 1
    assert (own_folder / "free.txt").exists() and not free.forfeits
    Path(f"{host_tmp}-free.txt").unlink()


def _reads(layout: Layout) -> dict[str, Path]:
    return {
        "key": layout.key,
        "toml": layout.toml,
        "rival": layout.rival,
        "replay": layout.old_replay,
    }


def _attack_jailed_and_free(
    layout: Layout, jailed_box: Sandbox, *extra: str
) -> tuple[dict[str, str], dict[str, str]]:
    """The escape bot's reads (and extra tries) in jailed_box and, as the control, at tier
    none, each playing a whole match: what each said of its tries."""
    args = [f"--read={name}={path}" for name, path in _reads(layout).items()] + list(extra)
    spec = escape_bot(*args, bot=layout.bot)

    async def scenario() -> list[MatchOutcome]:
        return await asyncio.gather(
            play_one(spec, jailed_box, layout.runs / "jailed"),
            play_one(spec, Sandbox(tier=Tier.NONE), layout.runs / "free"),
        )

    for outcome in asyncio.run(scenario()):
        assert not outcome.forfeits and outcome.decisions > 0
    jailed, free = (_escape_lines(bot_log(layout.runs / run)) for run in ("jailed", "free"))
    for name in _reads(layout):
        assert jailed[f"read {name}"].startswith("blocked: FileNotFoundError"), jailed
        assert free[f"read {name}"].startswith("ESCAPED"), free  # the attack is real
    return jailed, free


@needs_bwrap
@pytest.mark.timeout(90)
def test_a_bot_in_bubblewrap_sees_only_what_it_needs(layout: Layout) -> None:
    """A root-only key, the tournament's file, another bot's source, another run's replays:
    out of sight in bubblewrap, where the bot also cannot run more processes than it is
    given; the same bot without a sandbox reads each and runs them all."""
    jailed_box = Sandbox(tier=Tier.BUBBLEWRAP, processes=32)
    jailed, free = _attack_jailed_and_free(layout, jailed_box, "--fork 48")
    assert jailed["fork"].startswith("blocked: BlockingIOError"), jailed["fork"]
    assert free["fork"] == "ESCAPED: ran 48 children at once"
    uid = int(jailed["uid"])
    if AS_ROOT:
        assert jailed_box.uid_base <= uid < jailed_box.uid_base + jailed_box.uid_count
    assert uid != 0


@needs_bwrap
@pytest.mark.timeout(90)
def test_a_referee_that_is_not_root_shows_bots_the_same_allow_list(
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A referee that is not root runs bwrap in a user namespace (the bot is then the
    referee's own user outside): the same allow-list. A root referee here takes that way."""
    monkeypatch.setattr("referee.bots.sandbox.referee_is_root", lambda: False)
    jailed, _ = _attack_jailed_and_free(layout, Sandbox(tier=Tier.BUBBLEWRAP))
    assert jailed["uid"] == "65534"


def _whoami_lines(log: str) -> dict[str, str]:
    return dict(
        line.removeprefix("whoami: ").split(": ", 1)
        for line in log.splitlines()
        if line.startswith("whoami: ")
    )


async def _run_alone(spec: str, sandbox: Sandbox, log: Path) -> None:
    """Start a bot that never joins, let it finish, and end what it left running."""
    process = await start_bot(parse_spec(spec), "127.0.0.1:9", "token", log, sandbox)
    await stop_bot(process, grace_s=10)


@needs_root
@pytest.mark.timeout(60)
def test_a_bot_at_tier_rlimits_runs_as_a_uid_of_its_own(layout: Layout, outside: Path) -> None:
    """Under a root referee, the rlimits tier's bot is an ordinary user on the host: file
    modes keep it out, RLIMIT_NPROC holds, it cannot signal the referee, and a setuid program
    gives it nothing. The same bot at tier none is root and does it all."""
    setuid_id = outside / "setuid-id"
    shutil.copy("/usr/bin/id", setuid_id)
    setuid_id.chmod(0o4755)
    spec = f"cmd:/bin/sh {WHOAMI_BOT} {layout.key} 40 {os.getpid()} {setuid_id}"
    sandbox = Sandbox(tier=Tier.RLIMITS, processes=16)
    asyncio.run(_run_alone(spec, sandbox, outside / "jailed.log"))
    asyncio.run(_run_alone(spec, Sandbox(tier=Tier.NONE), outside / "free.log"))
    jailed = _whoami_lines((outside / "jailed.log").read_text(encoding="utf-8"))
    uid = int(jailed["uid"])
    assert sandbox.uid_base <= uid < sandbox.uid_base + sandbox.uid_count
    assert jailed["secret"] == "refused" and jailed["signal"] == "refused"
    assert int(jailed["forked"]) < 40, jailed
    assert "euid=0" not in jailed["setuid"] and jailed["setuid"].startswith(f"uid={uid}")
    free = _whoami_lines((outside / "free.log").read_text(encoding="utf-8"))
    assert (free["uid"], free["secret"], free["forked"], free["signal"]) == (
        "0",
        "read",
        "40",
        "sent",
    )
    # The setuid program does make that uid root, outside the sandbox's no-new-privileges.
    direct = subprocess.run(
        [str(setuid_id)], user=uid, capture_output=True, text=True, timeout=10, check=True
    )
    assert "euid=0" in direct.stdout


@needs_root
def test_a_bot_its_uid_could_not_reach_is_refused_in_one_line(outside: Path) -> None:
    """Without a mount namespace, a bot whose program or files only root may reach cannot
    run as an ordinary user: the rlimits tier says so before it starts, never runs it as
    root instead."""
    closed = outside / "closed"
    closed.mkdir(mode=0o700)
    (closed / "bot.sh").write_text("echo hello\n", encoding="utf-8")
    (closed / "python").symlink_to(sys.executable)
    sandbox = Sandbox(tier=Tier.RLIMITS)
    specs = [f"cmd:/bin/sh {closed / 'bot.sh'}", f"cmd:{closed / 'python'} -c pass"]
    if PYTHON_CLOSED:
        specs.append("example:random")  # this machine's own interpreter is root's alone
    for spec in specs:
        with pytest.raises(SpecError) as refused:
            asyncio.run(start_bot(parse_spec(spec), "127.0.0.1:9", "t", None, sandbox))
        message = str(refused.value)
        assert "\n" not in message
        assert "the rlimits tier runs the bot as uid" in message
        assert "closed to other users; use the bubblewrap tier" in message
        assert str(closed) in message or (PYTHON_CLOSED and spec == "example:random")


@needs_root
@needs_bwrap
def test_only_the_bots_of_a_series_may_reach_its_socket() -> None:
    """The socket's folder and the socket belong to a group given to this series' bots only:
    a user outside it (another series' bot, anyone on the machine) cannot connect."""
    sandbox = Sandbox(tier=Tier.BUBBLEWRAP)
    path = private_socket(sandbox)
    assert path is not None
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(str(path))
        env = {"ARENA_ADDRESS": f"unix:{path}", "PATH": os.environ["PATH"]}
        launch = confine(sandbox, ("true",), env)
        release(launch)  # its memory group: nothing runs
        argv = launch.argv
        uid, group = int(argv[argv.index("--uid") + 1]), int(argv[argv.index("--groups") + 1])
        assert group != uid and path.parent.stat().st_gid == group
        # Connecting takes write access to the socket (and a way through its folder).
        can_write = ["/bin/sh", "-c", f"test -w {path}"]
        bot = subprocess.run(can_write, user=uid, group=uid, extra_groups=[group], check=False)
        stranger = subprocess.run(can_write, user=uid, group=uid, extra_groups=[], check=False)
        assert (bot.returncode, stranger.returncode) == (0, 1)
    finally:
        listener.close()
        shutil.rmtree(path.parent, ignore_errors=True)


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
        [sys.executable, "-m", "referee.bots.sandbox_docker"],
        env=dict(os.environ, **{SPEC_VARIABLE: spec.model_dump_json()}),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert runner.returncode == 2
    assert runner.stderr.startswith("sandbox: the docker tier needs a Docker engine")
    assert "Traceback" not in runner.stderr


def test_an_example_bot_is_shown_the_engines_and_never_the_referee() -> None:
    """What bubblewrap binds for an example bot: the SDK, the protos and the engines
    (arena_games), each its own folder, and none of the referee's or the tournaments' code."""
    import arena_games

    import referee
    import tournaments

    folders = package_folders(parse_spec("example:ismcts").argv)
    assert Path(arena_games.__file__).parent in folders
    for secretive in (referee, tournaments):
        home = Path(secretive.__file__).parent
        assert not any(home == f or home.is_relative_to(f) for f in folders), home


@needs_root
@needs_bwrap
@pytest.mark.parametrize("tier", [Tier.BUBBLEWRAP, Tier.RLIMITS])
def test_a_confined_bot_keeps_what_the_referee_tells_it_and_no_secret(
    tier: Tier, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A confined bot's environment: the referee's secrets stay out, what start_bot tells
    its bots stays in (its output unbuffered, so that each match's output lands in that
    match's file; no reconnecting to a referee that went away). Tier none, the control, keeps
    the secret too."""
    monkeypatch.setenv("REFEREE_SECRET", "hunter2")
    path = private_socket(Sandbox(tier=Tier.BUBBLEWRAP))
    assert path is not None
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(str(path))
        told = {"PYTHONUNBUFFERED": "1", "ARENA_RECONNECT_S": "0", "ARENA_TOKEN": "t0k"}
        env = dict(os.environ, ARENA_ADDRESS=f"unix:{path}", **told)
        for sandbox in (Sandbox(tier=tier), Sandbox(tier=Tier.NONE)):
            launch = confine(sandbox, ("true",), env)
            release(launch)  # nothing runs: its uid, memory group and TMPDIR go
            assert told.items() <= launch.env.items()
            assert ("REFEREE_SECRET" in launch.env) is (sandbox.tier is Tier.NONE)
    finally:
        listener.close()
        shutil.rmtree(path.parent, ignore_errors=True)
