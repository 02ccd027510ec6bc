"""Who sees what of a tournament's results under its release (tournaments/contest.py's Release):
the operator and, once the results are public, everyone sees all; under participants an author
sees the standings rows and the matches of their own bots, and nothing of anyone else's; anyone
else sees that the tournament exists and how far it has got, never a result.

An author is whoever holds the token whose sha256 an entrant of the final carries (entrants.json,
as the ladder stores it). The token is checked against every entrant's hash in constant time,
whatever it is, so the time an answer takes tells nothing of where a hash matched."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import TypeVar

from tournaments.contest import Entrants, Release
from tournaments.ladder.authors import hashed
from tournaments.standings import StandingsReport

T = TypeVar("T")
HIDDEN = "results are hidden until the organiser releases them"


class ResultsHidden(Exception):
    """What was asked for is a result its asker may not see now."""

    def __init__(self, message: str = HIDDEN) -> None:
        super().__init__(message)


class WrongToken(Exception):
    """A token that is no entrant's."""


@dataclass(frozen=True)
class Audience:
    """What one asker may see under `release`: everything, or the results of `bots` alone
    (none: no result)."""

    release: Release
    everything: bool
    bots: frozenset[str] = frozenset()

    def check_results(self) -> None:
        """ResultsHidden unless the asker sees some result."""
        if not self.everything and not self.bots:
            raise ResultsHidden

    @property
    def only(self) -> frozenset[str] | None:
        """The bots whose results are shown: None for every bot."""
        return None if self.everything else self.bots


def audience(release: Release, operator: bool, own_bots: frozenset[str]) -> Audience:
    """What the operator (or not), holding the token of an author of own_bots (or none), sees."""
    if operator or release is Release.PUBLIC:
        return Audience(release, everything=True)
    if release is Release.PARTICIPANTS:
        return Audience(release, everything=False, bots=own_bots)
    return Audience(release, everything=False)


def bots_of(entrants: Entrants | None, token: str) -> frozenset[str]:
    """The bots the holder of token entered; WrongToken when they entered none."""
    given = hashed(token).encode()
    found = set()
    for entrant in entrants.entrants if entrants is not None else ():
        # Every hash compared, no early exit: the time does not tell where a match was.
        if entrant.token_sha256 is not None and hmac.compare_digest(
            given, entrant.token_sha256.encode()
        ):
            found.add(entrant.bot)
    if not found:
        raise WrongToken("the author token is no entrant's of this tournament")
    return frozenset(found)


def own_standings(report: StandingsReport, bots: frozenset[str]) -> StandingsReport:
    """The report cut to the rows of `bots`: their places, records and ratings, their own rows
    of the cross table and of the likelihoods of superiority; no bracket and no SPRT verdict,
    which are everyone's."""
    return report.model_copy(
        update={
            "standings": [row for row in report.standings if row.bot in bots],
            "elo": None if report.elo is None else [e for e in report.elo if e.bot in bots],
            "los": _own_rows(report.los, bots),
            "crosstable": _own_rows(report.crosstable, bots),
            "sprt": None,
            "bracket": None,
        }
    )


def _own_rows(table: dict[str, T] | None, bots: frozenset[str]) -> dict[str, T] | None:
    return None if table is None else {bot: row for bot, row in table.items() if bot in bots}
