"""What Strato-Sphere tells the seats: events with their audience, observations, and text.

Events are built lazily: each records a describer and the values it needs (ints, never the live
state), and its text and wire message are put together only when someone reads it. Random
playouts and search bots read none.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial
from typing import TYPE_CHECKING

from arena.v1 import referee_pb2 as pb
from arena.v1 import strato_sphere_pb2 as sspb

from arena_games import cards
from arena_games.base import Event, event_message
from arena_games.strato_sphere.rules import (
    FORCE_NAMES,
    HAND_LIMIT,
    TURN_CAP,
    card_label,
    card_message,
    zone_of,
)

if TYPE_CHECKING:
    from arena_games.strato_sphere.state import StratoSphereState

REFEREE_ONLY: frozenset[int] = frozenset()
ONLY = tuple(frozenset([seat]) for seat in range(4))
"""The audience of what only one seat may know, by seat."""

Described = tuple[str, sspb.StratoSphereEvent]


@lru_cache(maxsize=4096)
def _described(describe: Callable[..., Described], *args: int) -> Described:
    """describe(*args), kept: the same events recur (a seat draws, a turn ends), and their typed
    message is only ever copied into a wire event, never changed."""
    return describe(*args)


def _wire(
    step: int, audience: frozenset[int] | None, describe: Callable[..., Described], *args: int
) -> pb.Event:
    text, typed = _described(describe, *args)
    return event_message(step, text, audience, strato_sphere=typed)


def _event(
    step: int, audience: frozenset[int] | None, describe: Callable[..., Described], *args: int
) -> Event:
    """An event whose text and message describe(*args) makes when it is first read."""
    return Event(partial(_wire, step, audience, describe, *args), audience)


# -- events -----------------------------------------------------------------------------------
def _node_card_dealt(node: int, card: int) -> Described:
    if card < 0:
        dealt = sspb.StratoSphereNodeCardDealt(node=node)
        text = f"a card dealt face down to node {node}"
    else:
        dealt = sspb.StratoSphereNodeCardDealt(node=node, card=card_message(card))
        text = f"{card_label(card)} dealt face down to node {node}"
    return text, sspb.StratoSphereEvent(node_card_dealt=dealt)


def node_card_dealt(step: int, node: int, card: int) -> list[Event]:
    """Face-down node cards are hidden from every seat: only the referee's copy names them."""
    return [
        _event(step, REFEREE_ONLY, _node_card_dealt, node, card),
        _event(step, None, _node_card_dealt, node, -1),
    ]


def _card_drawn(seat: int, card: int) -> Described:
    if card < 0:
        drawn = sspb.StratoSphereCardDrawn(seat=seat)
        text = f"seat {seat} draws a card"
    else:
        drawn = sspb.StratoSphereCardDrawn(seat=seat, card=card_message(card))
        text = f"seat {seat} draws {card_label(card)}"
    return text, sspb.StratoSphereEvent(card_drawn=drawn)


def card_drawn(step: int, seat: int, card: int) -> list[Event]:
    return [
        _event(step, ONLY[seat], _card_drawn, seat, card),
        _event(step, None, _card_drawn, seat, -1),
    ]


def _card_revealed(seat: int, node: int, card: int, old: int) -> Described:
    message = sspb.StratoSphereCardRevealed(seat=seat, node=node, card=card_message(card))
    text = f"seat {seat} reveals {card_label(card)} on node {node}"
    if old >= 0:
        message.discarded.CopyFrom(card_message(old))
        text += f", discarding {card_label(old)}"
    return text, sspb.StratoSphereEvent(card_revealed=message)


def card_revealed(step: int, seat: int, node: int, card: int, old: int) -> list[Event]:
    return [_event(step, None, _card_revealed, seat, node, card, old)]


def _force_assigned(seat: int, force: int) -> Described:
    message = sspb.StratoSphereForceAssigned(seat=seat, force=force)  # type: ignore[arg-type]
    text = f"seat {seat}'s force is {FORCE_NAMES[force]}"
    return text, sspb.StratoSphereEvent(force_assigned=message)


def force_assigned(step: int, seat: int, force: int) -> list[Event]:
    return [_event(step, None, _force_assigned, seat, force)]


