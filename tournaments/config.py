"""The tournament file: one TOML document, validated by the models below, which are its only
schema. An error names the key that is wrong and where it is.

    name = "spring-cup"
    game = "opposing-force"
    output = "runs/spring-cup"          # relative to this file's folder
    deals = "book.txt"                  # optional: the deals to play (tournaments/deal_book.py)

    [options]                           # the game's own options, as in `arena play --option`

    [[bots]]
    spec = "example:opposing-force"     # SPECs as in `arena play`
    [[bots]]
    name = "mine"
    spec = "bots/mine.py"
    python = "bots/.venv/bin/python"    # optional: the bot's own interpreter

    [format]
    kind = "round-robin"                # gauntlet, swiss, ladder, sprt, knockout or
                                        # double-elimination (deals, tiebreak_deals, through)
    seats = 2                           # 2 to 4 at a table
    games_per_pairing = 4               # matches each table plays
    rotate_seats = true                 # each bot takes each seat in turn
    duplicate_deals = true              # each deal is replayed once per rotation

    [time_control]                      # arena_games.match_settings.MatchSettings
    decision_ms = 1000
    time_bank_ms = 5000

    [policies]                          # arena_games.match_settings.Policies
    timeout = "random"

    [sandbox]                           # referee.bots.sandbox: none, rlimits, bubblewrap, docker
    tier = "bubblewrap"
    memory_mb = 512

    [bot_output]                        # what is kept of each bot's stdout and stderr
    per_match_kib = 1024                # each seat's log of a match (and a process's own)
    per_bot_mib = 64                    # all of a bot's logs, per referee process

    [contest]                           # a final's terms (docs/tournaments.md)
    release = "hidden"                  # participants or public (the default): who sees results
    entrants = "entrants.json"          # optional: who entered each bot (tournaments/contest.py)

    [run]
    concurrency = 2
    restart_bots = false                # true: a fresh bot process for every match
    executor = "local"                  # "cores": one referee process per core; or "dask"
    processes = 4                       # cores only: referee processes (unset: one per core)
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from arena_games import get_game
from arena_games.base import GameError
from arena_games.match_settings import MatchSettings, Policies
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from referee.bots.launcher import COMMAND_PREFIXES, SpecError, parse_spec, python_file_spec
from referee.bots.output import MIB, OutputCaps
from referee.bots.sandbox import Sandbox, Tier
from tournaments.contest import Release
from tournaments.deal_book import DealBookError, read_book
from tournaments.entrants_file import EntrantsError, read_entrants
from tournaments.knockout import plannable


class ConfigError(ValueError):
    """A tournament file that cannot be run, with every reason found."""


class _Strict(BaseModel):
    # No nan or inf (TOML has both): every number of a tournament is a finite one.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class BotEntry(_Strict):
    spec: str = Field(
        description="bot SPEC: FILE.py[:Class], example:NAME, cmd:COMMAND or cmd@FOLDER:COMMAND"
    )
    name: str | None = Field(default=None, description="shown in standings; from the SPEC if unset")
    python: str | None = Field(
        default=None,
        description="a Python file bot's own interpreter (relative to the tournament file)",
    )

    @model_validator(mode="after")
    def _python_bot(self) -> BotEntry:
        if self.python is not None and self.spec.startswith((*COMMAND_PREFIXES, "example:")):
            raise ValueError(
                "python: only a Python file bot (FILE.py) runs on an interpreter of its own"
            )
        if self.python is not None and "@" in self.spec:
            raise ValueError("python: the SPEC names an interpreter already (FILE.py@PYTHON)")
        return self

    @property
    def own_python(self) -> bool:
        """The bot runs on an interpreter of its own (python = ..., or FILE.py@PYTHON)."""
        file_bot = not self.spec.startswith((*COMMAND_PREFIXES, "example:"))
        return self.python is not None or (file_bot and "@" in self.spec)

    @property
    def full_spec(self) -> str:
        """The SPEC with the interpreter in it, as `arena play` takes it: FILE.py@PYTHON."""
        return self.spec if self.python is None else f"{self.spec}@{self.python}"


class _Tables(_Strict):
    seats: int = Field(default=2, ge=2, le=4, description="bots at each table")
    games_per_pairing: int = Field(default=2, ge=1, description="matches each table plays")
    rotate_seats: bool = True
    duplicate_deals: bool = True

    @model_validator(mode="after")
    def _deals_need_rotation(self) -> _Tables:
        if self.duplicate_deals and not self.rotate_seats:
            raise ValueError("duplicate_deals needs rotate_seats: the same deal in the same seats")
        if self.duplicate_deals and self.games_per_pairing % self.seats:
            raise ValueError(
                f"with duplicate_deals, games_per_pairing ({self.games_per_pairing}) must be a "
                f"multiple of seats ({self.seats}): each deal is played once per rotation"
            )
        return self


class RoundRobin(_Tables):
    kind: Literal["round-robin"]


class Gauntlet(_Tables):
    kind: Literal["gauntlet"]
    challengers: list[str] = Field(min_length=1, description="bot names that face the field")


class Swiss(_Tables):
    kind: Literal["swiss"]
    rounds: int = Field(ge=1)


class Ladder(_Tables):
    kind: Literal["ladder"]
    matches: int | None = Field(default=None, ge=1, description="stop after; unset runs on")


class Sprt(_Tables):
    """Candidate against baseline on duplicate-deal pairs, until one hypothesis is accepted."""

    kind: Literal["sprt"]
    seats: int = Field(default=2, ge=2, le=2)
    candidate: str
    baseline: str
    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    beta: float = Field(default=0.05, gt=0, lt=0.5)
    max_pairs: int = Field(default=2000, ge=1)

    @model_validator(mode="after")
    def _pairs(self) -> Sprt:
        if not (self.duplicate_deals and self.rotate_seats and self.games_per_pairing == 2):
            raise ValueError("sprt plays pairs: duplicate_deals, rotate_seats, games_per_pairing=2")
        if self.elo1 <= self.elo0:
            raise ValueError(f"elo1 ({self.elo1}) must be above elo0 ({self.elo0})")
        return self


class _Bracket(_Strict):
    """A bracket (tournaments/knockout.py): seeds are the order of [[bots]], seed 1 first."""

    seats: int = Field(default=2, ge=2, le=4, description="bots at each table")
    deals: int = Field(
        default=1,
        ge=1,
        le=100,
        description="deals of each table's mini-match, each played in every seating",
    )
    tiebreak_deals: int = Field(
        default=2,
        ge=0,
        le=100,
        description="further deals while a table is tied at its cut; then the better seed goes on",
    )
    through: int | None = Field(
        default=None, ge=1, description="bots of a table that go on; unset: seats // 2"
    )

    @property
    def going_on(self) -> int:
        return self.through or self.seats // 2

    @model_validator(mode="after")
    def _whole_rounds(self) -> _Bracket:
        seats, through = self.seats, self.going_on
        if through >= seats or seats % through:
            fits = [t for t in range(1, seats) if seats % t == 0]
            raise ValueError(
                f"through ({through}) must divide seats ({seats}) and be fewer, so that each "
                f"round's tables fill the next round's: {' or '.join(map(str, fits))}"
            )
        return self


class Knockout(_Bracket):
    kind: Literal["knockout"]


class DoubleElimination(_Bracket):
    kind: Literal["double-elimination"]


AnyFormat = RoundRobin | Gauntlet | Swiss | Ladder | Sprt | Knockout | DoubleElimination
Format = Annotated[AnyFormat, Field(discriminator="kind")]


class RunSettings(_Strict):
    concurrency: int = Field(default=2, ge=1, description="matches played at once")
    restart_bots: bool = Field(default=False, description="a fresh bot process per match")
    executor: Literal["local", "cores", "dask"] = "local"
    processes: int | None = Field(
        default=None, ge=1, description="referee processes of the cores executor; unset: one a core"
    )
    dask_address: str | None = Field(default=None, description="scheduler; unset: LocalCluster")
    dask_workers: int = Field(default=2, ge=1, description="LocalCluster workers")
    connect_timeout_s: float = Field(default=20.0, gt=0)
    rejoin_grace_s: float = Field(
        default=10.0,
        ge=0,
        description="how long a bot whose stream dropped (its process alive) may rejoin its match",
    )
    disk_reserve_mb: float = Field(
        default=100,
        ge=0,
        description="free space (MB) on the output's disk under which no match starts",
    )


class OutputLimits(_Strict):
    """The caps of what is kept of a bot's output (docs/tournaments.md, "Bot output")."""

    per_match_kib: int = Field(
        default=1024, ge=1, description="each seat's log of a match, and a process's own log"
    )
    per_bot_mib: int = Field(
        default=64, ge=1, description="all of one bot's logs, for as long as its referee runs"
    )

    def caps(self) -> OutputCaps:
        return OutputCaps(match_bytes=self.per_match_kib * 1024, bot_bytes=self.per_bot_mib * MIB)


