"""Uploads on a ladder whose tier is docker ("uploaded code always runs at bubblewrap or
docker, never below"): its build still runs in bubblewrap; its validation games and its rated
matches run in a container that mounts, of the ladder's folder, only the version's own files,
read-only, with no network (the control: a ladder at tier rlimits takes no upload at all, and
a version vetted there would be moved up to bubblewrap). Shown as the container spec the
referee would run: a whole upload through a docker ladder needs an engine and an image that
holds arena-sdk, and this machine has the docker client only (no test pretends otherwise)."""

from __future__ import annotations

from pathlib import Path

from referee.bots.builds import BuildLimits
from referee.bots.launcher import parse_spec
from referee.bots.sandbox import Tier
from referee.bots.sandbox_docker import container_spec
from tests.tournaments.ladder.upload_kit import packed, python_bot
from tournaments.ladder.config_file import load_ladder, write_new_ladder
from tournaments.ladder.service import host_spec
from tournaments.ladder.vetting import bots_sandbox, check_sandbox, takes_uploads
from tournaments.submissions.archive_rules import SubmissionLimits
from tournaments.submissions.intake import accept


def docker_ladder(folder: Path, tier: str = "docker") -> None:
    folder.mkdir()
    write_new_ladder(folder, "opposing-force", 2, "127.0.0.1:0")
    path = folder / "ladder.toml"
    path.write_text(path.read_text().replace('tier = "bubblewrap"', f'tier = "{tier}"'))


def test_a_docker_ladder_builds_in_bubblewrap_and_runs_versions_seeing_only_their_files(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ladder"
    docker_ladder(folder)
    config = load_ladder(folder)
    assert takes_uploads(config.sandbox)
    assert BuildLimits().sandbox(config.sandbox, pids_group=False).tier is Tier.BUBBLEWRAP
    archive = packed(python_bot(tmp_path / "src"))
    version = accept(archive, SubmissionLimits(), folder / "versions")
    spec = parse_spec(str(version.folder / "bot.py"))
    env = {"ARENA_ADDRESS": f"unix:{tmp_path}/sockets/referee.sock", "ARENA_TOKEN": "t"}
    for where in (check_sandbox(config, folder), bots_sandbox(config.sandbox, folder)):
        assert where.tier is Tier.DOCKER  # validation games, and rated ones, in a container
        box = container_spec(where, spec.argv, env, spec.workdir)
        assert box.network_mode == "none" and box.read_only and box.cap_drop == ["ALL"]
        mounted = {Path(path): bind["mode"] for path, bind in box.volumes.items()}
        assert mounted == {version.folder.resolve(): "ro", tmp_path / "sockets": "rw"}, mounted
        assert not any(folder.resolve().is_relative_to(m) for m in mounted)  # nor ladder.toml
    assert host_spec(config, folder, b"s" * 32).sandbox.tier is Tier.DOCKER  # rated play


def test_the_control_below_bubblewrap_no_upload_runs(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    docker_ladder(folder, "rlimits")
    config = load_ladder(folder)
    assert not takes_uploads(config.sandbox)
    assert check_sandbox(config, folder).tier is Tier.BUBBLEWRAP
