"""What Officers' Battle shows: events with their audience, typed actions and the text picture
(the observation is observe.py). Only rank and suit of a card reach the wire (cards.to_message)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

from arena.v1 import cards_pb2
from arena.v1 import officers_battle_pb2 as obpb
from arena.v1 import referee_pb2 as pb

from arena_games import cards
from arena_games.base import event_message
from arena_games.officers_battle import rules
from arena_games.officers_battle.rules import POSITION_LETTERS

EventMessage = (
    obpb.OfficersBattleOfficerPlaced
    | obpb.OfficersBattleReshuffled
    | obpb.OfficersBattleCardDrawn
    | obpb.OfficersBattleDrawPassed
    | obpb.OfficersBattleCardPlayed
    | obpb.OfficersBattleSeriesCard
    | obpb.OfficersBattleOfficerKilled
    | obpb.OfficersBattlePileMoved
    | obpb.OfficersBattleOfficerMoved
    | obpb.OfficersBattleOfficerRemoved
    | obpb.OfficersBattleActionPassed
    | obpb.OfficersBattleBattleEnded
    | obpb.OfficersBattleTurnStarted
)

_EVENT_FIELDS: dict[type[EventMessage], str] = {
    obpb.OfficersBattleOfficerPlaced: "officer_placed",
    obpb.OfficersBattleReshuffled: "reshuffled",
    obpb.OfficersBattleCardDrawn: "card_drawn",
    obpb.OfficersBattleDrawPassed: "draw_passed",
    obpb.OfficersBattleCardPlayed: "card_played",
    obpb.OfficersBattleSeriesCard: "series_card",
    obpb.OfficersBattleOfficerKilled: "officer_killed",
    obpb.OfficersBattlePileMoved: "pile_moved",
    obpb.OfficersBattleOfficerMoved: "officer_moved",
    obpb.OfficersBattleOfficerRemoved: "officer_removed",
    obpb.OfficersBattleActionPassed: "action_passed",
    obpb.OfficersBattleBattleEnded: "battle_ended",
    obpb.OfficersBattleTurnStarted: "turn_started",
}

SLOT_NAMES = {
    obpb.OFFICERS_BATTLE_SLOT_WEST: "West",
    obpb.OFFICERS_BATTLE_SLOT_CENTRE: "Centre",
    obpb.OFFICERS_BATTLE_SLOT_EAST: "East",
    obpb.OFFICERS_BATTLE_SLOT_SUPPORT: "Support",
    obpb.OFFICERS_BATTLE_SLOT_RETREAT_1: "retreat 1",
    obpb.OFFICERS_BATTLE_SLOT_RETREAT_2: "retreat 2",
    obpb.OFFICERS_BATTLE_SLOT_OFFICER_DECK: "the officer deck",
}


def slot_name(slot: int) -> str:
    return SLOT_NAMES[slot]  # type: ignore[index]


# One message per standard card, built once: observations hold dozens of cards and building
# each anew was most of their cost. Protobuf copies them into every field they are put in.
_CARD_MESSAGES = tuple(cards.to_message(c) for c in cards.DECK)


def card(card_id: int) -> cards_pb2.Card:
    return _CARD_MESSAGES[card_id % rules.DECK_SIZE]


def card_list(card_ids: Sequence[int]) -> list[cards_pb2.Card]:
    return [_CARD_MESSAGES[c % rules.DECK_SIZE] for c in card_ids]


# -- events -----------------------------------------------------------------------------------


def officer_placed(seat: int, officer: int, slot: int) -> EventMessage:
    return obpb.OfficersBattleOfficerPlaced(seat=seat, officer=card(officer), slot=slot)  # type: ignore[arg-type]


def reshuffled(seat: int) -> EventMessage:
    return obpb.OfficersBattleReshuffled(seat=seat)


def card_drawn(seat: int, source: int, bonus: bool, drawn: int | None = None) -> EventMessage:
    message = obpb.OfficersBattleCardDrawn(seat=seat, source=source, bonus=bonus)  # type: ignore[arg-type]
    if drawn is not None:
        message.card.CopyFrom(card(drawn))
    return message


def draw_passed(seat: int, bonus: bool) -> EventMessage:
    return obpb.OfficersBattleDrawPassed(seat=seat, bonus=bonus)


def card_played(seat: int, played: int, position: int) -> EventMessage:
    return obpb.OfficersBattleCardPlayed(seat=seat, card=card(played), position=position)


def series_card(seat: int, laid: int, position: int) -> EventMessage:
    return obpb.OfficersBattleSeriesCard(seat=seat, card=card(laid), position=position)


def officer_killed(seat: int, position: int, officer: int, killing: Sequence[int]) -> EventMessage:
    return obpb.OfficersBattleOfficerKilled(
        seat=seat, position=position, officer=card(officer), cards=card_list(killing)
    )


def pile_moved(seat: int, position: int, pile: Sequence[int], to_hand: bool) -> EventMessage:
    return obpb.OfficersBattlePileMoved(
        seat=seat, position=position, cards=card_list(pile), to_hand=to_hand
    )


def officer_moved(seat: int, officer: int, source: int, target: int) -> EventMessage:
    return obpb.OfficersBattleOfficerMoved(
        seat=seat,
        officer=card(officer),
        from_slot=source,  # type: ignore[arg-type]
        to_slot=target,  # type: ignore[arg-type]
    )


def officer_removed(seat: int, officer: int, killer: int, discarded: Sequence[int]) -> EventMessage:
    return obpb.OfficersBattleOfficerRemoved(
        seat=seat, officer=card(officer), card=card(killer), discarded=card_list(discarded)
    )


def action_passed(seat: int) -> EventMessage:
    return obpb.OfficersBattleActionPassed(seat=seat)


def battle_ended(seat: int) -> EventMessage:
    return obpb.OfficersBattleBattleEnded(seat=seat)


def turn_started(seat: int, turn_number: int) -> EventMessage:
    return obpb.OfficersBattleTurnStarted(seat=seat, turn_number=turn_number)


# -- events built when first read ---------------------------------------------------------------
# The state records Event(one of these, audience, step, *values): random playouts and search apply
# thousands of steps whose events nobody reads, and building their text and messages was most
# of a step's cost. The values are ints and tuples the state no longer changes. Each function
# below tells an event (its text, message and audience) from the values; @_event makes it the
# builder of the wire event at a step, and keeps what was told: the referee reads every event,
# and the same ones recur (a seat draws, plays a card at a position).

ONLY = (frozenset([0]), frozenset([1]))
"""The audience of a seat's private events."""

