"""What a challenger (or the operator) reads of a challenge (challenge_reads.py): the JSON of
/api/challenges and `arena author challenges`. Nothing here is public."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tournaments.read_models.ladder_models import SeatInfo


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class ChallengeMatch(_Model):
    match_id: str
    deal: str
    status: str = Field(description="scheduled, finished or discarded")
    finished_at: str | None
    seats: list[SeatInfo] = Field(description="every seat; ranks withheld while the deal plays")
    mine: list[int] = Field(description="the challenger's seats")
    reason: str | None = Field(description="how it ended; withheld while its deal is in play")
    held: str | None = Field(description="why its view, replay, page and log are not open now")


class ChallengeSummary(_Model):
    id: int
    author: str
    bot: str
    version: str = Field(description="the challenger's version, as live when asked")
    opponents: list[str] = Field(description="the versions it plays, as live when asked")
    games: int = Field(description="matches asked for: whole deals, each in every seating")
    status: str = Field(description="queued, playing, done or stopped")
    reason: str = Field(description="why it stopped")
    asked_at: str
    done_at: str | None
    finished: int = Field(description="its matches finished")
    wins: int = Field(description="of the challenger's seat against each other, deals ended")
    draws: int
    losses: int


class ChallengeList(_Model):
    challenges: list[ChallengeSummary] = Field(description="the latest first")


class ChallengeDetail(_Model):
    challenge: ChallengeSummary
    matches: list[ChallengeMatch]
