"""What the tournament's read model (tournament_reads.py) answers with: these models are the
schema of the tournament web server's JSON (FastAPI publishes them at /api/openapi.json) and the
data its pages are drawn from. The standings' models are tournaments.standings', the one
computation the command line prints too."""

from __future__ import annotations

from typing import Literal

from arena_games.match_settings import Misbehaviour
from pydantic import BaseModel, ConfigDict, Field, field_validator

from tournaments.contest import Release

Outcome = Literal["win", "draw", "loss"]
ResultFilter = Literal["win", "draw", "loss", "playing"]
CauseFilter = Misbehaviour | Literal["any"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Progress(_Frozen):
    """What the live updates watch: any change to it is a change of the page."""

    scheduled: int = Field(description="matches scheduled so far")
    finished: int = Field(description="matches finished")
    state: str = Field(description="the state saved by the runner: running, finished, ...")
    runner_alive: bool = Field(description="a runner holds the folder's lock now")


class TournamentInfo(_Frozen):
    name: str
    game: str
    title: str = Field(description="the game's title")
    format: str
    seats: int
    bots: list[str]
    state: str = Field(
        description="as `arena tournament standings` says it, checked against the runner's lock"
    )
    runner: str | None = Field(description="'pid N on HOST' of the runner that holds or held it")
    progress: Progress
    viewpoints: list[str] = Field(
        description="the viewpoints this server shows a match's replay as: public, or also "
        "referee and every seat (`arena web --as referee`)"
    )
    release: Release = Field(
        description="who sees the results now: hidden (the operator alone), participants "
        "(each author their own bots') or public (`arena tournament release`)"
    )


class Forfeit(_Frozen):
    seat: int
    bot: str
    cause: str = Field(description="a misbehaviour: illegal_action, timeout, crash, ...")
    detail: str


class SeatResult(_Frozen):
    seat: int
    bot: str
    rank: int | None = Field(description="0 is first; null while the match plays")
    score: float | None
    outcome: Outcome | None


class MatchSummary(_Frozen):
    match_id: str
    round: int = Field(description="the Swiss round; 0 in the formats without rounds")
    deal: str = Field(description="the seatings of one duplicate deal share it")
    status: Literal["playing", "finished"]
    seats: list[SeatResult]
    reason: str | None = Field(description="how it ended; withheld while its deal is in play")
    forfeits: list[Forfeit]
    decisions: int | None
    seconds: float | None = Field(description="how long it took to play")
    finished_at: str | None = Field(description="UTC, ISO 8601")
    viewer: str | None = Field(description="the path of its replay in the viewer, when it opens")
    held: str | None = Field(description="why its replay does not open now")


class MatchList(_Frozen):
    total: int = Field(description="matches that pass the filter")
    offset: int
    limit: int
    matches: list[MatchSummary] = Field(description="the latest scheduled first")


class MatchQuery(BaseModel):
    """The match list's filters: every one given must hold."""

    model_config = ConfigDict(extra="forbid")

    bot: str | None = Field(default=None, description="matches this bot played")
    result: ResultFilter | None = Field(
        default=None,
        description="win, draw or loss: the bot's (needs bot), draw: any draw; playing: "
        "matches not finished",
    )
    cause: CauseFilter | None = Field(
        default=None,
        description="matches with a forfeit of this cause (any: of any cause), by the bot "
        "when one is given",
    )
    offset: int = Field(default=0, ge=0)
    limit: int = Field(default=100, ge=1, le=1000)

    @field_validator("bot", "result", "cause", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """A form's "any" choice sends an empty value."""
        return None if value == "" else value