def _card_deployed(seat: int, node: int, card: int, old: int) -> Described:
    message = sspb.StratoSphereCardDeployed(seat=seat, node=node, card=card_message(card))
    text = f"seat {seat} deploys {card_label(card)} on node {node}"
    if old >= 0:
        message.discarded.CopyFrom(card_message(old))
        text += f", discarding {card_label(old)}"
    return text, sspb.StratoSphereEvent(card_deployed=message)


def card_deployed(step: int, seat: int, node: int, card: int, old: int) -> list[Event]:
    return [_event(step, None, _card_deployed, seat, node, card, old)]


def _attack_declared(seat: int, src: int, dst: int, attacking: int, defending: int) -> Described:
    message = sspb.StratoSphereAttackDeclared(
        seat=seat,
        from_node=src,
        to_node=dst,
        attacking_card=card_message(attacking),
        defending_card=card_message(defending),
    )
    text = (
        f"seat {seat} attacks node {dst} ({card_label(defending)}) "
        f"from node {src} ({card_label(attacking)})"
    )
    return text, sspb.StratoSphereEvent(attack_declared=message)


def attack_declared(
    step: int, seat: int, src: int, dst: int, attacking: int, defending: int
) -> list[Event]:
    return [_event(step, None, _attack_declared, seat, src, dst, attacking, defending)]


def _attack_prevented(seat: int, card: int, attacking: int, src: int) -> Described:
    message = sspb.StratoSphereAttackPrevented(
        seat=seat, card=card_message(card), attacking_card=card_message(attacking), from_node=src
    )
    text = f"seat {seat} prevents the attack with {card_label(card)}"
    return text, sspb.StratoSphereEvent(attack_prevented=message)


def attack_prevented(step: int, seat: int, card: int, attacking: int, src: int) -> list[Event]:
    return [_event(step, None, _attack_prevented, seat, card, attacking, src)]


def _prevention_declined(seat: int) -> Described:
    message = sspb.StratoSpherePreventionDeclined(seat=seat)
    text = f"seat {seat} does not prevent the attack"
    return text, sspb.StratoSphereEvent(prevention_declined=message)


def prevention_declined(step: int, seat: int) -> list[Event]:
    return [_event(step, None, _prevention_declined, seat)]


def _attack_resolved(
    attacker: int, src: int, dst: int, attacking: int, defending: int
) -> Described:
    message = sspb.StratoSphereAttackResolved(
        attacker=attacker,
        from_node=src,
        to_node=dst,
        attacking_card=card_message(attacking),
        defending_card=card_message(defending),
    )
    text = (
        f"the attack destroys {card_label(attacking)} on node {src} "
        f"and {card_label(defending)} on node {dst}"
    )
    return text, sspb.StratoSphereEvent(attack_resolved=message)


def attack_resolved(
    step: int, attacker: int, src: int, dst: int, attacking: int, defending: int
) -> list[Event]:
    return [_event(step, None, _attack_resolved, attacker, src, dst, attacking, defending)]


def _turn_ended(seat: int, passed: bool) -> Described:
    message = sspb.StratoSphereTurnEnded(seat=seat, passed=passed)
    text = f"seat {seat} passes" if passed else f"seat {seat}'s turn ends"
    return text, sspb.StratoSphereEvent(turn_ended=message)


def turn_ended(step: int, seat: int, passed: bool) -> list[Event]:
    # The commonest event of a random game: _event written out.
    return [Event(partial(_wire, step, None, _turn_ended, seat, passed), None)]


def _zone_taken(seat: int, zone: int) -> Described:
    message = sspb.StratoSphereZoneTaken(seat=seat, zone=zone)
    text = f"seat {seat} controls all of seat {zone}'s zone and wins"
    return text, sspb.StratoSphereEvent(zone_taken=message)


def zone_taken(step: int, seat: int, zone: int) -> list[Event]:
    return [_event(step, None, _zone_taken, seat, zone)]


# -- observations -----------------------------------------------------------------------------
# The referee asks for an observation at every decision request. Copying a protobuf message
# into another (a constructor, extend, CopyFrom) serializes and parses it again, part by part,
# so an observation is put together from wire records instead: the record of each card alone in
# the hand or the discard pile, made once, and of each node, cached by the values it shows; one
# parse of the joined records builds the message.

_Observation = sspb.StratoSphereObservation


def _card_records(field: str) -> tuple[bytes, ...]:
    """Per card id of either deck, the record of that card alone in a field of the observation,
    serialized by protobuf itself."""
    return tuple(
        _Observation(**{field: [card_message(c)]}).SerializeToString()  # type: ignore[arg-type]
        for c in range(104)
    )


