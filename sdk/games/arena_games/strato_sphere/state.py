"""The Strato-Sphere state machine: the deal, turns of three moves, attacks and preventions."""

from __future__ import annotations

import random
from bisect import insort
from collections.abc import Sequence
from functools import partial

from arena.v1 import referee_pb2 as pb

from arena_games.base import (
    Event,
    GameError,
    GameOptions,
    GameState,
    Result,
    SeatView,
    WorldSampler,
    uniform_draw,
)
from arena_games.strato_sphere import messages
from arena_games.strato_sphere.rules import (
    ATTACK_BASE,
    DECLINE,
    DEPLOY_BASE,
    DRAW,
    FACE,
    HAND_LIMIT,
    HAND_SIZE,
    MAX_NODES,
    NO_FORCE,
    PASS,
    PREVENT_BASE,
    REVEAL_BASE,
    STACK_CARDS,
    TURN_CAP,
    VALUE,
    ZONE_NODES,
    action_label,
    action_message,
    decks,
    force_table,
    forces_in_play,
    ring,
    turn_moves,
)

SETUP_CARDS = ZONE_NODES * STACK_CARDS + HAND_SIZE
"""Cards dealt per seat before the first move: its zone's stacks and its hand."""

DEAD_ROUND = "for a full round every seat could only pass"

_CONTROL_TABLES: dict[tuple[int, ...], tuple[int | None, ...]] = {}


def control_table(num_seats: int, forces: list[int]) -> tuple[int | None, ...]:
    """Per card id, the seat whose force the card is (None: nobody has it yet), with one more
    None at the end, so that an empty node's -1 reads None. Few force assignments ever occur,
    so each table is made once and kept."""
    key = (num_seats, *forces)
    table = _CONTROL_TABLES.get(key)
    if table is None:
        owner: dict[int, int] = {}
        for seat, own in enumerate(forces):
            owner.setdefault(own, seat)
        table = (*(owner.get(force) for force in force_table(num_seats)), None)
        _CONTROL_TABLES[key] = table
    return table


def ranked(standing: Sequence[float], reason: str) -> Result:
    """Ranks by standing (a zone taken, or nodes controlled), higher first, equal standings
    sharing a rank. A seat's score is the share of the other seats it outranks, a shared rank
    counting half: 1, 1/2 or 0 with two seats, so scores add up the same in every ending."""
    ranks = [sum(1 for other in standing if other > mine) for mine in standing]
    others = len(standing) - 1
    scores = [
        sum(1.0 if rank < theirs else 0.5 if rank == theirs else 0.0 for theirs in ranks) - 0.5
        for rank in ranks
    ]
    return Result(
        ranks=tuple(ranks), scores=tuple(score / others for score in scores), reason=reason
    )


class StratoSphereOptions(GameOptions):
    """Strato-Sphere has no options; the seat count picks colours (2) or suits (4)."""


