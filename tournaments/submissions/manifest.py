"""`arena-bot.toml`, at the root of a bot's folder: how the ladder runs the bot, and how it
builds it first. The model below is its only schema.

    python = "bot.py"               # a Python file with a Bot class (the arena_sdk's)
    class = "MyBot"                 # optional: its class, when it is not `Bot`
    # or, instead of python:
    command = ["./mybot", "--fast"] # a program and its arguments, run in the bot's folder:
                                    # a path inside the folder, or a name on the sandbox's PATH
    build = ["make", "-j2"]         # optional: run once in the sandbox, in the bot's folder,
                                    # before the bot is checked; a list, no shell

The file is at most 16 KiB of UTF-8; a program or argument at most 1,024 characters, at most
64 of them per list. An error names the key that is wrong.
"""

from __future__ import annotations

import os
import shlex
import stat
import tomllib
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from referee.bots.launcher import folder_in_spec
from tournaments.submissions.archive_rules import SubmissionRefused

MANIFEST_FILE = "arena-bot.toml"
MAX_MANIFEST_BYTES = 16 * 1024
KEYS = "python, class, command, build"

Arg = Annotated[str, StringConstraints(min_length=1, max_length=1024, pattern=r"^[^\x00]*$")]
Argv = Annotated[tuple[Arg, ...], Field(min_length=1, max_length=64)]


class BotManifest(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )

    python: str | None = Field(
        default=None, max_length=255, description="a Python file with a Bot class"
    )
    class_name: str | None = Field(
        default=None,
        alias="class",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}$",
        description="the Python file's bot class, when it is not Bot",
    )
    command: Argv | None = Field(default=None, description="a program and its arguments")
    build: Argv | None = Field(default=None, description="run once, in the sandbox, first")

    @model_validator(mode="after")
    def _one_way_to_run(self) -> BotManifest:
        if (self.python is None) == (self.command is None):
            raise ValueError("give python (a file with a Bot class) or command, exactly one")
        if self.class_name is not None and self.python is None:
            raise ValueError("class: only with python (the Python file's class)")
        if self.python is not None:
            if not self.python.endswith(".py"):
                raise ValueError(f"python: {self.python!r} is not a .py file")
            _inside("python", self.python)
        if self.command is not None and "/" in self.command[0]:
            _inside("command", self.command[0])
        return self

    def spec_in(self, folder: Path) -> str:
        """The bot's SPEC, as referee.bots.launcher takes it, for its folder at folder:
        FILE.py[:Class], or cmd@FOLDER:COMMAND, which runs the command in the folder (its
        relative paths hold), the program's path made absolute; FOLDER quoted when its name
        needs it (a ladder in a folder named `a:b`)."""
        if self.python is not None:
            cls = f":{self.class_name}" if self.class_name else ""
            return f"{folder / self.python}{cls}"
        assert self.command is not None
        home = folder.resolve()
        program = self.command[0]
        if "/" in program:
            program = str(home / program)
        return f"cmd@{folder_in_spec(home)}:" + shlex.join([program, *self.command[1:]])


def _inside(key: str, path: str) -> None:
    """A path that stays inside the bot's folder."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or "\\" in path:
        raise ValueError(f"{key}: {path!r} is not a path inside the bot's folder")


def read_manifest(folder: Path) -> BotManifest:
    """The bot folder's manifest, checked against the files beside it, or SubmissionRefused
    naming the key that is wrong."""
    manifest = parse_manifest(_manifest_text(folder))
    if manifest.python is not None and not _is_file(folder / manifest.python):
        raise SubmissionRefused(f"{MANIFEST_FILE}: python: no file {manifest.python!r}")
    if manifest.command is not None and manifest.build is None:
        program = manifest.command[0]
        if "/" in program and not _is_file(folder / program):
            raise SubmissionRefused(
                f"{MANIFEST_FILE}: command: no file {program!r} (and no build to make it)"
            )
    return manifest


def parse_manifest(text: str) -> BotManifest:
    """The manifest in text, or SubmissionRefused with its first problem on one line."""
    try:
        raw: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SubmissionRefused(f"{MANIFEST_FILE} is not valid TOML: {exc}") from None
    except (RecursionError, ValueError):
        raise SubmissionRefused(f"{MANIFEST_FILE} is not valid TOML") from None
    try:
        return BotManifest.model_validate(raw)
    except ValidationError as exc:
        raise SubmissionRefused(f"{MANIFEST_FILE}: {_first_problem(exc)}") from None


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"][:2])
    if error["type"] == "extra_forbidden":
        return f"{where}: not a key of {MANIFEST_FILE} (it takes {KEYS})"
    message = error["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def _manifest_text(folder: Path) -> str:
    path = folder / MANIFEST_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise SubmissionRefused(
            f"no {MANIFEST_FILE} at the archive's root (nor in its one top folder)"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SubmissionRefused(f"{MANIFEST_FILE} is not a file")
    with os.fdopen(fd, "rb") as file:
        data = file.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise SubmissionRefused(f"{MANIFEST_FILE} is over {MAX_MANIFEST_BYTES // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SubmissionRefused(f"{MANIFEST_FILE} is not UTF-8 text") from None


def _is_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False
