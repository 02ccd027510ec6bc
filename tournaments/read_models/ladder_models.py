"""What the ladder's read model (ladder_reads.py) answers with: these models are the one schema
of the ladder web server's JSON (FastAPI publishes them at /api/openapi.json) and the data its
pages are drawn from."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from referee.matches.seat_times import TIMES_DESCRIPTION, SeatTimes
from tournaments.audit_log import AuditEntry


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class LeaderboardRow(_Model):
    rank: int
    bot: str
    author: str = Field(description="who entered it: an author's name, or 'house' (the operator)")
    team: str | None = Field(description="its author's team, if any")
    version: str  # NAME@N, the version that plays now
    status: str  # active, paused, retired
    remote: bool
    connected: bool
    provisional: bool
    mu: float
    sigma: float
    low: float  # mu - 1.96 sigma: openskill's 95% interval
    high: float
    conservative: float  # mu - 3 sigma: the order of the board
    matches: int
    elo: float | None  # Bradley-Terry Elo of the version, two-seat ladders only
    elo_error95: float | None
    score_against: float | None  # points per meeting against the selected bot's version
    meetings_against: int
    time: SeatTimes = Field(
        default_factory=SeatTimes,
        description=f"{TIMES_DESCRIPTION}, over its version's rated matches (none after a "
        "freeze until the results are out)",
    )


class SeatInfo(_Model):
    version: str
    rank: int | None = Field(description="0 is first; withheld while its deal is in play")
    forfeit: str | None = Field(
        description="its cause, when this seat forfeited; withheld while its deal is in play"
    )


class MatchSummary(_Model):
    match_id: str
    deal: str = Field(description="the seatings of one duplicate deal share it")
    finished_at: str
    seats: list[SeatInfo]
    reason: str | None = Field(description="how it ended; withheld while its deal is in play")
    viewer: str | None = Field(description="its path in the replay viewer, once it may open")
    held: str | None = Field(description="why its replay does not open now")


class ForfeitInfo(_Model):
    match_id: str
    version: str
    cause: str
    detail: str
    finished_at: str


class VersionInfo(_Model):
    version: str
    added_at: str
    mu: float
    sigma: float
    matches: int
    current: bool


class BotPage(_Model):
    name: str
    author: str = Field(description="who entered it: an author's name, or 'house' (the operator)")
    team: str | None = Field(description="its author's team, if any")
    status: str
    reason: str
    remote: bool
    connected: bool
    versions: list[VersionInfo]
    recent_matches: list[MatchSummary]
    forfeits: list[ForfeitInfo] = Field(description="none of a match whose deal is in play")


class LadderProgress(_Model):
    """What the live updates watch: any change to it is a change of the pages."""

    scheduled: int = Field(description="matches scheduled and not finished yet")
    finished: int
    serving: bool = Field(description="a serve holds the folder now")
    roster: str = Field(description="a digest of the bots' statuses, connections and versions")


class DiskSpace(_Model):
    free_mb: float = Field(description="free space on the disk of the ladder's folder")
    reserve_mb: float = Field(description="run.disk_reserve_mb: under it no match starts")


class LadderState(_Model):
    name: str
    game: str
    title: str = Field(description="the game's title")
    seats: int
    serving: bool  # a serve holds the folder now
    referee_address: str | None
    progress: LadderProgress
    disk: DiskSpace
    waiting: str | None = Field(description="why serve starts no match now; None while it may")
    frozen_at: str | None = Field(
        default=None, description="when the ladder froze (ISO 8601 UTC); None before the freeze"
    )
    release: str | None = Field(
        default=None,
        description="after the freeze: hidden, participants or public (who sees what came since)",
    )


class RemoteTicket(_Model):
    bot: str
    version: str
    address: str  # ARENA_ADDRESS
    token: str  # ARENA_TOKEN: the bot's own secret


class AuthorTicket(_Model):
    author: str
    team: str | None
    token: str = Field(description="the author's token, shown this once: keep it secret")


class Submitted(_Model):
    version: str = Field(description="NAME@N: the uploaded version's key")
    status: str = Field(description="building, validating, live or failed (building at first)")
    content_hash: str = Field(description="its files' SHA-256 (docs/contest.md): its name")
    fresh: bool = Field(description="false when the ladder held these very files already")


class AuthorInfo(_Model):
    name: str
    team: str | None
    token: bool = Field(description="a token of theirs works now (not revoked; never the house)")
    created_at: str
    rotated_at: str | None
    revoked_at: str | None
    bots: list[str] = Field(description="their bots' names")
    active: int = Field(description="their bots active now")


class AuthorList(_Model):
    authors: list[AuthorInfo]


class BotStatus(_Model):
    name: str
    status: str  # active, paused, retired
    reason: str


class Added(_Model):
    version: str
    remote: RemoteTicket | None = Field(description="what a remote bot connects with, once")


class SeatOutput(_Model):
    seat: int
    version: str
    output: str = Field(description="what the bot wrote in this match (its end, when long)")
    bytes: int = Field(description="the size of its log of this match")
    whole: bool = Field(description="output holds all of the log, not only its end")


class MatchOutput(_Model):
    match_id: str
    seats: list[SeatOutput]


class AuditLog(_Model):
    """The ladder's audit log (tournaments/audit_log.py), oldest first: the operator's."""

    entries: list[AuditEntry]