class ContestTerms(_Strict):
    """A final's terms: who sees its results, and who entered its bots."""

    release: Release = Field(
        default=Release.PUBLIC,
        description="who sees the results at first: hidden (the operator alone), participants "
        "(each author their own bots') or public; `arena tournament release` changes it",
    )
    entrants: str | None = Field(
        default=None,
        description="entrants.json (tournaments/contest.py's Entrants), relative to the file's "
        "folder: the authors whose tokens open their own results under participants",
    )


class TournamentConfig(_Strict):
    name: str = Field(min_length=1)
    game: str
    seed: int | None = Field(
        default=None,
        description="practice only: the same deals on every run, and guessable by any bot; "
        "unset, the tournament draws a secret and keeps it in its state",
    )
    output: str | None = Field(default=None, description="folder; relative to the file's")
    deals: str | None = Field(
        default=None,
        description="a file of deal keys to play instead of fresh deals (tournaments/deal_book.py);"
        " relative to the file's folder",
    )
    options: dict[str, object] = Field(default_factory=dict)
    bots: list[BotEntry] = Field(min_length=2)
    format: Format
    time_control: MatchSettings = Field(default_factory=MatchSettings)
    policies: Policies = Field(default_factory=Policies)
    sandbox: Sandbox = Field(default_factory=Sandbox)
    bot_output: OutputLimits = Field(default_factory=OutputLimits)
    run: RunSettings = Field(default_factory=RunSettings)
    contest: ContestTerms = Field(default_factory=ContestTerms)

    @field_validator("game")
    @classmethod
    def _known_game(cls, name: str) -> str:
        try:
            get_game(name)
        except GameError as exc:
            raise ValueError(str(exc)) from None
        return name

    # Errors found across keys name their key first: describe() shows them as they are.
    @model_validator(mode="after")
    def _consistent(self) -> TournamentConfig:
        game = get_game(self.game)
        try:
            game.options(self.options)
        except GameError as exc:
            raise ValueError(f"options: {exc}") from None
        try:
            # The game judges the table itself, with its own rules (teams need four seats...):
            # a match it would refuse must not pass here and fail every match of the run.
            game.new_state(self.options, self.format.seats)
        except GameError as exc:
            raise ValueError(f"format.seats: {exc}") from None
        names = self.bot_names()
        if len(set(names)) != len(names):
            raise ValueError(f"bots: names must differ, got {names}: set name = ... on each")
        if len(names) < self.format.seats:
            raise ValueError(f"bots: {len(names)} cannot fill a table of {self.format.seats}")
        if self.sandbox.tier is Tier.DOCKER and any(b.own_python for b in self.bots):
            raise ValueError(
                "sandbox.tier: docker runs every bot on its image's Python; a bot's own "
                "interpreter (python = ...) is for the other tiers"
            )
        for wanted in _named_in_format(self.format):
            if wanted not in names:
                raise ValueError(f"format: names bot {wanted!r}, which is not among {names}")
        if isinstance(self.format, Knockout | DoubleElimination):
            _bracket_fills(self.format, len(names))
        return self

    def bot_names(self) -> list[str]:
        return [b.name or _spec_name(b.spec) for b in self.bots]

    def bot_specs(self) -> list[str]:
        """Each bot's SPEC, with its interpreter in it when it has one."""
        return [b.full_spec for b in self.bots]

    def settings(self) -> MatchSettings:
        return self.time_control.model_copy(update={"policies": self.policies})


