"""What a seat sees: the observation message (only what that seat may know) and its text."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache, lru_cache

from arena.v1 import cards_pb2
from arena.v1 import orc_pit_fighting_pb2 as opb
from arena.v1 import referee_pb2 as pb

from arena_games import cards
from arena_games.orc_pit_fighting.actions import Use, wire_use
from arena_games.orc_pit_fighting.rules import DECISION_CAP, ROUND_TURN_CAP, Play, combat_value
from arena_games.orc_pit_fighting.table import Combat, Phase, Table

# The referee builds an observation for every decision it asks for, and from one decision to
# the next most of it does not change: the piles, the hand, in a combat at least one side.
# Building it from messages costs a copy of every card in it, so each part is kept in wire
# form instead, made once from plain values (ints, tuples and frozen Plays) by a cached
# function whose key holds every value the part shows; the observation is the parts joined
# and parsed once. Protobuf defines a concatenation of encoded messages as their merge:
# repeated fields append in order, and the embedded messages (the game's observation, its
# combat) merge field by field.
CARD = tuple(cards.to_message(card) for card in cards.DECK)
"""Card -> its shared message."""
DRAW_CHOICE = Phase.DRAW_CHOICE
from_wire = pb.Observation.FromString


def card_list(items: Iterable[int]) -> list[cards_pb2.Card]:
    return [CARD[c] for c in items]


def wire(**fields: object) -> bytes:
    """pb.Observation(orc_pit_fighting=fields) in wire form: one part of an observation."""
    return pb.Observation(orc_pit_fighting=fields).SerializeToString()  # type: ignore[arg-type]


def observe(table: Table, seat: int | None, to_move: tuple[int, ...]) -> pb.Observation:
    fields: dict[str, object] = {
        "phase": table.phase,
        "turn_seat": table.turn_seat,
        "deck_size": len(table.deck),
        "fangs": table.fangs,
        "round": table.round,
        "round_turns": table.round_turns,
        "round_turn_cap": ROUND_TURN_CAP,
        "decisions": table.decisions - pending_choices(table),
        "decision_cap": DECISION_CAP,
    }
    if len(to_move) == 1 and table.phase != DRAW_CHOICE:
        fields["actor"] = to_move[0]
    if table.favorite is not None:
        fields["favorite"] = table.favorite
    parts = [DISCARD_PILE[c] for c in table.discard]
    parts += (seat_part(table, 0), seat_part(table, 1))
    if table.pending is not None:
        parts.append(pending_play(*table.pending))
    if seat is not None:
        fields["seat"] = seat
        parts += [HAND[c] for c in table.hands[seat]]
        private_parts(table, seat, parts)
    if table.combat is not None:
        combat_parts(table, seat, parts)
    parts.append(wire(**fields))
    return from_wire(b"".join(parts))


def pending_choices(table: Table) -> int:
    """Draw-procedure choices made but not yet turned up: not counted, so that nobody can tell
    whether the other seat has chosen."""
    fight = table.combat
    return 0 if fight is None else sum(1 for x in fight.choices if x is not None)


def pile_part(name: str) -> tuple[bytes, ...]:
    """Card -> the part that adds it to the named list of cards: a list is its cards' parts
    joined, in order."""
    return tuple(wire(**{name: [CARD[card]]}) for card in cards.DECK)


DISCARD_PILE, HAND, DRAWN = pile_part("discard_pile"), pile_part("hand"), pile_part("drawn")


def private_parts(table: Table, seat: int, parts: list[bytes]) -> None:
    """The seat's own cards in passing: the two drawn, the swap card, the Draw choice."""
    if table.two and table.draw_seat == seat:
        parts += [DRAWN[c] for c in table.two]
    if table.put_down is not None and table.actor == seat:
        parts.append(own_card("put_down", table.put_down))
    fight = table.combat
    if fight is not None:
        choice = fight.choices[seat]
        if choice is not None:
            parts.append(own_card("face_down_choice", choice))


@cache
def own_card(name: str, card: int) -> bytes:
    """put_down or face_down_choice: 2 x 52 entries."""
    return wire(**{name: CARD[card]})


