"""What the ladder's history reads (history_reads.py) answer with: a bot's rating over its rated
matches, and a pair of bots' meetings. Part of the ladder web server's JSON schema."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tournaments.read_models.ladder_models import MatchSummary

Outcome = Literal["win", "draw", "loss"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class HistoryPoint(_Model):
    rated: int = Field(description="the match's place in the ratings' order (1, 2, ...)")
    finished_at: str
    match_id: str
    version: str = Field(description="NAME@N, the version that played")
    mu: float = Field(description="openskill mu of the version after this match")
    sigma: float
    conservative: float = Field(description="mu - 3 sigma: what orders the leaderboard")
    elo: float | None = Field(
        description="classic incremental Elo after the match (two seats only; K 32, from 1500)"
    )
    version_change: bool = Field(description="the first point of a version after another's")


class BotHistory(_Model):
    bot: str
    points: list[HistoryPoint] = Field(description="one per rated match, in the ratings' order")
    changes: list[str] = Field(description="each version that took over from another, in order")
    opponents: list[str] = Field(description="the bots it met in these matches, by name")
    until: str | None = Field(
        description="the freeze, when the series shown ends there (the release hides the rest)"
    )


class Tally(_Model):
    wins: int = 0
    draws: int = 0
    losses: int = 0


class VersionPairTally(_Model):
    version: str = Field(description="the first bot's version")
    against: str = Field(description="the second bot's version")
    tally: Tally


class PairDay(_Model):
    day: str = Field(description="UTC date, YYYY-MM-DD")
    tally: Tally = Field(description="the day's results, for the first bot")
    total: Tally = Field(description="every result up to and including that day")


class PairMatch(_Model):
    match: MatchSummary
    outcome: Outcome | None = Field(
        description="for the first bot (above the second: win); none while its deal is in "
        "play or once discarded"
    )


class PairPage(_Model):
    bot: str
    against: str
    tally: Tally
    by_versions: list[VersionPairTally]
    by_day: list[PairDay]
    matches: list[PairMatch] = Field(description="their matches together, the latest first")