def _bracket_fills(fmt: Knockout | DoubleElimination, bots: int) -> None:
    """Every table a bracket plays is full (tournaments/knockout.py: a table with an empty seat
    would need a smaller game); a count that no plan seats is refused, naming the nearest."""
    seats, through = fmt.seats, fmt.going_on
    if plannable(fmt.kind, bots, seats, through):
        return
    fits = [n for n in range(seats, bots + seats + 2) if plannable(fmt.kind, n, seats, through)]
    below = [n for n in fits if n < bots]
    above = [n for n in fits if n > bots]
    nearest = " or ".join(str(n) for n in (below[-1:] + above[:1]))
    raise ValueError(
        f"bots: {bots} cannot all be seated at full tables (a "
        f"{fmt.kind.replace('-', ' ')} at {seats} seats with {through} through); {nearest} "
        "bots would be"
    )


def _named_in_format(fmt: AnyFormat) -> list[str]:
    if isinstance(fmt, Gauntlet):
        return fmt.challengers
    if isinstance(fmt, Sprt):
        return [fmt.candidate, fmt.baseline]
    return []


def _spec_name(spec: str) -> str:
    try:
        return parse_spec(spec).name
    except SpecError:
        return spec


def load_config(path: Path) -> TournamentConfig:
    """Read and validate a tournament file; relative paths in it are taken from its folder."""
    raw = read_toml(path)
    config = resolve_paths(parse_config(raw, str(path)), path.parent)
    for number, bot in enumerate(config.bots):
        try:
            parse_spec(bot.full_spec)
        except SpecError as exc:
            key = "python" if bot.python is not None else "spec"
            raise ConfigError(f"{path}:\n  bots.{number}.{key}: {exc}") from None
    if config.deals is not None:
        if not Path(config.deals).is_file():  # a FIFO would block, /dev/zero never end
            raise ConfigError(f"{path}:\n  deals: {config.deals} is not a file")
        try:
            read_book(Path(config.deals))
        except DealBookError as exc:
            raise ConfigError(f"{path}:\n  deals: {exc}") from None
    if config.contest.entrants is not None:
        try:
            read_entrants(Path(config.contest.entrants), config.bot_names())
        except EntrantsError as exc:
            raise ConfigError(f"{path}:\n  contest.entrants: {exc}") from None
    return config


