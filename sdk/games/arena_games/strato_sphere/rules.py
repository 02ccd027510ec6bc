"""The fixed parts of Strato-Sphere: cards and forces, the ring of nodes, and action ids.

Card ids: with four players two decks are shuffled together, so a card id is
copy * 52 + face, where face is the cards.py integer (rank and suit). Everything a seat sees
(labels, the wire's Card) names the face only; two copies of a face are the same card to play.
"""

from __future__ import annotations

from arena.v1 import cards_pb2
from arena.v1 import referee_pb2 as pb
from arena.v1 import strato_sphere_pb2 as sspb

from arena_games import cards

ZONE_NODES = 3
STACK_CARDS = 3
HAND_SIZE = 6
HAND_LIMIT = 7
MOVES_PER_TURN = 3
# The first round's turns are short, like Connect6's first stone: as played with three moves
# from the start, seat 0 won about two thirds of the decided games between strategy bots.
FIRST_ROUND_MOVES = {2: (1, 3), 4: (1, 2, 3, 3)}
TURN_CAP = 600
# The cap is in turns; no game can take more decisions than this: every move of every turn an
# attack that each of the three other seats of a four-seat game declines.
DECISION_BOUND = TURN_CAP * MOVES_PER_TURN * 4
MAX_NODES = 12
RULES_VERSION = "strato-sphere/3"

# Forces, numbered as the wire's StratoSphereForce.
NO_FORCE = 0
RED, BLACK = 1, 2
CLUBS, DIAMONDS, HEARTS, SPADES = 3, 4, 5, 6
FORCE_NAMES = {
    NO_FORCE: "none",
    RED: "red",
    BLACK: "black",
    CLUBS: "clubs",
    DIAMONDS: "diamonds",
    HEARTS: "hearts",
    SPADES: "spades",
}

# Action ids, in the order legal lists give them.
PASS = 0
DRAW = 1
DECLINE = 2
REVEAL_BASE = 3
DEPLOY_BASE = REVEAL_BASE + MAX_NODES
ATTACK_BASE = DEPLOY_BASE + 52 * MAX_NODES
PREVENT_BASE = ATTACK_BASE + MAX_NODES * MAX_NODES
ACTION_COUNT = PREVENT_BASE + 52


def turn_moves(turn: int, num_seats: int) -> int:
    """The moves of the game's turn number `turn` (0 first): short in the first round."""
    first_round = FIRST_ROUND_MOVES.get(num_seats, ())
    return first_round[turn] if turn < len(first_round) else MOVES_PER_TURN


# -- cards and forces -------------------------------------------------------------------------
def decks(num_seats: int) -> int:
    """One deck for two players, two shuffled together for four."""
    return 1 if num_seats == 2 else 2


def face(card_id: int) -> int:
    """The cards.py integer of a card id: which copy it is does not matter in play."""
    return card_id % 52


def value(card_id: int) -> int:
    """Face value: 2..10, J=11, Q=12, K=13, A=14."""
    return cards.rank(face(card_id))


def force_of(card_id: int, num_seats: int) -> int:
    """The force a card belongs to: its colour with two players, its suit with four."""
    suit = cards.suit(face(card_id))
    if num_seats == 2:
        return BLACK if suit in (0, 3) else RED
    return CLUBS + suit


def forces_in_play(num_seats: int) -> tuple[int, ...]:
    return (RED, BLACK) if num_seats == 2 else (CLUBS, DIAMONDS, HEARTS, SPADES)


# Per card id, as tuples indexed by id (two decks' ids, enough for either seat count): the
# legal lists ask these of every card in hand and on the ring at every step.
FACE = tuple(card_id % 52 for card_id in range(104))
VALUE = tuple(cards.rank(card_id % 52) for card_id in range(104))
FORCES_BY_SEATS = {seats: tuple(force_of(c, seats) for c in range(104)) for seats in (2, 4)}