Told = tuple[str, EventMessage, frozenset[int] | None]
Kept = tuple[str, obpb.OfficersBattleEvent, frozenset[int] | None]


@lru_cache(maxsize=4096)
def _kept(tell: Callable[..., Told], *values: object) -> Kept:
    """tell(*values) with its message in the typed event, which is only ever copied into a wire
    event (a constructor copies), never changed."""
    text, message, audience = tell(*values)
    typed = obpb.OfficersBattleEvent(**{_EVENT_FIELDS[type(message)]: message})  # type: ignore[arg-type]
    return text, typed, audience


def _event(tell: Callable[..., Told]) -> Callable[..., pb.Event]:
    """The builder of the event that tell describes, at a step: build(step, *values)."""

    def build(step: int, *values: object) -> pb.Event:
        text, typed, audience = _kept(tell, *values)
        return event_message(step, text, audience, officers_battle=typed)

    return build


@_event
def passed_event(seat: int) -> Told:
    return f"seat {seat} passes", action_passed(seat), None


@_event
def battle_ended_event(seat: int) -> Told:
    return f"seat {seat} ends the battle", battle_ended(seat), None


@_event
def placed_event(seat: int, officer: int, slot: int) -> Told:
    text = f"seat {seat} places {rules.label(officer)} at {slot_name(slot)}"
    return text, officer_placed(seat, officer, slot), None


@_event
def support_placed_event(seat: int, officer: int) -> Told:
    text = f"seat {seat} places {rules.label(officer)} as support"
    message = officer_placed(seat, officer, obpb.OFFICERS_BATTLE_SLOT_SUPPORT)
    return text, message, None


@_event
def reshuffled_event(seat: int) -> Told:
    return f"seat {seat} reshuffles its officers", reshuffled(seat), None


