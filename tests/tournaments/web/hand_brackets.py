"""Brackets built by hand from the read models (tournaments/bracket_models.py), for the pages
that draw them before a knockout tournament fills one: a finished knockout of five bots (byes
for the top three seeds) and a double elimination of four still playing, one of its tables
mid-match with points the read model should never have let through."""

from __future__ import annotations

from tournaments.bracket_models import (
    BracketEntrant,
    BracketRound,
    BracketTable,
    BracketView,
    Side,
    TableStatus,
)

Entrants = list[tuple[str | None, int | None, float | None, bool]]


def table(
    table_id: str,
    side: Side,
    number: int,
    entrants: Entrants,
    status: TableStatus,
    feeds: str | None,
    losers_feed: str | None = None,
) -> BracketTable:
    return BracketTable(
        table_id=table_id,
        side=side,
        round=number,
        entrants=[
            BracketEntrant(bot=bot, seed=seed, points=points, through=through)
            for bot, seed, points, through in entrants
        ],
        status=status,
        decided_by="points" if status == "decided" else None,
        deals=2 if status in ("decided", "playing") else 0,
        matches=[f"{table_id}-m{n}" for n in range(4 if status == "decided" else 0)],
        feeds=feeds,
        losers_feed=losers_feed,
    )


def knockout() -> BracketView:
    """Five bots: seeds 4 and 5 meet, the others wait with byes; alpha wins."""
    first = [
        table("W1-T1", "winners", 1, [("alpha", 1, None, True)], "bye", "W2-T1"),
        table(
            "W1-T2",
            "winners",
            1,
            [("delta", 4, 3.5, True), ("echo", 5, 0.5, False)],
            "decided",
            "W2-T1",
        ),
        table("W1-T3", "winners", 1, [("bravo", 2, None, True)], "bye", "W2-T2"),
        table("W1-T4", "winners", 1, [("charlie", 3, None, True)], "bye", "W2-T2"),
    ]
    semis = [
        table(
            "W2-T1",
            "winners",
            2,
            [("alpha", 1, 3.0, True), ("delta", 4, 1.0, False)],
            "decided",
            "W3-T1",
        ),
        table(
            "W2-T2",
            "winners",
            2,
            [("bravo", 2, 1.5, False), ("charlie", 3, 2.5, True)],
            "decided",
            "W3-T1",
        ),
    ]
    final = [
        table(
            "W3-T1",
            "winners",
            3,
            [("alpha", 1, 2.5, True), ("charlie", 3, 1.5, False)],
            "decided",
            None,
        ),
    ]
    return BracketView(
        format="knockout",
        seats=2,
        through=1,
        rounds=[
            BracketRound(side="winners", round=1, label="Round of 8", tables=first),
            BracketRound(side="winners", round=2, label="Semi-finals", tables=semis),
            BracketRound(side="winners", round=3, label="Final", tables=final),
        ],
        champion="alpha",
        placings=[["alpha"], ["charlie"], ["bravo", "delta"], ["echo"]],
    )


PLAYING_POINTS = 1.75  # a playing table's points so far: shown nowhere


def double_elimination(semi_final_status: TableStatus = "playing") -> BracketView:
    """Four bots; the winners' final is being played (its points so far in the model)."""
    return BracketView(
        format="double-elimination",
        seats=2,
        through=1,
        rounds=[
            BracketRound(
                side="winners",
                round=1,
                label="Winners' round 1",
                tables=[
                    table(
                        "W1-T1",
                        "winners",
                        1,
                        [("alpha", 1, 3.0, True), ("delta", 4, 1.0, False)],
                        "decided",
                        "W2-T1",
                        "L1-T1",
                    ),
                    table(
                        "W1-T2",
                        "winners",
                        1,
                        [("bravo", 2, 1.0, False), ("charlie", 3, 3.0, True)],
                        "decided",
                        "W2-T1",
                        "L1-T1",
                    ),
                ],
            ),
            BracketRound(
                side="winners",
                round=2,
                label="Winners' final",
                tables=[
                    table(
                        "W2-T1",
                        "winners",
                        2,
                        [("alpha", 1, PLAYING_POINTS, False), ("charlie", 3, 0.25, False)],
                        semi_final_status,
                        "GF",
                        "L2-T1",
                    ),
                ],
            ),
            BracketRound(
                side="losers",
                round=1,
                label="Losers' round 1",
                tables=[
                    table(
                        "L1-T1",
                        "losers",
                        1,
                        [("bravo", 2, None, False), ("delta", 4, None, False)],
                        "waiting",
                        "L2-T1",
                    ),
                ],
            ),
            BracketRound(
                side="losers",
                round=2,
                label="Losers' final",
                tables=[
                    table(
                        "L2-T1",
                        "losers",
                        2,
                        [(None, None, None, False), (None, None, None, False)],
                        "waiting",
                        "GF",
                    ),
                ],
            ),
            BracketRound(
                side="grand-final",
                round=1,
                label="Grand final",
                tables=[
                    table(
                        "GF",
                        "grand-final",
                        1,
                        [(None, None, None, False), (None, None, None, False)],
                        "waiting",
                        "GF2",
                    ),
                ],
            ),
            BracketRound(
                side="reset",
                round=1,
                label="Grand final: reset",
                tables=[
                    table(
                        "GF2",
                        "reset",
                        1,
                        [(None, None, None, False), (None, None, None, False)],
                        "waiting",
                        None,
                    ),
                ],
            ),
        ],
        champion=None,
        placings=[],
    )
