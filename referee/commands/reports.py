"""What the referee's commands report, as pydantic models: the one schema of their --json
documents, which their text output is printed from too (referee/commands/jsonshape.py puts
each in its command's help). A bot check's and a replay walk's models are their own modules'
(referee/hosting/conformance.py, referee/replays/walk.py): those commands print them as they are."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from referee.matches.seat_times import SeatTimes


class _Report(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- arena games -------------------------------------------------------------------------------


class GameInfo(_Report):
    name: str = Field(description="what `arena play` takes")
    title: str
    seats: list[int] = Field(description="the seat counts it is played at")
    rules_version: str


class GamesReport(_Report):
    games: list[GameInfo]


# --- arena play --------------------------------------------------------------------------------


class SeatOutcome(_Report):
    seat: int
    bot: str
    rank: int = Field(description="0 is first; seats that tie share a rank")
    score: float
    forfeit: str | None = Field(description="the misbehaviour it forfeited for, if it did")
    substituted: int = Field(description="decisions the referee played for it (misbehaviour)")
    time: SeatTimes = Field(description="its decisions' times, wall clock and CPU")


class MatchReport(_Report):
    number: int = Field(description="1 for the first match of the series")
    match_id: str
    reason: str = Field(description="how the match ended, in words")
    seats: list[SeatOutcome]
    replay: str | None = Field(description="its replay file; null when it could not be written")


class BotTotals(_Report):
    bot: str
    spec: str
    played: int
    wins: int
    draws: int
    losses: int
    score: float
    forfeits: int = Field(description="matches it forfeited")
    substituted: int = Field(description="decisions the referee played for it, all matches")
    time: SeatTimes = Field(description="its decisions' times over all its matches")
    logs: list[str] = Field(description="its processes' log files")


class PlayReport(_Report):
    game: str
    complete: bool = Field(description="false when the series was stopped (Ctrl-C, SIGTERM)")
    planned: int = Field(description="matches the series was to play")
    matches: list[MatchReport]
    bots: list[BotTotals]
    replays: str = Field(description="the replay folder")


# --- arena replay verify ---------------------------------------------------------------------


class VerifiedFile(_Report):
    file: str
    ok: bool
    steps: int | None = Field(description="steps re-simulated, when ok")
    error: str | None = Field(description="the first divergence, when not ok")


class VerifyReport(_Report):
    ok: bool = Field(description="every file verified (the exit code is 0)")
    files: list[VerifiedFile]
