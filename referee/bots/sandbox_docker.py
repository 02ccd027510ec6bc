"""The docker tier: a bot in a container with no network, a read-only root, a private /tmp,
cgroup limits on memory, CPU and processes, no capabilities, as an unprivileged user.

The referee starts `python -m referee.bots.sandbox_docker` as the bot's process: it runs the
container through the docker SDK, copies its output, and removes it when stopped, so the
referee handles it like any other bot process. The docker SDK is imported only here and only
when this tier is used.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import uuid
from pathlib import Path
from types import FrameType
from typing import Any

from pydantic import BaseModel, ConfigDict

from referee.bots.interpreters import own_python
from referee.bots.sandbox import Launch, Sandbox, SandboxError, path_folders, unix_socket_path

SPEC_VARIABLE = "ARENA_CONTAINER_SPEC"


class ContainerSpec(BaseModel):
    """The keyword arguments of the docker SDK's containers.run, as plain data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    image: str
    command: list[str]
    environment: dict[str, str]
    name: str
    network_mode: str = "none"
    volumes: dict[str, dict[str, str]]
    working_dir: str = "/tmp"
    mem_limit: str
    memswap_limit: str  # the same as mem_limit: no swap on top
    nano_cpus: int
    pids_limit: int
    ulimits: list[dict[str, int | str]]
    read_only: bool = True
    tmpfs: dict[str, str]
    user: str
    cap_drop: list[str] = ["ALL"]
    security_opt: list[str] = ["no-new-privileges"]
    labels: dict[str, str]


def container_spec(
    sandbox: Sandbox, argv: tuple[str, ...], env: dict[str, str], workdir: Path | None = None
) -> ContainerSpec:
    """The container for argv: the referee's Python becomes the image's `python`; the socket
    folder, the bot's working folder (a Python file bot's own, a cmd@FOLDER bot's FOLDER), in
    which it starts, and the folders of the bot's files are mounted at the same paths; folders
    the bot must not read are covered by empty tmpfs mounts. A bot on an interpreter of its
    own is refused: the image's Python runs it."""
    if own_python(argv):
        raise SandboxError(
            "the docker tier runs a bot on its image's Python: a bot's own interpreter "
            "(FILE.py@PYTHON, python = ...) is for the other tiers; put its packages in the image"
        )
    socket_folder = unix_socket_path(env.get("ARENA_ADDRESS", "")).parent
    command = ["python" if a == sys.executable else a for a in argv]
    volumes = {str(socket_folder): {"bind": str(socket_folder), "mode": "rw"}}
    named = path_folders(argv[1:] if argv[:1] == (sys.executable,) else argv)
    for folder in ([workdir] if workdir is not None else []) + named:
        volumes.setdefault(str(folder), {"bind": str(folder), "mode": "ro"})
    tmpfs = {"/tmp": f"rw,size={sandbox.tmp_mb}m,mode=1777"}
    for hidden in sandbox.hidden:
        if any(hidden.is_relative_to(Path(mounted)) for mounted in volumes):
            tmpfs[str(hidden)] = "ro,size=1k"
    memory = f"{sandbox.memory_mb}m"
    return ContainerSpec(
        image=sandbox.image,
        command=command,
        environment={k: v for k, v in env.items() if k.startswith("ARENA_")}
        | {"PYTHONUNBUFFERED": "1"},
        name=f"arena-bot-{uuid.uuid4().hex[:12]}",
        volumes=volumes,
        mem_limit=memory,
        memswap_limit=memory,
        nano_cpus=round(sandbox.cpus * 1e9),
        pids_limit=sandbox.processes,
        ulimits=[
            {"name": "cpu", "soft": sandbox.cpu_seconds, "hard": sandbox.cpu_seconds + 1},
            {"name": "nofile", "soft": sandbox.open_files, "hard": sandbox.open_files},
            {"name": "core", "soft": 0, "hard": 0},
        ],
        tmpfs=tmpfs,
        working_dir=str(workdir) if workdir is not None else "/tmp",
        user=sandbox.user,
        labels={"arena.role": "bot"},
    )


def docker_launch(
    sandbox: Sandbox, argv: tuple[str, ...], env: dict[str, str], workdir: Path | None = None
) -> Launch:
    """The runner process for argv's container, once an engine has answered."""
    spec = container_spec(sandbox, argv, env, workdir)
    check_engine()
    runner_env = dict(os.environ, **{SPEC_VARIABLE: spec.model_dump_json()})
    return Launch((sys.executable, "-m", "referee.bots.sandbox_docker"), runner_env)


def check_engine() -> None:
    """Raise SandboxError unless a Docker engine answers a ping."""
    client = _client()
    client.close()


def _client() -> Any:
    try:
        import docker  # type: ignore[import-untyped]  # the SDK ships no type hints
    except ImportError:
        raise SandboxError(
            "the docker tier needs the docker SDK: pip install docker==7.2.0"
        ) from None
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:
        raise SandboxError(
            f"the docker tier needs a Docker engine, and none is reachable ({exc}); "
            "start one or set DOCKER_HOST"
        ) from None
    return client


def run_container(spec: ContainerSpec) -> int:
    """Run the container, copy its output to ours, and remove it however it ends; a SIGTERM
    (the referee stopping the bot) ends it too."""
    import docker.types  # type: ignore[import-untyped]

    client = _client()
    kwargs = spec.model_dump()
    kwargs["ulimits"] = [docker.types.Ulimit(**u) for u in spec.ulimits]
    _open_socket_folder(spec)
    try:
        container = client.containers.run(**kwargs, detach=True)
    except docker.errors.DockerException as exc:
        raise SandboxError(f"docker cannot run the bot's container: {exc}") from None

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    try:
        for chunk in container.logs(stream=True, follow=True):
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
        return int(container.wait()["StatusCode"])
    finally:
        container.remove(force=True)


def _open_socket_folder(spec: ContainerSpec) -> None:
    """The container's user is not the referee's: let it reach the socket. Anyone on this
    machine may then connect, and still needs a seat token to play."""
    for folder, mount in spec.volumes.items():
        if mount["mode"] == "rw":
            os.chmod(folder, 0o711)
            for socket in Path(folder).iterdir():
                if socket.is_socket():
                    os.chmod(socket, 0o666)


def main() -> int:
    raw = os.environ.get(SPEC_VARIABLE)
    if raw is None:
        print(f"sandbox: {SPEC_VARIABLE} is not set: the referee starts this", file=sys.stderr)
        return 2
    try:
        return run_container(ContainerSpec.model_validate(json.loads(raw)))
    except SandboxError as exc:
        print(f"sandbox: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
