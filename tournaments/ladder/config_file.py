"""The ladder's file, `ladder.toml` in its folder: what `arena ladder serve` reads at every start.
The models below are its only schema; an error names the key that is wrong.

    name = "of-ladder"
    game = "opposing-force"
    [options]                       # the game's own options
    [table]
    seats = 2                       # 2 to 4 bots at a table
    deals = 1                       # deals a table plays, each once per rotation of the seats
    [time_control]                  # arena_games.match_settings.MatchSettings
    [policies]                      # arena_games.match_settings.Policies
    [sandbox]                       # referee.bots.sandbox.Sandbox
    tier = "bubblewrap"             # what `ladder init` writes; "none" lets bots read it all
    [bot_output]                    # per_match_kib, per_bot_mib: as a tournament's
    [matchmaking]
    provisional_matches = 10        # a new version plays first until it has this many
    [health]
    window = 10                     # a bot's last matches looked at after each of its matches
    max_failures = 4                # forfeits among them that pause it
    [run]
    concurrency = 2
    executor = "local"              # "cores": one referee process per core; or "dask"
    processes = 4                   # cores only: referee processes (unset: one per core)
    listen = "127.0.0.1:50061"      # the referee remote bots connect to
    disk_reserve_mb = 100           # under this much free space on the folder's disk, no match
                                    # starts until space returns (0: never wait)
    tls_cert = "cert.pem"           # with tls_key: remote bots connect over TLS (paths from
    tls_key = "key.pem"             # the ladder's folder); the ladder's own bots need none
    [web]
    address = "127.0.0.1:8061"      # for the ladder's web page
    hosts = ["ladder.example.org"]  # Host names it answers to besides 127.0.0.1, localhost, ::1
    max_connections = 256           # web connections open at once (serve's descriptors
    max_connections_per_client = 32 # are the referee's first), and from one address
    requests_per_second = 40        # from one address, then 429 (a flood costs serve little)
    [authors]                       # who enters bots (docs/ladder.md, "Authors")
    registration = "closed"         # "invite": authors register over HTTP with an invite token
    bots_per_author = 1             # an author's (and a team's member's) active bots at most
    [submissions]                   # uploaded versions (docs/contest.md, "Submitting a bot")
    archive_mb = 10                 # and unpacked_mb, files, name_chars, depth: SubmissionLimits
    per_author_per_hour = 10        # submissions an author may make an hour, refused ones too
    validation_games = 4            # games against the random bot before a version goes live
    [submissions.build]             # referee.bots.builds.BuildLimits: wall_seconds, memory_mb, ...
    [challenges]                    # unrated games authors ask for (docs/ladder.md, "Challenges")
    games_per_hour = 20             # and games_per_day, games_per_challenge: per author
    share = 0.5                     # of the running matches challenges may take at most
    [contest]                       # the contest's end (docs/contest.md, "The contest's end")
    freeze_at = 2026-12-01T18:00:00Z  # no author submits from then on (`arena ladder freeze`)
    release = "public"              # after it: "hidden" | "participants" | "public"
    [webhooks]                      # timeout_s, backoff_s, backoff_max_s, give_up_after_s,
    allow_private = false           # queue_per_owner; an author's URL may reach 127.0.0.1...
    [tokens]                        # secrets: the file is readable by its owner only
    operator = "..."                # operator actions over HTTP
    ladder = "..."                  # authors register remote bots with it
"""

from __future__ import annotations

import json
import os
import secrets
import tomllib
from pathlib import Path
from typing import Literal

from arena_games import get_game
from arena_games.base import GameError
from arena_games.match_settings import MatchSettings, Policies
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    model_validator,
)

from referee.bots.builds import BuildLimits
from referee.bots.sandbox import Sandbox
from tournaments.config import ConfigError, OutputLimits, describe, read_toml, shape_problem
from tournaments.contest import Release
from tournaments.submissions.archive_rules import SubmissionLimits

LADDER_FILE = "ladder.toml"
DISK_RESERVE_MB = 100  # room for the results in flight, and for the operator to act


class _Strict(BaseModel):
    # No nan or inf (TOML has both): every number of a ladder is a finite one.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class TableSettings(_Strict):
    seats: int = Field(default=2, ge=2, le=4, description="bots at a table")
    deals: int = Field(default=1, ge=1, description="deals per table, each once per rotation")
    duplicate_deals: bool = Field(
        default=True, description="each deal replayed once per rotation of the seats"
    )


class Matchmaking(_Strict):
    provisional_matches: int = Field(
        default=10, ge=0, description="a version plays first until it has this many matches"
    )


class Health(_Strict):
    window: int = Field(default=10, ge=1, description="recent matches of a bot looked at")
    max_failures: int = Field(default=4, ge=1, description="forfeits among them that pause it")


