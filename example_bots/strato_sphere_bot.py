"""A strategy bot for Strato-Sphere: one move at a time, the legal action whose expected board is
worth the most.

The board's worth, from our seat, is a race: for every seat p and every zone z that is not p's,
the moves p still needs to control all of z (one per uncontrolled node; two per node someone
else holds with a face-down card under it that a node of p's can attack now, three when p must
first bring a high enough card next to it; many for a node with none left, which can no longer
be attacked). Few moves needed is worth a lot to us and costs a lot when an opponent is the one
close. Smaller terms: the cards in hand (our force's to deploy, a couple of others' to prevent
attacks, more of those clog the hand), nodes controlled (what the cap and a dead position
count, weighing more and the hand less as the cap nears), the value of the cards holding our
nodes (a high card is harder to attack) and nodes nobody can attack any more.

Each action is judged by the board it leads to with the rest of the turn in view: the moves
left are first spent, greedily, on the deploys within reach (our zone, or next to a node we
control) that add most worth, and a search of the attacks and deploys left adds the chance of
taking a whole zone before the turn ends. A board already won beats everything. An attack is
weighed by the chance that no other seat holds a card to prevent it, estimated from the cards
we have not seen; a reveal by the force the turned card may have, in proportion to the unseen
cards of each force; a draw by the card it may bring. Prevention: always, with the lowest card
that does it, when the node attacked is ours.

It passes while other moves are legal when none of them is worth more than the board as it
stands: in games between two copies almost always when only attacks are left, and an attack
costs the attacker its own card, and its node too when it is prevented (the opponent's hand is
often full of cards of our force, which is what prevents). Near the cap, with two seats and
fewer nodes, it attacks instead: there a pass keeps a sure loss.
Ties go to the first action in the legal list, so the bot is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_games import cards
from arena_games.strato_sphere.rules import (
    NO_FORCE,
    ZONE_NODES,
    force_of,
    forces_in_play,
    neighbours,
)
from arena_sdk.bot import Bot

WIN = 10_000.0
# Worth of being this many moves from taking a zone, for 0, 1, 2, ... moves.
RACE = (WIN, 60.0, 25.0, 12.0, 5.0, 2.0, 1.0, 0.5)
THREAT_WEIGHT = 1.6
OWN_CARD = 1.5
# Cards of other forces only prevent attacks: a couple are worth keeping, more clog the hand,
# and a full hand with none of our force cannot deploy or draw.
PREVENT_CARD = 0.4
PREVENT_KEEP = 2
CLOG = 0.4
JAMMED = 1.0
HAND_LIMIT = 7
HOLD_VALUE = 0.08
PERMANENT = 1.0
NODE = 1.0
NODE_GROWTH = 4.0
HAND_FADE = 0.8
UNATTACKABLE = 9
GUESSED_VALUE = 8
WIN_IN_TURN = 5_000.0
WON = 1_000_000.0


@dataclass
class Board:
    """What the bot models: the table as the observation shows it, faces as cards.py ints."""

    seats: int
    me: int
    forces: list[int]
    face_up: list[int | None]
    face_down: list[int]
    hand: list[int]
    hand_sizes: list[int]
    unseen: dict[int, int] = field(default_factory=dict)
    progress: float = 0.0  # share of the turn cap already played

    def copy(self) -> Board:
        return Board(
            self.seats,
            self.me,
            list(self.forces),
            list(self.face_up),
            list(self.face_down),
            list(self.hand),
            list(self.hand_sizes),
            self.unseen,
            self.progress,
        )

    def force(self, card: int) -> int:
        return force_of(card, self.seats)

    def controller(self, node: int) -> int | None:
        card = self.face_up[node]
        if card is None:
            return None
        owned = self.force(card)
        return self.forces.index(owned) if owned in self.forces else None

    def in_reach(self, node: int) -> bool:
        """Whether we may reveal or deploy there: our zone, or next to a node we control."""
        if node // ZONE_NODES == self.me:
            return True
        return any(self.controller(n) == self.me for n in neighbours(node, len(self.face_up)))

    def assign(self, seat: int, card: int) -> None:
        """The engine's force assignment on a reveal."""
        if self.forces[seat] == NO_FORCE and self.force(card) not in self.forces:
            self.forces[seat] = self.force(card)
        without = [s for s in range(self.seats) if self.forces[s] == NO_FORCE]
        if len(without) == 1:
            left = [f for f in forces_in_play(self.seats) if f not in self.forces]
            self.forces[without[0]] = left[0]


