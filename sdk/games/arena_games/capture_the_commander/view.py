"""What seats see: the observation message, events with their audience, and a text picture;
and what only the referee sees (the replay viewer's referee picture).

Every seat sees the same table: nobody knows a card that was never revealed, its owner
included. The only thing private to a seat is its own pending war choice.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING

from arena.v1 import capture_the_commander_pb2 as ctcpb
from arena.v1 import referee_pb2 as pb

from arena_games import cards
from arena_games.base import event_message
from arena_games.capture_the_commander.formation import (
    COVER_BITS,
    COVERED,
    DECISION_CAP,
    EMPTY,
    FULLY_UNCOVERED,
    PARTIALLY_UNCOVERED,
    SLOTS,
)

if TYPE_CHECKING:
    from arena_games.capture_the_commander.state import CaptureTheCommanderState

Slot = ctcpb.CaptureTheCommanderSlot
EMPTY_SLOT = ctcpb.CAPTURE_THE_COMMANDER_SLOT_STATE_EMPTY
HIDDEN_SLOT = ctcpb.CAPTURE_THE_COMMANDER_SLOT_STATE_HIDDEN
KNOWN_SLOT = ctcpb.CAPTURE_THE_COMMANDER_SLOT_STATE_KNOWN
FACE_UP_SLOT = ctcpb.CAPTURE_THE_COMMANDER_SLOT_STATE_FACE_UP


# -- events -----------------------------------------------------------------------------------
# The state wraps these builders in base.Event, so that an event is put together only when it
# is first read: random playouts and search apply thousands of steps whose events nobody reads.
# A builder gets plain values only (ints, tuples), never the live state, so a late read still
# tells what happened at its step. Events are public unless their builder names an audience,
# which the state gives to the Event too.
REFEREE_ONLY: frozenset[int] = frozenset()


def _event(step: int, text: str, audience: frozenset[int] | None, **typed: object) -> pb.Event:
    """audience None: everyone; a set of seats: only them; frozenset(): the referee only.
    typed: the CaptureTheCommanderEvent's one field, as a dict of its fields: the Event builds
    it in place, cheaper than building the message and copying it in (the referee reads every
    event)."""
    return event_message(step, text, audience, capture_the_commander=typed)


def deal_started(step: int, deal: int, first_seat: int) -> pb.Event:
    started = {"deal": deal, "first_seat": first_seat}
    return _event(step, f"deal {deal} begins", None, deal_started=started)


def card_dealt(step: int, seat: int, slot: int, card: int) -> pb.Event:
    """For the referee only (REFEREE_ONLY): nobody, the receiver included, sees the card."""
    dealt = {"seat": seat, "slot": slot, "card": cards.to_message(card)}
    text = f"seat {seat} slot {slot} gets {cards.label(card)}"
    return _event(step, text, REFEREE_ONLY, card_dealt=dealt)


def attack_declared(step: int, seat: int, slot: int, defender: int, target: int) -> pb.Event:
    declared = {"attacker": seat, "slot": slot, "defender": defender, "target_slot": target}
    text = f"seat {seat} attacks with slot {slot} seat {defender}'s slot {target}"
    return _event(step, text, None, attack_declared=declared)


def card_revealed(step: int, seat: int, slot: int, card: int) -> pb.Event:
    revealed = {"seat": seat, "slot": slot, "card": cards.to_message(card)}
    return _event(
        step, f"seat {seat} slot {slot} is {cards.label(card)}", None, card_revealed=revealed
    )


def war_declared(step: int, able: tuple[int, ...]) -> pb.Event:
    text = f"a tie: war ({', '.join(f'seat {s}' for s in able) or 'nobody'} can flip)"
    return _event(step, text, None, war_declared={"seats": able})


def war_choice_private(step: int, seat: int, slot: int) -> pb.Event:
    """For the choosing seat only (frozenset((seat,)))."""
    text = f"seat {seat} chooses slot {slot}"
    chosen = {"seat": seat, "slot": slot}
    return _event(step, text, frozenset((seat,)), war_choice_made=chosen)


def war_choice_public(step: int, seat: int) -> pb.Event:
    return _event(step, f"seat {seat} has chosen", None, war_choice_made={"seat": seat})


def battle_won(step: int, winner: int, loser: int, lost: tuple[int, ...]) -> pb.Event:
    won = {"winner": winner, "loser": loser, "removed_slots": lost}
    text = f"seat {winner} wins the battle; seat {loser} loses slots {list(lost)}"
    return _event(step, text, None, battle_won=won)


def commander_captured(step: int, loser: int, winner: int, points: int) -> pb.Event:
    captured = {"seat": loser, "by": winner, "points": points}
    text = f"seat {winner} captures seat {loser}'s commander: seat {loser} is out"
    return _event(step, text, None, commander_captured=captured)


def war_drawn(step: int, attacker: int, defender: int) -> pb.Event:
    drawn = {"attacker": attacker, "defender": defender}
    return _event(step, "neither side can flip: a draw", None, war_drawn=drawn)


def gift_given(step: int, giver: int, slot: int, ally: int, ally_slot: int) -> pb.Event:
    given = {"giver": giver, "slot": slot, "ally": ally, "ally_slot": ally_slot}
    text = f"seat {giver} gives its slot {slot} to seat {ally}'s slot {ally_slot}"
    return _event(step, text, None, gift_given=given)


def deal_ended(
    step: int, deal: int, reason: str, winners: tuple[int, ...], scores: tuple[int, ...]
) -> pb.Event:
    ended = {"deal": deal, "winners": winners, "scores": scores}
    return _event(step, f"deal {deal} ends: {reason}", None, deal_ended=ended)


# -- observations -----------------------------------------------------------------------------
# The referee builds an observation for every decision it asks for, and from one decision to
# the next most formations do not change (and no slot's look does), so each part is built
# from plain values (ints and tuples) by a cached function and the observation shares them:
# a message passed to a constructor is copied in C, so nobody mutates the cached ones.
NO_BATTLE_SLOTS: tuple[int, ...] = ()


@cache
def slot_message(slot: int, shown: int, card: int, cover_gone: int) -> Slot:
    """One slot as everyone sees it. card: EMPTY unless shown is KNOWN_SLOT or FACE_UP_SLOT;
    cover_gone: the emptied slots of its cover set, as a bitmask (formation.BIT). The domain is
    finite (105 looks, hidden or a card known or face up, times 34 slot and cover pairs, plus 13
    empty slots: 3,583 entries at most), so the cache needs no bound."""
    if shown == EMPTY_SLOT:
        return Slot(number=slot, state=EMPTY_SLOT)
    cover_set = COVER_BITS[slot]
    if cover_gone == cover_set:
        cover = FULLY_UNCOVERED
    elif cover_gone:
        cover = PARTIALLY_UNCOVERED
    else:
        cover = COVERED
    if card == EMPTY:
        return Slot(number=slot, state=shown, cover=cover)  # type: ignore[arg-type]
    return Slot(number=slot, state=shown, cover=cover, card=cards.to_message(card))  # type: ignore[arg-type]


# Bounded at about 3.5 MB (3.5 KB an entry): a match reuses its own formations, so this keeps
# every hit of some 250 four-seat matches at once.
@lru_cache(maxsize=1024)
def formation_message(
    seat: int,
    in_game: bool,
    team: int,
    formation: tuple[int, ...],
    holes: int,
    known: tuple[bool, ...],
    face_up: tuple[int, ...],
    removed: tuple[int, ...],
    left_unseen: int,
) -> ctcpb.CaptureTheCommanderFormation:
    """One seat's formation; holes: its empty slots as a bitmask (formation.BIT); face_up: its
    slots flipped in the battle under way. The key holds the hidden cards too (a cheap key to
    make), but the message shows none of them."""
    slots = []
    for slot in SLOTS:
        card = formation[slot]
        if card == EMPTY:
            shown = EMPTY_SLOT
        elif slot in face_up:
            shown = FACE_UP_SLOT
        elif known[slot]:
            shown = KNOWN_SLOT
        else:
            shown, card = HIDDEN_SLOT, EMPTY
        slots.append(slot_message(slot, shown, card, holes & COVER_BITS[slot]))
    return ctcpb.CaptureTheCommanderFormation(
        seat=seat,
        in_game=in_game,
        team=team,
        slots=slots,
        removed=[cards.to_message(c) for c in removed],
        left_unseen=left_unseen,
        cards_in_play=len(formation) - formation.count(EMPTY),  # index 0 is always EMPTY
    )


def _formations(state: CaptureTheCommanderState) -> list[ctcpb.CaptureTheCommanderFormation]:
    battle = state.battle
    teams = state.options.teams
    formations, holes, known = state.formations, state.holes, state.known
    return [
        formation_message(
            seat,
            state.in_game[seat],
            seat % 2 if teams else 0,
            tuple(formations[seat]),
            holes[seat],
            tuple(known[seat]),
            tuple(battle.slots_of(seat))
            if battle is not None and seat in (battle.attacker, battle.defender)
            else NO_BATTLE_SLOTS,
            tuple(state.removed[seat]),
            len(state.unseen_out[seat]),
        )
        for seat in range(state.num_seats)
    ]


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
    battle = state.battle
    # A dict, not a CaptureTheCommanderObservation: the Observation builds it in place rather
    # than copying a finished one.
    fields: dict[str, object] = {
        "current_seat": state.current,
        "formations": _formations(state),
        "scores": state.scores,
        "target_score": options.target or 0,
        "deal": state.deal,
        "first_seat": state.first_seat,
        "teams": options.teams,
        "twos_beat_aces": options.twos_beat_aces,
        "one_suit_each": options.one_suit_each,
        "out_order": state.out_order,
        "decisions": state.decisions,
        "decision_cap": DECISION_CAP,
        "unused_cards": 52 - 13 * state.num_seats,
    }
    if battle is not None:
        fields["battle"] = battle_message(state)
    if seat is not None:
        fields["seat"] = seat
        if battle is not None and seat in battle.choices:
            fields["own_war_choice"] = battle.choices[seat]
    return pb.Observation(capture_the_commander=fields)  # type: ignore[arg-type]


def referee_picture(state: CaptureTheCommanderState) -> dict[str, object]:
    """The cards in every slot, face down ones included: the referee's alone (no observation
    holds a card nobody has seen)."""
    return {
        "formations": [
            [None if formation[slot] == EMPTY else cards.label(formation[slot]) for slot in SLOTS]
            for formation in state.formations
        ]
    }


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