# Bounds far beyond any real file (a tournament's or a ladder's is a few KiB, nested 3 levels),
# so that a crafted one is refused in one line rather than with a traceback from the parser.
MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 16
MAX_STRING = 4096  # a path's longest on Linux; no name, command or secret is longer
_LONG_NUMBER = re.compile(r"[0-9_]{4000,}")  # Python reads no integer of more than 4300 digits


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML file at path; ConfigError naming the file, and the line or the key, when it is
    not a regular file, longer than MAX_FILE_BYTES, not UTF-8 or not TOML, nests tables or
    arrays deeper than MAX_DEPTH, or holds a number too long to read."""
    text = _bounded_text(path)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}:{_deep_line(text)}: {_TOO_DEEP}") from None
    except ValueError:  # int() refusing thousands of digits
        line = _line_of(text, _LONG_NUMBER.search(text))
        raise ConfigError(f"{path}:{line}: a number of thousands of digits") from None
    return raw


_TOO_DEEP = f"tables or arrays nested deeper than {MAX_DEPTH} levels"


def _bounded_text(path: Path) -> str:
    """The file's text, read within MAX_FILE_BYTES: a FIFO would block, /dev/zero never end."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ConfigError(f"cannot read {path}: not a regular file")
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: longer than {MAX_FILE_BYTES // 1024} KiB: not a config file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 (byte {exc.start + 1})") from None


def _line_of(text: str, found: re.Match[str] | None) -> int | str:
    return "?" if found is None else text.count("\n", 0, found.start()) + 1


def _deep_line(text: str) -> int | str:
    """The first line opening more tables or arrays than MAX_DEPTH: where the parser, which
    gave up, was lost."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.count("[") + line.count("{") > MAX_DEPTH:
            return number
    return "?"


def shape_problem(raw: dict[str, Any]) -> str | None:
    """'KEY: what is wrong' for a table nested too deep, or holding a string too long or with a
    NUL; None when sound."""
    return _shape_problem(raw, [], 1)


def _shape_problem(value: object, keys: list[str], depth: int) -> str | None:
    """'KEY: what is wrong' for the first value nested deeper than MAX_DEPTH, or string longer
    than MAX_STRING or holding a NUL (the OS would refuse either as a path or a command deep in
    a run, with a traceback), or None."""
    where = ".".join(keys) or "the file"
    if depth > MAX_DEPTH:
        return f"{where}: {_TOO_DEEP}"
    if isinstance(value, str) and "\0" in value:
        return f"{where}: a string holds a NUL character"
    if isinstance(value, str) and len(value) > MAX_STRING:
        return f"{where}: longer than {MAX_STRING} characters"
    children: list[tuple[str, object]] = []
    if isinstance(value, dict):
        children = [(str(key), child) for key, child in value.items()]
    elif isinstance(value, list):
        children = [(str(index), child) for index, child in enumerate(value)]
    for key, child in children:
        if "\0" in key:
            return f"{where}: a key holds a NUL character"
        found = _shape_problem(child, [*keys, key], depth + 1)
        if found is not None:
            return found
    return None


def parse_config(raw: dict[str, object], source: str = "config") -> TournamentConfig:
    problem = shape_problem(raw)
    if problem is not None:
        raise ConfigError(f"{source}: {problem}")
    try:
        return TournamentConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{source}:\n{describe(exc)}") from None


def describe(exc: ValidationError) -> str:
    """One line per problem: the dotted key, then what is wrong with it."""
    lines = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        lines.append(f"  {where}: {message}" if where else f"  {message}")
    return "\n".join(lines)


def resolve_paths(config: TournamentConfig, base: Path) -> TournamentConfig:
    """Bot files, interpreters, the output folder, the deals and entrants files, relative to the
    tournament file, made absolute, so the tournament runs the same from any working folder and
    on resume. An interpreter's path is not resolved: a venv's python is a symlink, and Python
    finds its venv from the path it was started by."""
    bots = [
        b.model_copy(
            update={
                "spec": _absolute_spec(b.spec, base),
                "python": _absolute_program(b.python, base),
            }
        )
        for b in config.bots
    ]
    output = str((base / config.output).resolve()) if config.output else None
    deals = str((base / config.deals).resolve()) if config.deals else None
    contest = config.contest
    if contest.entrants is not None:
        contest = contest.model_copy(update={"entrants": str((base / contest.entrants).resolve())})
    return config.model_copy(
        update={"bots": bots, "output": output, "deals": deals, "contest": contest}
    )


def _absolute_program(program: str | None, base: Path) -> str | None:
    """A path relative to base made absolute; a bare name (found on PATH) left as it is."""
    if program is None or "/" not in program:
        return program
    return os.path.abspath(base / program)


def _absolute_spec(spec: str, base: Path) -> str:
    parts = python_file_spec(spec)
    if parts is None:
        return spec
    file = Path(parts.file)
    if not file.is_absolute() and (base / file).is_file():
        parts = dataclasses.replace(parts, file=str((base / file).resolve()))
    python = _absolute_program(parts.python, base)
    return str(dataclasses.replace(parts, python=python))
