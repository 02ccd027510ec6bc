"""Events of Orc Pit Fighting, each with its audience: public, or private to the seats that
may know the card.

Every event is built lazily: what is recorded at the step is a describer and the values it
needs (ints, strings, tuples: never the live table), and its text and wire message are put
together only when someone reads the event. Random playouts and search bots read none.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from functools import partial

from arena.v1 import referee_pb2 as pb

from arena_games import cards
from arena_games.base import Event, event_message
from arena_games.orc_pit_fighting.actions import USE_WORDS, Use
from arena_games.orc_pit_fighting.table import Stance, Table


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
# The zones without an owner in the text.
SHARED_ZONES = frozenset({Zone.DECK, Zone.DISCARD, Zone.PIT})
ONLY = (frozenset([0]), frozenset([1]))
"""The audience of what only one seat may know, by seat."""
BOTH = frozenset([0, 1])

Described = tuple[str, dict[str, object]]
"""An event's text and its OrcPitFightingEvent as a dict of its one field: the Event builds it
in place, cheaper than building the message and copying it in (the referee reads every
event)."""


def _wire(
    step: int, audience: frozenset[int] | None, describe: Callable[..., Described], *args: object
) -> pb.Event:
    text, typed = describe(*args)
    return event_message(step, text, audience, orc_pit_fighting=typed)


def _add(
    table: Table,
    audience: frozenset[int] | None,
    describe: Callable[..., Described],
    *args: object,
) -> None:
    """Record an event whose text and message describe(*args) makes when it is first read.
    (The commonest events, card moves and passes, do the same without this call.)"""
    table.events.append(Event(partial(_wire, table.step, audience, describe, *args), audience))


# -- cards moving ----------------------------------------------------------------------------------
def _place(zone: Zone, seat: int | None) -> str:
    if seat is None or zone in SHARED_ZONES:
        return ZONE_WORDS[zone]
    return f"seat {seat}'s {ZONE_WORDS[zone]}"


def _card_moved(
    card: int | None,
    from_zone: Zone,
    from_seat: int | None,
    to_zone: Zone,
    to_seat: int | None,
    use: Use | None,
    face_down: bool,
) -> Described:
    """card None: the move without the card, for those who may not know it."""
    m: dict[str, object] = {"from_zone": from_zone, "to_zone": to_zone, "face_down": face_down}
    if card is not None:
        m["card"] = cards.to_message(card)
    if from_seat is not None:
        m["from_seat"] = from_seat
    if to_seat is not None:
        m["to_seat"] = to_seat
    if use is not None:
        m["use"] = int(use) + 1
    why = f" ({USE_WORDS[use]})" if use is not None else ""
    route = f"from {_place(from_zone, from_seat)} to {_place(to_zone, to_seat)}{why}"
    what = "a card" if card is None else cards.label(card)
    return f"{what} {route}", {"card_moved": m}


def moved(
    table: Table,
    card: int,
    from_zone: Zone,
    from_seat: int | None,
    to_zone: Zone,
    to_seat: int | None,
    use: Use | None,
    knowers: frozenset[int] | None = None,
    face_down: bool = False,
) -> None:
    """A card moved. knowers None: everyone sees the card. Otherwise the seats in knowers get
    the card and everyone gets the move without it."""
    step, route = table.step, (from_zone, from_seat, to_zone, to_seat, use, face_down)
    if knowers is None:
        seen = partial(_wire, step, None, _card_moved, card, *route)
        table.events.append(Event(seen, None))
        return
    if knowers:
        known = partial(_wire, step, knowers, _card_moved, card, *route)
        table.events.append(Event(known, knowers))
    unseen = partial(_wire, step, None, _card_moved, None, *route)
    table.events.append(Event(unseen, None))


# -- the rest --------------------------------------------------------------------------------------
def _dice(purpose: str, face: int, value: int, seat: int | None) -> Described:
    rolled: dict[str, object] = {"purpose": purpose, "face": face, "value": value}
    who = "a die"
    if seat is not None:
        rolled["seat"] = seat
        who = f"seat {seat}"
    text = f"{who} rolls {face} for {purpose} ({value})"
    return text, {"dice_rolled": rolled}


def dice(table: Table, purpose: str, face: int, value: int, seat: int | None = None) -> None:
    _add(table, None, _dice, purpose, face, value, seat)


def _passed(seat: int, segment: str) -> Described:
    return f"seat {seat} passes ({segment})", {"passed": {"seat": seat, "segment": segment}}


def passed(table: Table, seat: int, segment: str) -> None:
    table.events.append(Event(partial(_wire, table.step, None, _passed, seat, segment), None))


def _segment(name: str) -> Described:
    return f"{name} begins", {"segment_started": {"segment": name}}


def segment(table: Table, name: str) -> None:
    _add(table, None, _segment, name)


def _damage(seat: int, damage_: int) -> Described:
    changed = {"seat": seat, "damage": damage_}
    return f"seat {seat} has {damage_} damage", {"damage_changed": changed}


def damage(table: Table, seat: int) -> None:
    _add(table, None, _damage, seat, table.damage[seat])


def _turn_given(seat: int, how: str) -> Described:
    return f"seat {seat} has the turn ({how})", {"turn_given": {"seat": seat, "how": how}}


def turn_given(table: Table, seat: int, how: str) -> None:
    _add(table, None, _turn_given, seat, how)


def _round_started(round_: int, favorite: int | None) -> Described:
    started: dict[str, object] = {"round": round_}
    text = f"round {round_} begins, no favorite"
    if favorite is not None:
        started["favorite"] = favorite
        text = f"round {round_} begins, seat {favorite} is the favorite"
    return text, {"round_started": started}


def round_started(table: Table) -> None:
    _add(table, None, _round_started, table.round, table.favorite)


def _round_ended(round_: int, reason: str) -> Described:
    return f"round {round_} ends: {reason}", {"round_ended": {"round": round_, "reason": reason}}


def round_ended(table: Table, reason: str) -> None:
    _add(table, None, _round_ended, table.round, reason)


def _reshuffled(source: Zone, count: int) -> Described:
    text = f"{count} cards from {ZONE_WORDS[source]} become the deck"
    return text, {"reshuffled": {"source": source, "cards": count}}


def reshuffled(table: Table, source: Zone, count: int) -> None:
    _add(table, None, _reshuffled, source, count)


def _stance_declared(seat: int, stance: Stance) -> Described:
    text = f"seat {seat}: {stance.name.lower()}"
    return text, {"stance_declared": {"seat": seat, "stance": stance}}


def stance_declared(table: Table, seat: int, stance: Stance) -> None:
    _add(table, None, _stance_declared, seat, stance)


def _combat_resolved(
    rolls: tuple[int, int],
    bonus: tuple[int, int],
    values: tuple[int, int],
    winner: int | None,
) -> Described:
    totals = [rolls[s] + bonus[s] for s in (0, 1)]
    resolved: dict[str, object] = {"rolls": rolls, "bonus": bonus, "combat_values": values}
    text = f"totals {totals[0]}-{totals[1]}: a draw"
    if winner is not None:
        resolved["winner"] = winner
        text = f"totals {totals[0]}-{totals[1]}: seat {winner} wins the combat"
    return text, {"combat_resolved": resolved}


def combat_resolved(
    table: Table,
    rolls: tuple[int, int],
    bonus: tuple[int, int],
    values: tuple[int, int],
    winner: int | None,
) -> None:
    _add(table, None, _combat_resolved, rolls, bonus, values, winner)


def _face_down_chosen(seat: int, card: int) -> Described:
    chosen = {"seat": seat, "card": cards.to_message(card)}
    text = f"seat {seat} puts {cards.label(card)} face down"
    return text, {"cards_revealed": {"cards": [chosen], "outcome": "chosen"}}


def face_down_chosen(table: Table, seat: int, card: int) -> None:
    """The Draw-procedure choice: only its owner sees it."""
    _add(table, frozenset([seat]), _face_down_chosen, seat, card)


def _turned_up(shown: tuple[int | None, int | None], outcome: str) -> Described:
    reveals: list[dict[str, object]] = [{"seat": s} for s in (0, 1)]
    for seat, card in enumerate(shown):
        if card is not None:
            reveals[seat]["card"] = cards.to_message(card)
    words = ["nothing" if c is None else cards.label(c) for c in shown]
    text = f"turned up: {words[0]} and {words[1]}: {outcome}"
    return text, {"cards_revealed": {"cards": reveals, "outcome": outcome}}


def turned_up(table: Table, shown: tuple[int | None, int | None], outcome: str) -> None:
    _add(table, None, _turned_up, shown, outcome)