def read_board(obs: Any) -> Board:
    """The observation as a Board, with the count of every face we have not seen."""
    seats = len(obs.forces)
    face_up = [cards.from_message(n.face_up) if n.HasField("face_up") else None for n in obs.nodes]
    hand = [cards.from_message(c) for c in obs.hand]
    copies = 1 if seats == 2 else 2
    unseen = dict.fromkeys(range(52), copies)
    seen = hand + [c for c in face_up if c is not None]
    seen += [cards.from_message(c) for c in obs.discard_pile]
    for card in seen:
        unseen[card] -= 1
    return Board(
        seats=seats,
        me=obs.seat,
        forces=list(obs.forces),
        face_up=face_up,
        face_down=[n.face_down for n in obs.nodes],
        hand=hand,
        hand_sizes=list(obs.hand_sizes),
        unseen=unseen,
        progress=obs.turns / obs.turn_cap if obs.turn_cap else 0.0,
    )


# -- the worth of a board ---------------------------------------------------------------------
def moves_needed(board: Board, seat: int, zone: int) -> int:
    needed = 0
    for node in range(zone * ZONE_NODES, zone * ZONE_NODES + ZONE_NODES):
        owner = board.controller(node)
        if owner == seat:
            continue
        if owner is None:
            needed += 1
        elif not board.face_down[node]:
            needed += UNATTACKABLE
        else:
            # Attack and take it; one move more when no node of ours can attack it yet.
            needed += 2 if attackable(board, seat, node) else 3
    return needed


def attackable(board: Board, seat: int, node: int) -> bool:
    """Whether a node next to this one, held by seat with a face-down card left, holds a card
    of at least this one's value."""
    defending = board.face_up[node]
    assert defending is not None
    for src in neighbours(node, len(board.face_up)):
        attacking = board.face_up[src]
        if attacking is None or not board.face_down[src] or board.controller(src) != seat:
            continue
        if cards.rank(attacking) >= cards.rank(defending):
            return True
    return False


def race(needed: int) -> float:
    return RACE[needed] if needed < len(RACE) else 0.0


def worth(board: Board) -> float:
    me = board.me
    total = 0.0
    for seat in range(board.seats):
        for zone in range(board.seats):
            if zone == seat:
                continue
            value = race(moves_needed(board, seat, zone))
            total += value if seat == me else -THREAT_WEIGHT * value / (board.seats - 1)
    mine = sum(1 for card in board.hand if board.force(card) == board.forces[me])
    # Cards in hand are worth less as the cap draws near: at the cap they count for nothing.
    fade = 1.0 - HAND_FADE * board.progress
    total += fade * hand_worth(mine, len(board.hand) - mine)
    # At the turn cap the most nodes controlled wins: that counts more as the cap draws near.
    node = NODE * (1.0 + NODE_GROWTH * board.progress)
    for index, card in enumerate(board.face_up):
        owner = board.controller(index)
        if owner is not None:
            total += node if owner == me else -node / (board.seats - 1)
        if card is not None and owner == me:
            total += HOLD_VALUE * cards.rank(card)
            total += PERMANENT if board.face_down[index] == 0 else 0.0
    return total


def hand_worth(own: int, other: int) -> float:
    value = OWN_CARD * own + PREVENT_CARD * min(other, PREVENT_KEEP)
    value -= CLOG * max(0, other - PREVENT_KEEP)
    return value - (JAMMED if own == 0 and other >= HAND_LIMIT else 0.0)


# -- winning within the turn ------------------------------------------------------------------
def win_chance(board: Board, moves: int) -> float:
    """The best chance of taking a whole zone with the moves left in this turn, by deploys and
    attacks that are not prevented."""
    if moves <= 0 or board.forces[board.me] == NO_FORCE:
        return 0.0
    zones = [z for z in range(board.seats) if z != board.me]
    return max(_take_zone(board, zone, moves) for zone in zones)