@_event
def turn_started_event(seat: int, turn_number: int) -> Told:
    text = f"turn {turn_number}: seat {seat}"
    return text, turn_started(seat, turn_number), None


@_event
def removed_event(seat: int, officer: int, killer: int, discarded: tuple[int, ...]) -> Told:
    text = f"seat {seat} reforms: {rules.label(officer)} and {rules.label(killer)} out"
    return text, officer_removed(seat, officer, killer, discarded), None


@_event
def moved_event(seat: int, officer: int, source: int, target: int) -> Told:
    text = (
        f"seat {seat} moves {rules.label(officer)} from {slot_name(source)} to {slot_name(target)}"
    )
    return text, officer_moved(seat, officer, source, target), None


@_event
def drawn_privately_event(seat: int, bonus: bool, drawn: int) -> Told:
    text = f"seat {seat} draws {rules.label(drawn)} from its own deck"
    message = card_drawn(seat, obpb.OFFICERS_BATTLE_SOURCE_OWN_DECK, bonus, drawn)
    return text, message, ONLY[seat]


@_event
def drawn_unseen_event(seat: int, bonus: bool) -> Told:
    text = f"seat {seat} draws from its own deck"
    message = card_drawn(seat, obpb.OFFICERS_BATTLE_SOURCE_OWN_DECK, bonus)
    return text, message, None


@_event
def drawn_from_discard_event(seat: int, bonus: bool, drawn: int) -> Told:
    text = f"seat {seat} draws {rules.label(drawn)} from the discard pile"
    message = card_drawn(seat, obpb.OFFICERS_BATTLE_SOURCE_DISCARD_PILE, bonus, drawn)
    return text, message, None


@_event
def no_draw_event(seat: int, bonus: bool) -> Told:
    return f"seat {seat} draws nothing", draw_passed(seat, bonus), None


@_event
def played_event(seat: int, played: int, position: int) -> Told:
    text = f"seat {seat} plays {rules.label(played)} at {rules.POSITION_NAMES[position]}"
    return text, card_played(seat, played, position), None


@_event
def killed_event(seat: int, position: int, officer: int, killing: tuple[int, ...]) -> Told:
    shown = " ".join(rules.label(c) for c in killing)
    text = (
        f"seat {seat} kills {rules.label(officer)} at {rules.POSITION_NAMES[position]} with {shown}"
    )
    return text, officer_killed(seat, position, officer, killing), None


@_event
def series_card_event(seat: int, laid: int, position: int) -> Told:
    text = f"seat {seat} lays {rules.label(laid)} in a series at {rules.POSITION_NAMES[position]}"
    return text, series_card(seat, laid, position), None


@_event
def pile_event(seat: int, position: int, pile: tuple[int, ...], to_hand: bool) -> Told:
    verb = "takes" if to_hand else "discards"
    text = f"seat {seat} {verb} its pile at {rules.POSITION_NAMES[position]} ({len(pile)})"
    return text, pile_moved(seat, position, pile, to_hand), None


# -- typed actions ----------------------------------------------------------------------------


_ACTION_MESSAGES: dict[int, pb.Action] = {}


def action_message(action: int) -> pb.Action:
    """The typed form of an action id (the same in every state: built once, handed out as a
    fresh copy so that no caller can change another's)."""
    built = _ACTION_MESSAGES.get(action)
    if built is None:
        built = _ACTION_MESSAGES[action] = _build_action_message(action)
    copy = pb.Action()
    copy.CopyFrom(built)
    return copy


