"""A knockout or double-elimination bracket as its readers show it: `arena tournament standings`
(text and --json), the tournament's web page (drawn as a bracket) and an exported site. The
knockout schedule (tournaments/schedule.py) is the one computation that fills these models; a
table's results count here only once every seating of each of its deals has ended, as
everywhere else (tournament_reads.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Side = Literal["winners", "losers", "grand-final", "reset"]
TableStatus = Literal["waiting", "bye", "playing", "decided"]
Decider = Literal["points", "tie-break deals", "seed"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class BracketEntrant(_Frozen):
    bot: str | None = Field(description="null: not known yet (the winner of an earlier table)")
    seed: int | None = Field(description="1 is the top seed")
    points: float | None = Field(description="the mini-match's points so far; null before play")
    through: bool = Field(description="goes on to the next round (or wins the bracket)")


class BracketTable(_Frozen):
    table_id: str = Field(description="as in the match ids of its games: W1-T3, L2-T1, GF, GF2")
    side: Side
    round: int = Field(description="1 is the side's first round")
    entrants: list[BracketEntrant] = Field(description="in seed order")
    status: TableStatus
    decided_by: Decider | None = Field(description="how the table was decided, once it is")
    deals: int = Field(description="deals played so far, tie-break deals included")
    matches: list[str] = Field(description="the ids of its matches, in the order played")
    feeds: str | None = Field(description="the table its winners go to; null for the last")
    losers_feed: str | None = Field(
        default=None, description="double elimination: the losers' table its losers drop to"
    )


class BracketRound(_Frozen):
    side: Side
    round: int
    label: str = Field(description="e.g. Final, Semi-finals, Quarter-finals, Losers' round 2")
    tables: list[BracketTable]


class BracketView(_Frozen):
    format: Literal["knockout", "double-elimination"]
    seats: int
    through: int = Field(description="how many of a table's bots go through")
    rounds: list[BracketRound] = Field(description="winners' side first, then losers', finals")
    champion: str | None = Field(description="null until the bracket is decided")
    placings: list[list[str]] = Field(
        description="from the champion down; bots out in the same round share a place"
    )