def _take_zone(board: Board, zone: int, moves: int) -> float:
    nodes = range(zone * ZONE_NODES, zone * ZONE_NODES + ZONE_NODES)
    missing = [node for node in nodes if board.controller(node) != board.me]
    if not missing:
        return 1.0
    if moves < len(missing):
        return 0.0
    best = 0.0
    own = [c for c in board.hand if board.force(c) == board.forces[board.me]]
    open_nodes = [node for node in missing if board.controller(node) is None]
    reachable = [node for node in open_nodes if board.in_reach(node)]
    if reachable and own:
        # Reach only grows as we deploy, so deploying on the first node within reach first
        # loses nothing.
        new = board.copy()
        new.hand.remove(own[0])
        new.face_up[reachable[0]] = own[0]
        best = _take_zone(new, zone, moves - 1)
    for dst in missing:
        if dst in open_nodes or not board.face_down[dst]:
            continue
        for src in neighbours(dst, len(board.face_up)):
            if best < 1.0 and _can_attack(board, src, dst):
                attacking = board.face_up[src]
                assert attacking is not None
                new = board.copy()
                new.face_up[src] = new.face_up[dst] = None
                chance = 1.0 - prevent_chance(board, attacking)
                best = max(best, chance * _take_zone(new, zone, moves - 1))
    return best


def _can_attack(board: Board, src: int, dst: int) -> bool:
    attacking, defending = board.face_up[src], board.face_up[dst]
    if attacking is None or defending is None or board.controller(src) != board.me:
        return False
    return board.face_down[src] > 0 and cards.rank(attacking) >= cards.rank(defending)


def outlook(board: Board, moves: int) -> float:
    """Won: more than anything else. Otherwise the board's worth after the best plain deploys of
    the moves left, plus the chance of winning before the turn ends."""
    if won(board):
        return WON
    return follow_up(board, moves) + WIN_IN_TURN * win_chance(board, moves)


def won(board: Board) -> bool:
    return any(
        moves_needed(board, board.me, zone) == 0 for zone in range(board.seats) if zone != board.me
    )


def follow_up(board: Board, moves: int) -> float:
    """Worth after greedily deploying our highest card where it helps most, for as long as a
    deploy adds worth: so an attack that opens nodes for our cards is worth what it opens.
    Deploys that would win are left to win_chance, so a win now beats a win later."""
    value = worth(board)
    own = sorted(c for c in board.hand if board.force(c) == board.forces[board.me])
    for _ in range(min(moves, len(own))):
        best, best_value = None, value
        for node in range(len(board.face_up)):
            if board.controller(node) is None and board.in_reach(node):
                new = board.copy()
                new.hand.remove(own[-1])
                new.face_up[node] = own[-1]
                new_value = worth(new)
                if new_value > best_value and not won(new):
                    best, best_value = new, new_value
        if best is None:
            break
        board, value = best, best_value
        own.pop()
    return value


# -- the expected worth of each action --------------------------------------------------------
def after_deploy(board: Board, card: int, node: int, moves: int) -> float:
    new = board.copy()
    new.hand.remove(card)
    new.face_up[node] = card
    return outlook(new, moves)


def after_reveal(board: Board, node: int, moves: int) -> float:
    """Expected worth over the forces the turned card may have."""
    total_unseen = sum(board.unseen.values())
    if total_unseen == 0:
        return worth(board)
    expected = 0.0
    new = board.copy()
    new.face_down[node] -= 1
    for suit in range(4):
        count = sum(board.unseen[cards.make(r, suit)] for r in range(2, 15))
        if count == 0:
            continue
        card = cards.make(GUESSED_VALUE, suit)
        world = new.copy()
        world.face_up[node] = card
        world.assign(board.me, card)
        expected += count / total_unseen * outlook(world, moves)
    return expected


def prevent_chance(board: Board, card: int) -> float:
    """Chance that some other seat holds a card of our force at least as high as card."""
    total = sum(board.unseen.values())
    force, need = board.force(card), cards.rank(card)
    able = sum(
        n for c, n in board.unseen.items() if board.force(c) == force and cards.rank(c) >= need
    )
    held = min(total, sum(h for s, h in enumerate(board.hand_sizes) if s != board.me))
    if total == 0 or able == 0:
        return 0.0
    return 1.0 - comb(total - able, held) / comb(total, held)