class LadderRun(_Strict):
    concurrency: int = Field(default=2, ge=1, description="matches played at once")
    executor: Literal["local", "cores", "dask"] = "local"
    processes: int | None = Field(default=None, ge=1, description="cores: referee processes")
    dask_address: str | None = None
    dask_workers: int = Field(default=2, ge=1)
    connect_timeout_s: float = Field(default=20.0, gt=0)
    rejoin_grace_s: float = Field(default=10.0, ge=0)
    disk_reserve_mb: float = Field(
        default=DISK_RESERVE_MB,
        ge=0,
        description="free space (MB) on the folder's disk under which no match starts",
    )
    listen: str = Field(default="127.0.0.1:50061", description="referee address for remote bots")
    tls_cert: Path | None = Field(default=None, description="PEM certificate: TLS for remote bots")
    tls_key: Path | None = Field(default=None, description="its private key (PEM)")

    @model_validator(mode="after")
    def _both_or_neither(self) -> LadderRun:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key: TLS needs both, or neither for plaintext")
        return self

    def tls(self, folder: Path) -> tuple[Path, Path] | None:
        """The certificate and key, relative paths taken from the ladder's folder."""
        if self.tls_cert is None or self.tls_key is None:
            return None
        return folder / self.tls_cert, folder / self.tls_key


class Web(_Strict):
    address: str = "127.0.0.1:8061"
    hosts: tuple[str, ...] = Field(
        default=(),
        description="Host names the page answers to besides the loopback names (and, bound "
        "to a non-loopback address, IP addresses): a DNS-rebinding page is refused",
    )
    max_connections: int = Field(default=256, ge=1, description="open web connections at most")
    max_connections_per_client: int = Field(
        default=32, ge=1, description="open web connections from one address at most"
    )
    requests_per_second: int = Field(
        default=40, ge=1, description="requests one address may make a second; then 429"
    )


class Authors(_Strict):
    registration: Literal["closed", "invite"] = Field(
        default="closed",
        description="invite: an author registers over HTTP (POST /api/authors) with the "
        "invite token `arena ladder author invite` printed",
    )
    bots_per_author: int = Field(
        default=1, ge=1, description="active bots an author may have at once (the house: any)"
    )


class Submissions(SubmissionLimits):
    """What an author may upload, how often, and how each version is built and validated."""

    per_author_per_hour: int = Field(
        default=10, ge=1, description="submissions an author may make an hour, refused ones too"
    )
    validation_games: int = Field(
        default=4, ge=1, le=100, description="games against the random bot before going live"
    )
    upload_kib_per_s: float = Field(
        default=32,
        gt=0,
        le=1_000_000,
        description="an upload's body must come this fast over each 5 s, or it is cut",
    )
    build: BuildLimits = Field(default_factory=BuildLimits)


class Challenges(_Strict):
    """The unrated games authors ask for (tournaments/ladder/challenges.py)."""

    games_per_hour: int = Field(
        default=20, ge=0, description="challenge games an author may ask for in any hour"
    )
    games_per_day: int = Field(
        default=100, ge=0, description="challenge games an author may ask for in any 24 hours"
    )
    games_per_challenge: int = Field(
        default=20, ge=1, le=1000, description="games one challenge may ask for at most"
    )
    share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="of the running matches, challenges take at most this share (0: none play)",
    )


class Contest(_Strict):
    """The contest's end (tournaments/ladder/freeze.py)."""

    freeze_at: AwareDatetime | None = Field(
        default=None,
        description="a TOML datetime with its offset: from then on no author submits or "
        "registers (`arena ladder freeze` too: the earlier of the two wins)",
    )
    release: Release = Field(
        default=Release.PUBLIC,
        description="who sees what happened after the freeze (`arena ladder release` changes it)",
    )


class Webhooks(_Strict):
    """How serve delivers the ladder's events to webhooks (tournaments/ladder/webhooks.py)."""

    timeout_s: float = Field(
        default=5, gt=0, le=60, description="seconds a receiver has to answer each POST"
    )
    backoff_s: float = Field(
        default=10, gt=0, description="seconds before the first retry; doubled after each"
    )
    backoff_max_s: float = Field(default=600, gt=0, description="the longest wait between tries")
    give_up_after_s: float = Field(
        default=86400, gt=0, description="seconds after its event a delivery is given up"
    )
    queue_per_owner: int = Field(
        default=500, ge=1, description="deliveries waiting per webhook; the oldest beyond go"
    )
    allow_private: bool = Field(
        default=False,
        description="an author's URL may reach loopback, private or link-local addresses",
    )


class Tokens(_Strict):
    operator: SecretStr = Field(min_length=16)
    ladder: SecretStr = Field(min_length=16)