HAND = _card_records("hand")
DISCARD_PILE = _card_records("discard_pile")


@lru_cache(maxsize=4096)
def _node_record(node: int, face_down: int, face_up: int, controller: int | None) -> bytes:
    """A node of the ring, its face-up card a card id (-1 for none)."""
    message = sspb.StratoSphereNode(index=node, zone=zone_of(node), face_down=face_down)
    if face_up >= 0:
        message.face_up.CopyFrom(card_message(face_up))
    if controller is not None:
        message.controller = controller
    return _Observation(nodes=[message]).SerializeToString()


@lru_cache(maxsize=4096)
def _attack_record(
    attack: tuple[int, int, int],
    cards_at: tuple[int, int],
    reacting: int,
    declined: tuple[int, ...],
) -> bytes:
    """The pending attack: (attacker, from node, to node), the card ids on both nodes."""
    attacker, src, dst = attack
    attacking, defending = cards_at
    pending = sspb.StratoSpherePendingAttack(
        attacker=attacker,
        from_node=src,
        to_node=dst,
        attacking_card=card_message(attacking),
        defending_card=card_message(defending),
        reacting_seat=reacting,
        declined=declined,
    )
    return _Observation(attack=pending).SerializeToString()


def observation(state: StratoSphereState, seat: int | None) -> pb.Observation:
    """Only public facts, plus the seat's own hand: face-down cards and the pile stay hidden."""
    stacks, face_up = state.stacks, state.face_up
    records = [
        _node_record(node, len(stacks[node]), face_up[node], controller)
        for node, controller in enumerate(state.control())
    ]
    records.append(b"".join(map(DISCARD_PILE.__getitem__, state.discard)))
    if state.attack is not None:
        _, src, dst = state.attack
        cards_at = (face_up[src], face_up[dst])
        reacting = state.reactors[0]
        records.append(_attack_record(state.attack, cards_at, reacting, tuple(state.declined)))
    if seat is not None:
        records.append(b"".join(map(HAND.__getitem__, state.hands[seat])))
    message = pb.Observation()
    obs = message.strato_sphere
    obs.MergeFromString(b"".join(records))
    obs.current_seat = state.current
    obs.moves_left = state.moves_left
    obs.hand_sizes.extend([len(hand) for hand in state.hands])
    obs.resource_pile_size = len(state.pile)
    obs.forces.extend(state.forces)  # type: ignore[arg-type]
    obs.turns = state.turns
    obs.turn_cap = TURN_CAP
    obs.hand_limit = HAND_LIMIT
    if seat is not None:
        obs.seat = seat
    return message


def render_observation(obs: sspb.StratoSphereObservation) -> str:
    """The ring zone by zone: each node's face-down count, its face-up card and controller."""

    def label(card: object) -> str:
        return cards.label(cards.from_message(card))  # type: ignore[arg-type]

    lines = [
        f"Strato-Sphere  turns {obs.turns}/{obs.turn_cap}  to move: seat {obs.current_seat} "
        f"({obs.moves_left} moves left)  pile {obs.resource_pile_size}"
    ]
    forces = ", ".join(f"seat {s}: {FORCE_NAMES[f]}" for s, f in enumerate(obs.forces))
    lines.append(f"  forces: {forces}")
    for zone in range(len(obs.forces)):
        nodes = []
        for node in obs.nodes[zone * 3 : zone * 3 + 3]:
            top = label(node.face_up) if node.HasField("face_up") else "--"
            owner = f"s{node.controller}" if node.HasField("controller") else "  "
            nodes.append(f"{node.index:>2}:{top}{owner}/{node.face_down}")
        lines.append(f"  zone {zone}: " + "  ".join(nodes))
    if obs.HasField("attack"):
        a = obs.attack
        lines.append(
            f"  attack: seat {a.attacker} node {a.from_node}>{a.to_node}, "
            f"seat {a.reacting_seat} to react"
        )
    sizes = ", ".join(f"seat {s}: {n}" for s, n in enumerate(obs.hand_sizes))
    lines.append(f"  hands: {sizes}; discard {len(obs.discard_pile)}")
    if obs.HasField("seat"):
        hand = " ".join(label(c) for c in obs.hand)
        lines.append(f"  seat {obs.seat} holds: {hand}")
    return "\n".join(lines)
