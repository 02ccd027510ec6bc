"""What the referee's commands report, as pydantic models: the one schema of their --json
documents, which their text output is printed from too (referee/console/jsonshape.py puts
each in its command's help)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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
    logs: list[str] = Field(description="its processes' log files")


class PlayReport(_Report):
    game: str
    complete: bool = Field(description="false when the series was stopped (Ctrl-C, SIGTERM)")
    planned: int = Field(description="matches the series was to play")
    matches: list[MatchReport]
    bots: list[BotTotals]
    replays: str = Field(description="the replay folder")


# --- arena bot check ---------------------------------------------------------------------------


class SeatPlayed(_Report):
    seats: int = Field(description="the table's seat count")
    seat: int


class CheckReport(_Report):
    spec: str
    game: str
    games: int
    seats: list[SeatPlayed] = Field(description="every seat it played")
    decisions: int = Field(description="decisions it answered itself")
    median_ms: float | None
    slowest_ms: float | None
    decision_ms: int = Field(description="allowed per decision")
    time_bank_ms: int
    findings: list[str] = Field(description="what it did wrong, one sentence each")
    clean: bool = Field(description="no findings (the exit code is 0)")
    log_tail: list[str] = Field(description="the end of its log, when it did something wrong")


# --- arena replay show / verify ----------------------------------------------------------------

StepKind = Literal["chance", "decision", "event", "forfeit"]


class ShownStep(_Report):
    step: int = Field(description="the game's step the line belongs to")
    frame: int = Field(description="0 before the first decision, N from the Nth decision on")
    kind: StepKind
    text: str = Field(description="the line as the text view prints it")
    seat: int | None = Field(description="who decided or forfeited")
    action: int | None = Field(
        description="a decision's action index (null to a seat that did not decide), a chance "
        "outcome's index"
    )
    label: str | None = Field(description="the action's or chance outcome's label, as action")
    time_ms: float | None = Field(description="the seat's time for a decision")
    substituted_for: str | None = Field(
        description="set when the referee chose for the seat (seen as action is)"
    )
    audience: list[int] | None = Field(description="an event's seats; null for a public one")


class ShownResult(_Report):
    ranks: list[int]
    scores: list[float]
    reason: str


class ReplayView(_Report):
    file: str
    game: str
    match_id: str
    seats: list[str] = Field(description="the bots' names, seat 0 first")
    deal_commitment: str
    shown_as: str = Field(description="referee, public, or seat N")
    steps: list[ShownStep] = Field(description="what the viewer may see, in order")
    result: ShownResult | None = Field(description="null when cut off before the end (--step)")
    table: str = Field(description="the table as the viewer sees it then, as text")
    boards: list[str] | None = Field(
        description="with --boards: the table at the end of each frame, frame 0 first; else null"
    )


class VerifiedFile(_Report):
    file: str
    ok: bool
    steps: int | None = Field(description="steps re-simulated, when ok")
    error: str | None = Field(description="the first divergence, when not ok")


class VerifyReport(_Report):
    ok: bool = Field(description="every file verified (the exit code is 0)")
    files: list[VerifiedFile]