class LadderConfig(_Strict):
    name: str = Field(min_length=1)
    game: str
    options: dict[str, object] = Field(default_factory=dict)
    table: TableSettings = Field(default_factory=TableSettings)
    time_control: MatchSettings = Field(default_factory=MatchSettings)
    policies: Policies = Field(default_factory=Policies)
    sandbox: Sandbox = Field(default_factory=Sandbox)
    bot_output: OutputLimits = Field(default_factory=OutputLimits)
    matchmaking: Matchmaking = Field(default_factory=Matchmaking)
    health: Health = Field(default_factory=Health)
    run: LadderRun = Field(default_factory=LadderRun)
    web: Web = Field(default_factory=Web)
    authors: Authors = Field(default_factory=Authors)
    submissions: Submissions = Field(default_factory=Submissions)
    challenges: Challenges = Field(default_factory=Challenges)
    contest: Contest = Field(default_factory=Contest)
    webhooks: Webhooks = Field(default_factory=Webhooks)
    tokens: Tokens

    @model_validator(mode="after")
    def _playable(self) -> LadderConfig:
        try:
            game = get_game(self.game)
            game.options(self.options)
            game.new_state(self.options, self.table.seats)
        except GameError as exc:
            raise ValueError(f"game/options/table.seats: {exc}") from None
        return self

    def settings(self) -> MatchSettings:
        return self.time_control.model_copy(update={"policies": self.policies})


def load_ladder(folder: Path) -> LadderConfig:
    """The ladder's file, read within bounds (tournaments.config.read_toml) and validated;
    ConfigError naming the file and the key otherwise."""
    path = folder / LADDER_FILE
    if not path.exists():
        raise ConfigError(f"{folder} holds no ladder (no {LADDER_FILE}): arena ladder init")
    raw = read_toml(path)
    problem = shape_problem(raw)
    if problem is not None:
        raise ConfigError(f"{path}: {problem}")
    try:
        return LadderConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}:\n{describe(exc)}") from None


# Written active: what an organiser of a contest sets first. The rest is written commented out,
# at its default, so the organiser finds every limit in the file.
_SUBMISSIONS_SET = ("archive_mb", "per_author_per_hour", "validation_games")


def _toml_lines(model: type[BaseModel], active: tuple[str, ...] = ()) -> list[str]:
    lines = []
    for name, info in model.model_fields.items():
        if isinstance(info.default, BaseModel) or info.default_factory is not None:
            continue  # a table of its own
        setting = f"{name} = {json.dumps(info.default)}"
        mark = "" if name in active else "# "
        lines.append(f"{mark}{setting}  # {info.description}")
    return lines


def _submissions_section() -> str:
    """[submissions] and [submissions.build] at their defaults (docs/contest.md)."""
    lines = [
        "# Each key commented out is at its default: uncomment it to change it.",
        '[submissions]  # uploaded versions (docs/contest.md, "Submitting a bot")',
    ]
    lines += _toml_lines(Submissions, _SUBMISSIONS_SET)
    lines += ["", "[submissions.build]  # each build, in bubblewrap whatever the tier"]
    lines += _toml_lines(BuildLimits)
    return "\n".join(lines) + "\n"


def _webhooks_section() -> str:
    """[webhooks] at its defaults, every key commented out (docs/ladder.md, "Webhooks")."""
    lines = ['[webhooks]  # delivery of the ladder\'s events (docs/ladder.md, "Webhooks")']
    return "\n".join(lines + _toml_lines(Webhooks)) + "\n"


def _challenges_section() -> str:
    """[challenges] at its defaults (docs/ladder.md, "Challenges")."""
    lines = ['[challenges]  # unrated games authors ask for (docs/ladder.md, "Challenges")']
    lines += _toml_lines(Challenges, ("games_per_hour", "games_per_day", "share"))
    return "\n".join(lines) + "\n"


def write_new_ladder(folder: Path, game: str, seats: int, listen: str) -> LadderConfig:
    """The first ladder.toml of a folder, with fresh tokens, readable by its owner only."""
    text = f"""# A live ladder: `arena ladder serve {folder}` runs it. See docs/ladder.md.
name = {json.dumps(folder.name)}
game = {json.dumps(game)}

[options]

[table]
seats = {seats}
deals = 1

[time_control]
decision_ms = 1000
time_bank_ms = 5000

[matchmaking]
provisional_matches = 10

[health]
window = 10
max_failures = 4

[authors]  # docs/ladder.md, "Authors"
registration = "closed"  # "invite": authors register over HTTP with an invite token
bots_per_author = 1

{_submissions_section()}
{_challenges_section()}

{_webhooks_section()}

# [contest]  # the contest's end (docs/contest.md, "The contest's end")
# freeze_at = 2026-12-01T18:00:00Z  # no author submits from then on (or `arena ladder freeze`)
# release = "public"  # after the freeze: "hidden", "participants" or "public"

[sandbox]  # each bot alone: no network, none of the ladder's files (docs/sandbox.md)
tier = "bubblewrap"

[run]
concurrency = 2
executor = "local"
listen = {json.dumps(listen)}
disk_reserve_mb = {DISK_RESERVE_MB}  # under this much free space (MB) no match starts

[web]
address = "127.0.0.1:8061"

[tokens]  # keep secret: operator actions over HTTP, and remote bots' registration
operator = "{secrets.token_urlsafe(32)}"
ladder = "{secrets.token_urlsafe(32)}"
"""
    try:  # refuses a game it cannot play at that many seats
        config = LadderConfig.model_validate(tomllib.loads(text))
    except ValidationError as exc:
        why = describe(exc)
        raise ConfigError(f"cannot start a ladder of {game} at {seats} seats:\n{why}") from None
    path = folder / LADDER_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    return config
