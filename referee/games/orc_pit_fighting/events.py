"""Events of Orc Pit Fighting, each with its audience: public, or private to the seats that
may know the card."""

from __future__ import annotations

from enum import IntEnum

from arena.v1 import orc_pit_fighting_pb2 as opb

from referee.games import cards
from referee.games.base import make_event
from referee.games.orc_pit_fighting.actions import USE_WORDS, Use, wire_use
from referee.games.orc_pit_fighting.table import Table


class Zone(IntEnum):
    """Piles and places; the values are the wire enum's."""

    DECK = 1
    DISCARD = 2
    HAND = 3
    OUT = 4
    FLAIR = 5
    PIT = 6


ZONE_WORDS = {
    Zone.DECK: "the deck",
    Zone.DISCARD: "the discard pile",
    Zone.HAND: "hand",
    Zone.OUT: "Out pile",
    Zone.FLAIR: "Flair pile",
    Zone.PIT: "the Pit",
}


def emit(table: Table, text: str, audience: frozenset[int] | None = None, **kind: object) -> None:
    typed = opb.OrcPitFightingEvent(**kind)  # type: ignore[arg-type]
    table.events.append(make_event(table.step, text, audience, orc_pit_fighting=typed))


def _place(zone: Zone, seat: int | None) -> str:
    if seat is None or zone in (Zone.DECK, Zone.DISCARD, Zone.PIT):
        return ZONE_WORDS[zone]
    return f"seat {seat}'s {ZONE_WORDS[zone]}"


def moved(
    table: Table,
    card: int,
    source: tuple[Zone, int | None],
    target: tuple[Zone, int | None],
    use: Use | None,
    *,
    knowers: frozenset[int] | None = None,
    face_down: bool = False,
) -> None:
    """A card moved. knowers None: everyone sees the card. Otherwise the seats in knowers get
    the card and everyone gets the move without it."""
    (from_zone, from_seat), (to_zone, to_seat) = source, target
    why = f" ({USE_WORDS[use]})" if use is not None else ""

    def message(with_card: bool) -> opb.OrcPitFightingCardMoved:
        m = opb.OrcPitFightingCardMoved(
            from_zone=opb.OrcPitFightingZone.ValueType(from_zone),
            to_zone=opb.OrcPitFightingZone.ValueType(to_zone),
            face_down=face_down,
        )
        if with_card:
            m.card.CopyFrom(cards.to_message(card))
        if from_seat is not None:
            m.from_seat = from_seat
        if to_seat is not None:
            m.to_seat = to_seat
        if use is not None:
            m.use = wire_use(use)
        return m

    route = f"from {_place(from_zone, from_seat)} to {_place(to_zone, to_seat)}{why}"
    if knowers is None:
        emit(table, f"{cards.label(card)} {route}", card_moved=message(True))
        return
    if knowers:
        emit(table, f"{cards.label(card)} {route}", knowers, card_moved=message(True))
    emit(table, f"a card {route}", card_moved=message(False))


def dice(table: Table, purpose: str, face: int, value: int, seat: int | None = None) -> None:
    rolled = opb.OrcPitFightingDiceRolled(purpose=purpose, face=face, value=value)
    who = "a die"
    if seat is not None:
        rolled.seat = seat
        who = f"seat {seat}"
    emit(table, f"{who} rolls {face} for {purpose} ({value})", dice_rolled=rolled)


def passed(table: Table, seat: int, segment: str) -> None:
    emit(
        table,
        f"seat {seat} passes ({segment})",
        passed=opb.OrcPitFightingPassed(seat=seat, segment=segment),
    )


def segment(table: Table, name: str) -> None:
    emit(table, f"{name} begins", segment_started=opb.OrcPitFightingSegmentStarted(segment=name))


def damage(table: Table, seat: int) -> None:
    changed = opb.OrcPitFightingDamageChanged(seat=seat, damage=table.damage[seat])
    emit(table, f"seat {seat} has {table.damage[seat]} damage", damage_changed=changed)


def turn_given(table: Table, seat: int, how: str) -> None:
    emit(
        table,
        f"seat {seat} has the turn ({how})",
        turn_given=opb.OrcPitFightingTurnGiven(seat=seat, how=how),
    )
