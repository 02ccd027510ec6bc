"""What an author reads of their own (author_reads.py): the JSON of /api/me and its routes, and
of `arena author status | matches`. Nothing here is public: each answer is one author's."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tournaments.read_models.ladder_models import SeatInfo


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class MyVersion(_Model):
    version: str = Field(description="NAME@N")
    added_at: str
    mu: float
    sigma: float
    matches: int = Field(description="rated matches")
    current: bool = Field(description="the version that plays now")
    status: str = Field(description="building, validating, live or failed (ladder/vetting.py)")
    reason: str | None = Field(description="why it failed, in plain words; null otherwise")


class MyBot(_Model):
    name: str
    status: str = Field(description="active, paused or retired")
    reason: str = Field(description="why it is paused or retired")
    remote: bool
    connected: bool
    versions: list[MyVersion]


class Against(_Model):
    """One of the author's bots against one opponent bot, over the matches whose deals have
    ended: at a table of more seats, each opponent apart (a better rank is a win)."""

    bot: str = Field(description="the author's bot")
    opponent: str = Field(description="the opponent bot")
    opponent_author: str
    wins: int
    draws: int
    losses: int


class Me(_Model):
    author: str
    team: str | None
    bots: list[MyBot]
    record: list[Against] = Field(description="W-D-L against each opponent, most met first")


class MyMatch(_Model):
    match_id: str
    deal: str
    finished_at: str
    seats: list[SeatInfo] = Field(description="every seat; ranks withheld while the deal plays")
    mine: list[int] = Field(description="the seats of the author's bots")
    files: list[str] = Field(
        description="in each of those seats (as mine), its version's files' SHA-256, the name "
        "the upload is stored under, as the replay records it; '' for a bot not uploaded"
    )
    reason: str | None = Field(description="how it ended; withheld while its deal is in play")
    held: str | None = Field(description="why its views, replay and log are not open now")


class MyMatches(_Model):
    total: int = Field(description="the author's finished matches")
    offset: int
    limit: int
    matches: list[MyMatch] = Field(description="the latest first")