def _build_action_message(action: int) -> pb.Action:
    kind = rules.action_kind(action)
    typed = obpb.OfficersBattleAction()
    if kind == "draw":
        source = rules.DRAW_DECK if action == rules.DRAW_DECK else rules.DRAW_DISCARD
        typed.draw.source = (
            obpb.OFFICERS_BATTLE_SOURCE_OWN_DECK
            if source == rules.DRAW_DECK
            else obpb.OFFICERS_BATTLE_SOURCE_DISCARD_PILE
        )
    elif kind == "no_draw":
        typed.no_draw.SetInParent()
    elif kind == "pass":
        typed.pass_action.SetInParent()
    elif kind == "end_battle":
        typed.end_battle.SetInParent()
    elif kind == "kill_choice":
        typed.kill_choice.SetInParent()
        typed.kill_choice.take_pile = action == rules.TAKE_PILE
    elif kind == "support":
        typed.new_support.source_slot = (
            obpb.OFFICERS_BATTLE_SLOT_OFFICER_DECK
            if action == rules.SUPPORT_FROM_DECK
            else (obpb.OFFICERS_BATTLE_SLOT_RETREAT_1, obpb.OFFICERS_BATTLE_SLOT_RETREAT_2)[
                action - rules.SUPPORT_FROM_RETREAT
            ]
        )
    elif kind == "retreat":
        position, retreat = divmod(action - rules.RETREAT, rules.RETREATS)
        typed.retreat.position = position
        typed.retreat.retreat = retreat
    elif kind == "finish":
        typed.finish_series.low_rank = action - rules.FINISH_SERIES + rules.SERIES_LOW
    elif kind == "add":
        typed.add_to_series.card.CopyFrom(cards.to_message(action - rules.ADD_TO_SERIES))
    elif kind == "single":
        standard, typed.single.position = rules.card_and_position(action, rules.SINGLE)
        typed.single.card.CopyFrom(cards.to_message(standard))
    elif kind == "start":
        standard, typed.start_series.position = rules.card_and_position(action, rules.START_SERIES)
        typed.start_series.card.CopyFrom(cards.to_message(standard))
    else:
        standard, typed.ace_kill.position = rules.card_and_position(action, rules.ACE_KILL)
        typed.ace_kill.card.CopyFrom(cards.to_message(standard))
    return pb.Action(officers_battle=typed)


# -- text -------------------------------------------------------------------------------------


def _cards_text(items: Iterable[cards_pb2.Card]) -> str:
    return " ".join(cards.label(cards.from_message(c)) for c in items) or "-"


def _officer_text(side: obpb.OfficersBattleFront) -> str:
    return cards.label(cards.from_message(side.officer)) if side.HasField("officer") else "--"


def render(obs: obpb.OfficersBattleObservation) -> str:
    phase = obpb.OfficersBattlePhase.Name(obs.phase).removeprefix("OFFICERS_BATTLE_PHASE_")
    lines = [
        f"Officers' Battle  turn {obs.turn_number}  seat {obs.current_seat} to move  "
        f"phase {phase.lower()}  scores {'-'.join(str(s) for s in obs.scores)}"
    ]
    for side in obs.sides:
        name = "North" if side.seat == 0 else "South"
        support = (
            cards.label(cards.from_message(side.support)) if side.HasField("support") else "--"
        )
        retreats = " | ".join(_cards_text(r.officers) for r in side.retreats)
        lines.append(
            f"  seat {side.seat} ({name}): support {support}  retreated [{retreats}]  "
            f"officer deck {side.officer_deck_size}  deck {side.deck_size}  "
            f"hand {side.hand_size}  living {side.living_officers}"
        )
        for front in side.fronts:
            lines.append(
                f"    {POSITION_LETTERS[front.position]} {_officer_text(front)}"
                f"  pile {_cards_text(front.pile)}"
            )
        if side.HasField("casualty"):
            fallen = side.casualty
            lines.append(
                f"    killed at {POSITION_LETTERS[fallen.position]}: "
                f"{_cards_text([fallen.officer])} under {_cards_text(fallen.cards)}"
            )
        if side.fallen:
            out = ", ".join(
                f"{_cards_text([f.officer])}+{_cards_text([f.card])}" for f in side.fallen
            )
            lines.append(f"    out of the game: {out}")
        if side.known_hand:
            lines.append(f"    known in hand: {_cards_text(side.known_hand)}")
    lines.append(f"  discard pile (top last): {_cards_text(obs.discard_pile)}")
    if obs.turn.HasField("series"):
        lines.append(f"  series in progress: {_cards_text(obs.turn.series.cards)}")
    if obs.HasField("seat"):
        lines.append(f"  seat {obs.seat} holds: {_cards_text(obs.hand)}")
    return "\n".join(lines)