def force_table(num_seats: int) -> tuple[int, ...]:
    """force_of(card_id, num_seats) of every card id, by id."""
    known = FORCES_BY_SEATS.get(num_seats)
    if known is None:
        known = tuple(force_of(c, num_seats) for c in range(52 * decks(num_seats)))
    return known


def card_message(card_id: int) -> cards_pb2.Card:
    return cards.to_message(face(card_id))


def card_label(card_id: int) -> str:
    return cards.label(face(card_id))


# -- the ring ---------------------------------------------------------------------------------
def zone_of(node: int) -> int:
    """The seat whose zone holds the node."""
    return node // ZONE_NODES


def zone_nodes(seat: int) -> range:
    return range(seat * ZONE_NODES, seat * ZONE_NODES + ZONE_NODES)


def neighbours(node: int, num_nodes: int) -> tuple[int, int]:
    """A zone's nodes lie in a line and its end nodes touch the next zones' end nodes, so with
    zones numbered around the table the whole layout is one ring."""
    return ((node - 1) % num_nodes, (node + 1) % num_nodes)


def ring(num_nodes: int) -> tuple[tuple[int, int], ...]:
    """neighbours(node, num_nodes) of every node, by node."""
    return tuple(neighbours(node, num_nodes) for node in range(num_nodes))


# -- actions ----------------------------------------------------------------------------------
def reveal_action(node: int) -> int:
    return REVEAL_BASE + node


def deploy_action(card_face: int, node: int) -> int:
    return DEPLOY_BASE + card_face * MAX_NODES + node


def attack_action(from_node: int, to_node: int) -> int:
    return ATTACK_BASE + from_node * MAX_NODES + to_node


def prevent_action(card_face: int) -> int:
    return PREVENT_BASE + card_face


def decode(action: int) -> tuple[str, int, int]:
    """(kind, a, b): kind is pass, draw, decline, reveal (a node), deploy (a face, b node),
    attack (a from, b to) or prevent (a face); -1 where it does not apply."""
    if not 0 <= action < ACTION_COUNT:
        raise ValueError(f"not a Strato-Sphere action: {action}")
    if action < REVEAL_BASE:
        return ("pass", "draw", "decline")[action], -1, -1
    if action < DEPLOY_BASE:
        return "reveal", action - REVEAL_BASE, -1
    if action < ATTACK_BASE:
        card_face, node = divmod(action - DEPLOY_BASE, MAX_NODES)
        return "deploy", card_face, node
    if action < PREVENT_BASE:
        from_node, to_node = divmod(action - ATTACK_BASE, MAX_NODES)
        return "attack", from_node, to_node
    return "prevent", action - PREVENT_BASE, -1


def action_label(action: int) -> str:
    kind, a, b = decode(action)
    if kind == "reveal":
        return f"reveal {a}"
    if kind == "deploy":
        return f"deploy {cards.label(a)} {b}"
    if kind == "attack":
        return f"attack {a}>{b}"
    if kind == "prevent":
        return f"prevent {cards.label(a)}"
    return kind


def action_message(action: int) -> pb.Action:
    kind, a, b = decode(action)
    if kind == "pass":
        typed = sspb.StratoSphereAction(pass_turn=sspb.StratoSpherePass())
    elif kind == "draw":
        typed = sspb.StratoSphereAction(draw=sspb.StratoSphereDraw())
    elif kind == "decline":
        typed = sspb.StratoSphereAction(decline=sspb.StratoSphereDecline())
    elif kind == "reveal":
        typed = sspb.StratoSphereAction(reveal=sspb.StratoSphereReveal(node=a))
    elif kind == "deploy":
        deploy = sspb.StratoSphereDeploy(card=cards.to_message(a), node=b)
        typed = sspb.StratoSphereAction(deploy=deploy)
    elif kind == "attack":
        typed = sspb.StratoSphereAction(attack=sspb.StratoSphereAttack(from_node=a, to_node=b))
    else:
        typed = sspb.StratoSphereAction(prevent=sspb.StratoSpherePrevent(card=cards.to_message(a)))
    return pb.Action(strato_sphere=typed)
