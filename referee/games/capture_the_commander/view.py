"""What seats see: the observation message, events with their audience, and a text picture.

Every seat sees the same table: nobody knows a card that was never revealed, its owner
included. The only thing private to a seat is its own pending war choice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.v1 import capture_the_commander_pb2 as ctcpb
from arena.v1 import referee_pb2 as pb

from referee.games import cards
from referee.games.base import Event, make_event
from referee.games.capture_the_commander.formation import DECISION_CAP, EMPTY, SLOTS, cover_state

if TYPE_CHECKING:
    from referee.games.capture_the_commander.state import CaptureTheCommanderState

EventMessage = (
    ctcpb.CaptureTheCommanderDealStarted
    | ctcpb.CaptureTheCommanderCardDealt
    | ctcpb.CaptureTheCommanderAttackDeclared
    | ctcpb.CaptureTheCommanderCardRevealed
    | ctcpb.CaptureTheCommanderWarDeclared
    | ctcpb.CaptureTheCommanderWarChoiceMade
    | ctcpb.CaptureTheCommanderBattleWon
    | ctcpb.CaptureTheCommanderCommanderCaptured
    | ctcpb.CaptureTheCommanderGiftGiven
    | ctcpb.CaptureTheCommanderDealEnded
    | ctcpb.CaptureTheCommanderWarDrawn
)

_EVENT_FIELDS: dict[type, str] = {
    ctcpb.CaptureTheCommanderDealStarted: "deal_started",
    ctcpb.CaptureTheCommanderCardDealt: "card_dealt",
    ctcpb.CaptureTheCommanderAttackDeclared: "attack_declared",
    ctcpb.CaptureTheCommanderCardRevealed: "card_revealed",
    ctcpb.CaptureTheCommanderWarDeclared: "war_declared",
    ctcpb.CaptureTheCommanderWarChoiceMade: "war_choice_made",
    ctcpb.CaptureTheCommanderBattleWon: "battle_won",
    ctcpb.CaptureTheCommanderCommanderCaptured: "commander_captured",
    ctcpb.CaptureTheCommanderGiftGiven: "gift_given",
    ctcpb.CaptureTheCommanderDealEnded: "deal_ended",
    ctcpb.CaptureTheCommanderWarDrawn: "war_drawn",
}

Slot = ctcpb.CaptureTheCommanderSlot
EMPTY_SLOT = ctcpb.CAPTURE_THE_COMMANDER_SLOT_STATE_EMPTY
HIDDEN_SLOT = ctcpb.CAPTURE_THE_COMMANDER_SLOT_STATE_HIDDEN
KNOWN_SLOT = ctcpb.CAPTURE_THE_COMMANDER_SLOT_STATE_KNOWN
FACE_UP_SLOT = ctcpb.CAPTURE_THE_COMMANDER_SLOT_STATE_FACE_UP


def event(
    step: int, text: str, message: EventMessage, audience: frozenset[int] | None = None
) -> Event:
    """audience None: everyone; a set of seats: only them; frozenset(): the referee only."""
    typed = ctcpb.CaptureTheCommanderEvent(**{_EVENT_FIELDS[type(message)]: message})  # type: ignore[arg-type]
    return make_event(step, text, audience, capture_the_commander=typed)


def slot_message(state: CaptureTheCommanderState, seat: int, slot: int) -> Slot:
    formation = state.formations[seat]
    card = formation[slot]
    if card == EMPTY:
        return Slot(number=slot, state=EMPTY_SLOT)
    battle = state.battle
    face_up = battle is not None and seat in (battle.attacker, battle.defender)
    if face_up and battle is not None and slot in battle.slots_of(seat):
        shown = FACE_UP_SLOT
    else:
        shown = KNOWN_SLOT if state.known[seat][slot] else HIDDEN_SLOT
    message = Slot(number=slot, state=shown, cover=cover_state(formation, slot))  # type: ignore[arg-type]
    if shown != HIDDEN_SLOT:
        message.card.CopyFrom(cards.to_message(card))
    return message


def formation_message(
    state: CaptureTheCommanderState, seat: int
) -> ctcpb.CaptureTheCommanderFormation:
    return ctcpb.CaptureTheCommanderFormation(
        seat=seat,
        in_game=state.in_game[seat],
        team=seat % 2 if state.options.teams else 0,
        slots=[slot_message(state, seat, s) for s in SLOTS],
        removed=[cards.to_message(c) for c in state.removed[seat]],
        left_unseen=len(state.unseen_out[seat]),
        cards_in_play=state.cards_in_play(seat),
    )


def battle_message(state: CaptureTheCommanderState) -> ctcpb.CaptureTheCommanderBattle | None:
    battle = state.battle
    if battle is None:
        return None
    return ctcpb.CaptureTheCommanderBattle(
        attacker=battle.attacker,
        defender=battle.defender,
        attacker_slots=battle.attacker_slots,
        defender_slots=battle.defender_slots,
        wars=battle.wars,
        waiting=battle.waiting,
    )


def observation(state: CaptureTheCommanderState, seat: int | None) -> pb.Observation:
    options = state.options
    message = ctcpb.CaptureTheCommanderObservation(
        current_seat=state.current,
        formations=[formation_message(state, s) for s in range(state.num_seats)],
        battle=battle_message(state),
        scores=state.scores,
        target_score=options.target or 0,
        deal=state.deal,
        first_seat=state.first_seat,
        teams=options.teams,
        twos_beat_aces=options.twos_beat_aces,
        one_suit_each=options.one_suit_each,
        out_order=state.out_order,
        decisions=state.decisions,
        decision_cap=DECISION_CAP,
        unused_cards=52 - 13 * state.num_seats,
    )
    if seat is not None:
        message.seat = seat
        if state.battle is not None and seat in state.battle.choices:
            message.own_war_choice = state.battle.choices[seat]
    return pb.Observation(capture_the_commander=message)


# -- text -------------------------------------------------------------------------------------
ROWS = ((0, (1, 2, 3, 4)), (2, (5, 6, 7)), (2, (8, 9, 10)), (4, (11, 12)), (6, (13,)))
"""Indent and slots of each row of the formation, farthest from its owner first."""


def _cell(slot: Slot) -> str:
    if slot.state == EMPTY_SLOT:
        return " .. "
    if slot.state == HIDDEN_SLOT:
        return " ## "
    text = cards.label(cards.from_message(slot.card))
    return f"[{text}]" if slot.state == FACE_UP_SLOT else f" {text} "


def render_formation(formation: ctcpb.CaptureTheCommanderFormation) -> list[str]:
    status = "in" if formation.in_game else "out"
    removed = " ".join(cards.label(cards.from_message(c)) for c in formation.removed)
    lines = [f"seat {formation.seat} ({status}, {formation.cards_in_play} cards)"]
    for indent, slots in ROWS:
        lines.append("  " + " " * indent + "".join(_cell(formation.slots[s - 1]) for s in slots))
    lines.append(f"  removed: {removed or '-'}  left unseen: {formation.left_unseen}")
    return lines


def render(obs: ctcpb.CaptureTheCommanderObservation) -> str:
    """The table as text: each formation with slot 1..4 on top and the commander at the bottom;
    ## is a card nobody knows, [Qh] a card face up in the battle under way."""
    lines = [f"Capture the Commander  deal {obs.deal}  turn: seat {obs.current_seat}"]
    if obs.target_score:
        scores = ", ".join(f"seat {s}: {p}" for s, p in enumerate(obs.scores))
        lines.append(f"  scores ({obs.target_score} to win): {scores}")
    for formation in obs.formations:
        lines += render_formation(formation)
    if obs.HasField("battle"):
        b = obs.battle
        waiting = ", ".join(str(s) for s in b.waiting)
        lines.append(
            f"  war: seat {b.attacker} {list(b.attacker_slots)} vs seat {b.defender} "
            f"{list(b.defender_slots)}; waiting for seat {waiting}"
        )
    if obs.HasField("own_war_choice"):
        lines.append(f"  you chose to flip slot {obs.own_war_choice}")
    return "\n".join(lines)