def seat_part(table: Table, s: int) -> bytes:
    return seat_state(
        s, table.damage[s], len(table.hands[s]), tuple(table.out[s]), tuple(table.flair[s])
    )


@lru_cache(maxsize=4096)
def seat_state(
    s: int, damage: int, hand_size: int, out_pile: tuple[int, ...], flair_pile: tuple[int, ...]
) -> bytes:
    state = {
        "seat": s,
        "damage": damage,
        "hand_size": hand_size,
        "out_pile": card_list(out_pile),
        "flair_pile": card_list(flair_pile),
    }
    return wire(seats=[state])


@cache
def pending_play(owner: int, card: int, use: Use) -> bytes:
    """The card waiting for the cancel reaction: 2 seats x 52 cards x 18 uses at most."""
    played = {"seat": owner, "card": CARD[card], "use": wire_use(use)}
    return wire(pending_play=played)


def combat_parts(table: Table, seat: int | None, parts: list[bytes]) -> None:
    fight = table.combat
    assert fight is not None
    fields: dict[str, object] = {
        "attacker": fight.attacker,
        "combat_round": fight.combat_round,
        "rolls": fight.rolls,
    }
    if fight.defender is not None:
        fields["defender"] = fight.defender
    if fight.reroll is not None:
        fields["reroll_bonus"] = fight.reroll
    if fight.ace_of_clubs is not None:
        fields["ace_of_clubs"] = fight.ace_of_clubs
    if fight.ace_of_spades is not None:
        fields["ace_of_spades"] = fight.ace_of_spades
    drawn_card = fight.drawn
    if seat is not None and drawn_card is not None and table.actor == seat:
        fields["dirty_drawn"] = CARD[drawn_card]
    parts += (
        wire(combat=fields),
        side_part(fight, 0, seat),
        side_part(fight, 1, seat),
        revealed(0, fight.revealed[0]),
        revealed(1, fight.revealed[1]),
    )


@cache
def revealed(s: int, card: int | None) -> bytes:
    """A Draw-procedure reveal: 2 seats x (52 cards or nothing)."""
    shown = {"seat": s} if card is None else {"seat": s, "card": CARD[card]}
    return wire(combat={"revealed": [shown]})


def side_part(fight: Combat, s: int, seat: int | None) -> bytes:
    plays = tuple(fight.plays[s])
    # Only the owner sees its face-down plays; asked only when it has one, so that the owner's
    # view of a side without them is the one everybody shares.
    owner_view = seat == s and any(p.face_down for p in plays)
    return side(
        s,
        fight.stance[s],
        plays,
        fight.reinforced[s],
        fight.passed[s],
        tuple(fight.hearts[s]),
        fight.blank_unsubstituted[s],
        tuple(fight.other_cards[s]),
        owner_view,
    )


@lru_cache(maxsize=4096)
def side(
    s: int,
    stance: int,
    plays: tuple[Play, ...],
    reinforced: bool,
    passed: bool,
    hearts: tuple[int, ...],
    blank_unsubstituted: bool,
    other_cards: tuple[int, ...],
    owner_view: bool,
) -> bytes:
    """One seat's side of the combat; owner_view: its face-down plays are shown."""
    shown = {
        "seat": s,
        "stance": stance,
        "combat_value": combat_value(plays) + int(reinforced),
        "passed": passed,
        "hearts": card_list(hearts),
        "reinforced": reinforced,
        "blank_unsubstituted": blank_unsubstituted,
        "other_cards": card_list(other_cards),
        "plays": [play_view(play, owner_view or not play.face_down) for play in plays],
    }
    return wire(combat={"sides": [shown]})


@cache
def play_view(play: Play, visible: bool) -> opb.OrcPitFightingPitPlay:
    """A finite domain: 52 single cards, 11 spade pairs, the ace low and 52 Blanks, each
    shown or not (232 entries at most)."""
    if not visible:
        return opb.OrcPitFightingPitPlay(rank=play.rank, value=play.value, face_down=play.face_down)
    return opb.OrcPitFightingPitPlay(
        rank=play.rank, value=play.value, face_down=play.face_down, cards=card_list(play.cards)
    )


