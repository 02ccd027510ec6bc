"""The terms of a contest's end, shared by the ladder (tournaments/ladder/) and the final it
hands to a tournament: who may see results, and who entered each bot of a final."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Release(StrEnum):
    """Who sees the results (Battlecode's HIDDEN / PARTICIPANTS / RESULTS)."""

    HIDDEN = "hidden"  # the operator alone
    PARTICIPANTS = "participants"  # each author their own bots' results, and the operator
    PUBLIC = "public"  # everyone


class Entrant(BaseModel):
    """A bot of a final and the author who entered it, as the ladder knew them at the freeze."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bot: str = Field(description="the bot's name in the final's tournament file")
    author: str
    team: str | None = None
    token_sha256: str | None = Field(
        description="the author's token's hash, as the ladder keeps it; null for the house's "
        "bots, which no token opens"
    )
    version: str = Field(description="the frozen version's content hash")
    seed: int = Field(ge=1, description="by ladder rating at the freeze; 1 is the top")
    rating: float = Field(description="the ladder's conservative rating at the freeze")


class Entrants(BaseModel):
    """entrants.json in a final's folder: its only schema."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ladder: str = Field(description="the ladder's name")
    frozen_at: str = Field(description="when the ladder froze, ISO 8601 UTC")
    entrants: list[Entrant]