class StratoSphereState(GameState[StratoSphereOptions]):
    def __init__(self, options: StratoSphereOptions, num_seats: int) -> None:
        super().__init__(options, num_seats)
        self.num_nodes = ZONE_NODES * num_seats
        # Fixed by the seat count: each card id's force, each node's two neighbours.
        self.card_force = force_table(num_seats)
        self.adjacent = ring(self.num_nodes)
        # Undealt cards, sorted: the deal and then the resource pile.
        self.pile: list[int] = list(range(52 * decks(num_seats)))
        self.stacks: list[list[int]] = [[] for _ in range(self.num_nodes)]  # last is the top
        self.face_up: list[int] = [-1] * self.num_nodes
        self.hands: list[list[int]] = [[] for _ in range(num_seats)]
        self.discard: list[int] = []
        self.forces: list[int] = [NO_FORCE] * num_seats
        self.current = 0
        self.moves_left = turn_moves(0, num_seats)
        self.turns = 0
        self.dealt = 0
        self.drawing: int | None = None
        # The pending attack (attacker, from node, to node), the seats still to react in
        # order, and those that declined.
        self.attack: tuple[int, int, int] | None = None
        self.reactors: list[int] = []
        self.declined: list[int] = []
        # Turns in a row in which the seat to move could only pass: a full round of them is
        # a dead position, and the game ends.
        self.forced_passes = 0
        # Turns in a row passed at their first move (public: the events show it). Nothing on
        # the board changes in such a run, so a world sampler can tell from the board now which
        # of those passes were forced (see strato_worlds.py).
        self.passed_turns = 0
        self.winner: int | None = None
        self.over_reason = ""

    # -- the board ----------------------------------------------------------------------------
    def controller(self, node: int) -> int | None:
        """The seat whose force the node's face-up card is; None when uncontrolled."""
        card = self.face_up[node]
        if card < 0:
            return None
        force = self.card_force[card]
        for seat, own in enumerate(self.forces):
            if own == force:
                return seat
        return None

    def control(self) -> list[int | None]:
        """controller(node) of every node, by node, worked out in one pass."""
        table = control_table(self.num_seats, self.forces)
        return [table[card] for card in self.face_up]

    def nodes_controlled(self, seat: int) -> int:
        return self.control().count(seat)

    # -- whose move ---------------------------------------------------------------------------
    def is_chance(self) -> bool:
        if self.over_reason:
            return False
        return self.dealt < self.num_seats * SETUP_CARDS or self.drawing is not None

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self.is_chance():
            return []
        return uniform_draw(self.pile, len(FACE))

    def _is_chance_outcome(self, outcome: int) -> bool:
        return self.is_chance() and outcome in self.pile

    def to_move(self) -> tuple[int, ...]:
        if self.over_reason or self.dealt < self.num_seats * SETUP_CARDS:
            return ()
        if self.drawing is not None:
            return ()
        if self.attack is not None:
            return (self.reactors[0],)
        return (self.current,)

    def turn_unmoved(self) -> bool:
        """Whether the turn under way has made no move yet (its first turn is short in the
        first round, so this is not the same as three moves left)."""
        return self.moves_left == turn_moves(self.turns, self.num_seats)

    def is_over(self) -> bool:
        return bool(self.over_reason)

    def result(self) -> Result:
        if not self.over_reason:
            raise GameError("the game is not over")
        if self.winner is not None:
            standing = [1 if seat == self.winner else 0 for seat in range(self.num_seats)]
        else:
            control = self.control()
            standing = [control.count(seat) for seat in range(self.num_seats)]
        return ranked(standing, self.over_reason)

    # -- legal actions ------------------------------------------------------------------------
    def _legal_actions(self, seat: int) -> list[int]:
        if self.attack is not None:
            return self._reactions(seat)
        return self._turn_actions(seat)

    def could_only_pass(self, seat: int) -> bool:
        """Whether the seat, opening a turn on this board with its hand, could only pass: what
        makes a pass forced, and a full round of them a dead position."""
        return self._turn_actions(seat) == [PASS]

    def _turn_actions(self, seat: int) -> list[int]:
        """The moves of a seat whose turn it is (no attack pending)."""
        # Built group by group in id order (pass, draw, reveals, deploys, attacks), each group
        # in order, so the list comes out sorted without sorting it.
        control = self.control()
        stacks = self.stacks
        actions = [PASS, DRAW] if self.pile and len(self.hands[seat]) < HAND_LIMIT else [PASS]
        adjacent, home = self.adjacent, range(seat * ZONE_NODES, seat * ZONE_NODES + ZONE_NODES)
        open_nodes: list[int] = []  # uncontrolled nodes within reach, to reveal and deploy on
        sources: list[int] = []  # the seat's nodes with a face-down card, to attack from
        for node, owner in enumerate(control):
            if owner is None:
                # Reach: the seat's own zone, or next to a node it controls.
                left, right = adjacent[node]
                if node in home or control[left] == seat or control[right] == seat:
                    open_nodes.append(node)
                    if stacks[node]:
                        actions.append(REVEAL_BASE + node)
            elif owner == seat and stacks[node]:
                sources.append(node)
        force = self.forces[seat]
        if force == NO_FORCE:
            return actions
        if open_nodes:
            force_of = self.card_force
            faces = sorted({FACE[c] for c in self.hands[seat] if force_of[c] == force})
            deploys = [DEPLOY_BASE + f * MAX_NODES for f in faces]
            actions += [deploy + node for deploy in deploys for node in open_nodes]
        if sources:
            actions += self._attacks(seat, sources, control)
        return actions

    def _attacks(self, seat: int, sources: list[int], control: list[int | None]) -> list[int]:
        """Attacks from the sources (nodes the seat controls with a face-down card left) at an
        adjacent opponent node of equal or lower value with a face-down card left; sorted."""
        found = []
        stacks, face_up = self.stacks, self.face_up
        for src in sources:
            strength = VALUE[face_up[src]]
            for dst in self.adjacent[src]:
                if control[dst] in (None, seat) or not stacks[dst]:
                    continue
                if VALUE[face_up[dst]] <= strength:
                    found.append(ATTACK_BASE + src * MAX_NODES + dst)
        found.sort()
        return found

    def _reactions(self, seat: int) -> list[int]:
        """Decline, or prevent with a card of the attacker's force of equal or higher value."""
        assert self.attack is not None
        attacking = self.face_up[self.attack[1]]
        force_of = self.card_force
        force, need = force_of[attacking], VALUE[attacking]
        faces = {FACE[c] for c in self.hands[seat] if force_of[c] == force and VALUE[c] >= need}
        return [DECLINE] + [PREVENT_BASE + f for f in sorted(faces)]

    # -- moves --------------------------------------------------------------------------------
    # apply_chance and apply keep GameState's checks and errors; they are written out here to
    # spare a random playout a few calls per step, and reuse the frozen history entries.

    # -- chance -------------------------------------------------------------------------------
    def _apply_chance(self, card: int) -> list[Event]:
        self.pile.remove(card)
        step = len(self.history)
        if self.dealt < self.num_seats * SETUP_CARDS:
            return self._deal(step, card)
        seat = self.drawing
        assert seat is not None
        self.drawing = None
        insort(self.hands[seat], card)
        return messages.card_drawn(step, seat, card) + self._finish_move(step)

    def _deal(self, step: int, card: int) -> list[Event]:
        """Node cards first, one at a time around the ring three times, then hands one card at a
        time from seat 0."""
        index = self.dealt
        self.dealt += 1
        node_cards = self.num_nodes * STACK_CARDS
        if index < node_cards:
            node = index % self.num_nodes
            self.stacks[node].append(card)
            return messages.node_card_dealt(step, node, card)
        seat = (index - node_cards) % self.num_seats
        insort(self.hands[seat], card)
        return messages.card_drawn(step, seat, card)

    # -- decisions ----------------------------------------------------------------------------
    def _apply_action(self, seat: int, action: int) -> list[Event]:
        # The id ranges of rules.decode, in the order of how often a random game meets them.
        step = len(self.history)
        if action == PASS:
            # apply() has just computed the legal list; a pass that opens a turn with nothing
            # else legal is forced.
            only_pass = len(self._kept_legal_actions(seat)) == 1
            opening = self.turn_unmoved()
            forced = only_pass and opening
            self.forced_passes = self.forced_passes + 1 if forced else 0
            if opening:
                self.passed_turns += 1
            return self._end_turn(step, passed=True)
        if action == DRAW:
            self.drawing = seat
            return []
        if action == DECLINE:
            return self._decline(step, seat)
        if action < DEPLOY_BASE:
            return self._reveal(step, seat, action - REVEAL_BASE)
        if action < ATTACK_BASE:
            card_face, node = divmod(action - DEPLOY_BASE, MAX_NODES)
            return self._deploy(step, seat, card_face, node)
        if action < PREVENT_BASE:
            src, dst = divmod(action - ATTACK_BASE, MAX_NODES)
            return self._declare_attack(step, seat, src, dst)
        return self._prevent(step, seat, action - PREVENT_BASE)

    def _take_from_hand(self, seat: int, card_face: int) -> int:
        """The lowest id of that face in the hand: copies of a face are interchangeable."""
        hand = self.hands[seat]
        card = next(c for c in hand if FACE[c] == card_face)
        hand.remove(card)
        return card

    def _replace_face_up(self, node: int, card: int) -> int:
        """Put card face up on node; an old face-up card goes to the discard pile first."""
        old = self.face_up[node]
        if old >= 0:
            self.discard.append(old)
        self.face_up[node] = card
        return old

    def _reveal(self, step: int, seat: int, node: int) -> list[Event]:
        card = self.stacks[node].pop()
        old = self._replace_face_up(node, card)
        events = messages.card_revealed(step, seat, node, card, old)
        events += self._assign_forces(step, seat, card)
        return events + self._finish_move(step)

    def _assign_forces(self, step: int, seat: int, card: int) -> list[Event]:
        """A revealer without a force takes the revealed one if nobody has it; once all but one
        seat have a force, the last seat gets the one left."""
        events = []
        force = self.card_force[card]
        if self.forces[seat] == NO_FORCE and force not in self.forces:
            self.forces[seat] = force
            events += messages.force_assigned(step, seat, force)
        without = [s for s in range(self.num_seats) if self.forces[s] == NO_FORCE]
        if len(without) == 1:
            last = without[0]
            (remaining,) = [f for f in forces_in_play(self.num_seats) if f not in self.forces]
            self.forces[last] = remaining
            events += messages.force_assigned(step, last, remaining)
        return events

    def _deploy(self, step: int, seat: int, card_face: int, node: int) -> list[Event]:
        card = self._take_from_hand(seat, card_face)
        old = self._replace_face_up(node, card)
        return messages.card_deployed(step, seat, node, card, old) + self._finish_move(step)

    def _declare_attack(self, step: int, seat: int, src: int, dst: int) -> list[Event]:
        """Every other seat, in seat order from the defender, may prevent the attack."""
        defender = self.controller(dst)
        assert defender is not None
        self.attack = (seat, src, dst)
        order = [(defender + k) % self.num_seats for k in range(self.num_seats)]
        self.reactors = [s for s in order if s != seat]
        self.declined = []
        return messages.attack_declared(step, seat, src, dst, self.face_up[src], self.face_up[dst])

    def _prevent(self, step: int, seat: int, card_face: int) -> list[Event]:
        assert self.attack is not None
        _, src, _ = self.attack
        card = self._take_from_hand(seat, card_face)
        attacking = self.face_up[src]
        self.discard += [attacking, card]
        self.face_up[src] = -1
        self._clear_attack()
        return messages.attack_prevented(step, seat, card, attacking, src) + self._finish_move(step)

    def _decline(self, step: int, seat: int) -> list[Event]:
        self.reactors.pop(0)
        self.declined.append(seat)
        events = messages.prevention_declined(step, seat)
        if self.reactors:
            return events
        assert self.attack is not None
        attacker, src, dst = self.attack
        attacking, defending = self.face_up[src], self.face_up[dst]
        self.discard += [attacking, defending]
        self.face_up[src] = self.face_up[dst] = -1
        self._clear_attack()
        events += messages.attack_resolved(step, attacker, src, dst, attacking, defending)
        return events + self._finish_move(step)

    def _clear_attack(self) -> None:
        self.attack = None
        self.reactors = []
        self.declined = []

    # -- moves, turns and the end -------------------------------------------------------------
    def _finish_move(self, step: int) -> list[Event]:
        self.passed_turns = 0
        taken = self._zone_taken()
        if taken is not None:
            seat, zone = taken
            self.winner = seat
            taken_reason = f"seat {seat} controls all three nodes of seat {zone}'s zone"
            self.over_reason = f"{taken_reason}; {self._node_counts()}"
            return messages.zone_taken(step, seat, zone)
        self.forced_passes = 0
        self.moves_left -= 1
        if self.moves_left == 0:
            return self._end_turn(step, passed=False)
        return []

    def _zone_taken(self) -> tuple[int, int] | None:
        """(seat, zone) when a seat controls a whole opponent zone. A force assignment can hand
        nodes to a seat that is not moving, so every seat is checked, the mover first."""
        control = self.control()
        # Each zone's controller when one seat controls all three of its nodes.
        held = [
            control[first] if control[first] == control[first + 1] == control[first + 2] else None
            for first in range(0, self.num_nodes, ZONE_NODES)
        ]
        for k in range(self.num_seats):
            seat = (self.current + k) % self.num_seats
            for zone in range(self.num_seats):
                if zone != seat and held[zone] == seat:
                    return seat, zone
        return None

    def _end_turn(self, step: int, passed: bool) -> list[Event]:
        seat = self.current
        self.turns += 1
        events = messages.turn_ended(step, seat, passed)
        if self.forced_passes == self.num_seats:
            self.over_reason = f"dead position: {DEAD_ROUND}; {self._node_counts()}"
            return events
        if self.turns >= TURN_CAP:
            self.over_reason = f"turn cap of {TURN_CAP} reached; {self._node_counts()}"
            return events
        self.current = (seat + 1) % self.num_seats
        self.moves_left = turn_moves(self.turns, self.num_seats)
        return events

    def _node_counts(self) -> str:
        control = self.control()
        return "nodes controlled " + "-".join(
            str(control.count(seat)) for seat in range(self.num_seats)
        )

    # -- what seats see -----------------------------------------------------------------------
    def observation(self, seat: int | None) -> pb.Observation:
        return messages.observation(self, seat)

    def action_label(self, action: int) -> str:
        return action_label(action)

    def action_message(self, action: int) -> pb.Action:
        return action_message(action)

    def render(self, seat: int | None) -> str:
        return messages.render_observation(self.observation(seat).strato_sphere)

    # -- search and tests ---------------------------------------------------------------------
    def clone(self) -> StratoSphereState:
        other = StratoSphereState.__new__(StratoSphereState)
        other.options = self.options
        other.num_seats = self.num_seats
        other.history = list(self.history)
        other.num_nodes = self.num_nodes
        other.card_force = self.card_force
        other.adjacent = self.adjacent
        other.pile = list(self.pile)
        other.stacks = [list(stack) for stack in self.stacks]
        other.face_up = list(self.face_up)
        other.hands = [list(hand) for hand in self.hands]
        other.discard = list(self.discard)
        other.forces = list(self.forces)
        other.current = self.current
        other.moves_left = self.moves_left
        other.turns = self.turns
        other.dealt = self.dealt
        other.drawing = self.drawing
        other.attack = self.attack
        other.reactors = list(self.reactors)
        other.declined = list(self.declined)
        other.forced_passes = self.forced_passes
        other.passed_turns = self.passed_turns
        other.winner = self.winner
        other.over_reason = self.over_reason
        self._share_kept_legal_actions(other)
        return other

    @classmethod
    def world_sampler(
        cls, options: StratoSphereOptions, view: SeatView
    ) -> WorldSampler[StratoSphereOptions]:
        from arena_games.strato_sphere.strato_worlds import StratoSphereWorlds

        return StratoSphereWorlds(options, view)

    def resample(self, seat: int, rng: random.Random) -> StratoSphereState:
        """What the seat cannot see (the pile, the face-down node cards, the other hands) dealt
        afresh from the cards it has not seen, uniformly over the worlds consistent with what it
        saw (strato_worlds.py): a clone and a shuffle, no replay. The world's history is empty,
        since its chance outcomes are not those of this match."""
        from arena_games.strato_sphere.strato_worlds import HiddenDeal

        return self.kept_for_resample(seat, partial(HiddenDeal, self, seat)).deal(rng)

    def key(self) -> tuple[object, ...]:
        return (
            self.num_seats,
            tuple(self.pile),
            tuple(tuple(stack) for stack in self.stacks),
            tuple(self.face_up),
            tuple(tuple(hand) for hand in self.hands),
            tuple(self.discard),
            tuple(self.forces),
            self.current,
            self.moves_left,
            self.turns,
            self.dealt,
            self.drawing,
            self.attack,
            tuple(self.reactors),
            tuple(self.declined),
            self.forced_passes,
            self.passed_turns,
            self.winner,
            self.over_reason,
            tuple((s.seat, s.action) for s in self.history),
        )