def after_attack(board: Board, src: int, dst: int, moves: int) -> float:
    attacking = board.face_up[src]
    assert attacking is not None
    stopped = prevent_chance(board, attacking)
    done = board.copy()
    done.face_up[src] = done.face_up[dst] = None
    prevented = board.copy()
    prevented.face_up[src] = None
    return (1.0 - stopped) * outlook(done, moves) + stopped * outlook(prevented, moves)


def after_draw(board: Board, moves: int) -> float:
    """The hand's worth with the expected card: ours or another force's, as the unseen cards
    go."""
    force = board.forces[board.me]
    total = sum(board.unseen.values())
    mine = sum(n for c, n in board.unseen.items() if force != NO_FORCE and board.force(c) == force)
    share = mine / total if total else 0.0
    own = sum(1 for card in board.hand if board.force(card) == force)
    other = len(board.hand) - own
    now = hand_worth(own, other)
    gain = share * (hand_worth(own + 1, other) - now)
    gain += (1.0 - share) * (hand_worth(own, other + 1) - now)
    return outlook(board, moves) + (1.0 - HAND_FADE * board.progress) * gain


# Turns before the cap from which a two-seat bot behind on nodes attacks rather than pass.
DESPERATE_TURNS = 60


def losing(board: Board, turns_left: int) -> bool:
    """Two seats, near the cap, fewer nodes than the opponent: when only attacks are left to
    try, a pass keeps a sure loss while an attack, prevented or not, loses nothing more."""
    if board.seats != 2 or turns_left > DESPERATE_TURNS:
        return False
    counts = [0] * board.seats
    for node in range(len(board.face_up)):
        owner = board.controller(node)
        if owner is not None:
            counts[owner] += 1
    return counts[board.me] < max(counts)


class StratoSphereBot(Bot):
    """Greedy on the expected worth of the board after each move."""

    name = "strato-sphere-greedy"

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        board = read_board(observation)
        if observation.HasField("attack"):
            return self.react(board, observation.attack, legal_actions)
        moves = observation.moves_left - 1
        values = [self.value(board, legal.action.strato_sphere, moves) for legal in legal_actions]
        best = values.index(max(values))
        if kind_of(legal_actions[best]) == "pass_turn" and losing(
            board, observation.turn_cap - observation.turns
        ):
            attacks = [i for i, legal in enumerate(legal_actions) if kind_of(legal) == "attack"]
            if attacks:
                best = max(attacks, key=lambda i: values[i])
        return int(legal_actions[best].index)

    def react(self, board: Board, attack: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        """Prevent with the lowest card that does it when the node attacked is ours."""
        if board.controller(attack.to_node) != board.me:
            return _index_of(legal_actions, "decline")
        prevents = [a for a in legal_actions if a.action.strato_sphere.HasField("prevent")]
        if not prevents:
            return _index_of(legal_actions, "decline")
        lowest = min(prevents, key=lambda a: a.action.strato_sphere.prevent.card.rank)
        return lowest.index

    def value(self, board: Board, action: Any, moves: int) -> float:
        """Expected worth after the action, with `moves` moves left in the turn after it."""
        kind = action.WhichOneof("kind")
        if kind == "deploy":
            card = cards.from_message(action.deploy.card)
            return after_deploy(board, card, action.deploy.node, moves)
        if kind == "reveal":
            return after_reveal(board, action.reveal.node, moves)
        if kind == "attack":
            return after_attack(board, action.attack.from_node, action.attack.to_node, moves)
        if kind == "draw":
            return after_draw(board, moves)
        return worth(board)


def kind_of(legal: pb.LegalAction) -> str:
    return str(legal.action.strato_sphere.WhichOneof("kind"))


def _index_of(legal_actions: Sequence[pb.LegalAction], kind: str) -> int:
    for legal in legal_actions:
        if legal.action.strato_sphere.WhichOneof("kind") == kind:
            return int(legal.index)
    return 0