# -- text ------------------------------------------------------------------------------------------
def labels(items: Iterable[cards_pb2.Card]) -> str:
    return " ".join(cards.label(cards.from_message(c)) for c in items) or "-"


def render(obs: opb.OrcPitFightingObservation) -> str:
    """The position as the observation's viewpoint sees it, and nothing more: the piles face up
    (Out, Flair, discard), the Pit's cards, plays apart by `|` (a Blank is `##` but to its
    owner), and the cards private to this seat (hand, a draw two, a card put down, a
    Draw-procedure choice)."""
    phase = opb.OrcPitFightingPhase.Name(obs.phase).removeprefix("ORC_PIT_FIGHTING_PHASE_")
    actor = f"seat {obs.actor}" if obs.HasField("actor") else "-"
    favorite = f"  favorite: seat {obs.favorite}" if obs.HasField("favorite") else ""
    lines = [
        f"Orc Pit Fighting  round {obs.round}  {phase.lower()}  to move: {actor}"
        f"  deck {obs.deck_size}{favorite}",
        f"  discard (top last): {labels(obs.discard_pile)}",
    ]
    for s in obs.seats:
        lines.append(
            f"  seat {s.seat}: damage {s.damage}  hand {s.hand_size}"
            f"  flair {len(s.flair_pile)}: {labels(s.flair_pile)}  out: {labels(s.out_pile)}"
        )
    if obs.HasField("pending_play"):
        p = obs.pending_play
        lines.append(f"  waiting for the cancel: seat {p.seat} played {labels([p.card])}")
    if obs.HasField("combat"):
        lines += combat_lines(obs.combat)
    if obs.HasField("seat"):
        lines.append(f"  seat {obs.seat} holds: {labels(obs.hand)}")
        lines += own_lines(obs)
    return "\n".join(lines)


def combat_lines(combat: opb.OrcPitFightingCombat) -> list[str]:
    """Each side's cards in the Pit, in the order played, and the rolls and turned-up cards."""
    lines = []
    for side in combat.sides:
        stance = opb.OrcPitFightingStance.Name(side.stance).removeprefix("ORC_PIT_FIGHTING_STANCE_")
        plays = " | ".join(pit_play(p) for p in side.plays) or "-"
        extra = [f"hearts {labels(side.hearts)}"] if side.hearts else []
        extra += [f"other {labels(side.other_cards)}"] if side.other_cards else []
        extra += ["passed"] if side.passed else []
        lines.append(
            f"  pit seat {side.seat} ({stance.lower()}): {plays}  value {side.combat_value}"
            + "".join(f"  {e}" for e in extra)
        )
    if combat.rolls:
        lines.append(f"  rolls: {' '.join(map(str, combat.rolls))}")
    turned = [f"seat {r.seat} {labels([r.card])}" for r in combat.revealed if r.HasField("card")]
    if turned:
        lines.append(f"  turned up: {', '.join(turned)}")
    return lines


def pit_play(play: opb.OrcPitFightingPitPlay) -> str:
    """A play as the viewpoint sees it: its cards (two for a pair of spades), `##` for
    another's Blank, `blank X` for one's own. Each card a word of its own: what the text shows
    is checked word by word against what the viewpoint may know."""
    if not play.face_down:
        return labels(play.cards)
    return f"blank {labels(play.cards)}" if play.cards else "##"


def own_lines(obs: opb.OrcPitFightingObservation) -> list[str]:
    """What only this seat sees besides its hand."""
    lines = []
    if obs.drawn:
        lines.append(f"  drawn, to settle: {labels(obs.drawn)}")
    if obs.HasField("put_down"):
        lines.append(f"  put down for the swap: {labels([obs.put_down])}")
    if obs.HasField("face_down_choice"):
        lines.append(f"  face down in the Draw procedure: {labels([obs.face_down_choice])}")
    if obs.HasField("combat") and obs.combat.HasField("dirty_drawn"):
        lines.append(f"  drawn in Dirty Tricks: {labels([obs.combat.dirty_drawn])}")
    return lines
