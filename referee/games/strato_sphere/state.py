"""The Strato-Sphere state machine: the deal, turns of three moves, attacks and preventions."""

from __future__ import annotations

import random
from bisect import insort

from arena.v1 import referee_pb2 as pb

from referee.games.base import (
    CHANCE,
    Event,
    GameError,
    GameOptions,
    GameState,
    Result,
    uniform_outcomes,
)
from referee.games.strato_sphere import messages
from referee.games.strato_sphere.rules import (
    DECLINE,
    DRAW,
    HAND_LIMIT,
    HAND_SIZE,
    MOVES_PER_TURN,
    NO_FORCE,
    PASS,
    STACK_CARDS,
    TURN_CAP,
    ZONE_NODES,
    action_label,
    action_message,
    attack_action,
    decks,
    decode,
    deploy_action,
    face,
    force_of,
    forces_in_play,
    neighbours,
    prevent_action,
    reveal_action,
    value,
    zone_nodes,
)


class StratoSphereOptions(GameOptions):
    """Strato-Sphere has no options; the seat count picks colours (2) or suits (4)."""


class StratoSphereState(GameState[StratoSphereOptions]):
    def __init__(self, options: StratoSphereOptions, num_seats: int) -> None:
        super().__init__(options, num_seats)
        self.num_nodes = ZONE_NODES * num_seats
        # Undealt cards, sorted: the deal and then the resource pile.
        self.pile: list[int] = list(range(52 * decks(num_seats)))
        self.stacks: list[list[int]] = [[] for _ in range(self.num_nodes)]  # last is the top
        self.face_up: list[int] = [-1] * self.num_nodes
        self.hands: list[list[int]] = [[] for _ in range(num_seats)]
        self.discard: list[int] = []
        self.forces: list[int] = [NO_FORCE] * num_seats
        self.current = 0
        self.moves_left = MOVES_PER_TURN
        self.turns = 0
        self.dealt = 0
        self.drawing: int | None = None
        # The pending attack (attacker, from node, to node), the seats still to react in
        # order, and those that declined.
        self.attack: tuple[int, int, int] | None = None
        self.reactors: list[int] = []
        self.declined: list[int] = []
        self.winner: int | None = None
        self.over_reason = ""

    # -- the board ----------------------------------------------------------------------------
    def controller(self, node: int) -> int | None:
        """The seat whose force the node's face-up card is; None when uncontrolled."""
        card = self.face_up[node]
        if card < 0:
            return None
        force = force_of(card, self.num_seats)
        for seat, own in enumerate(self.forces):
            if own == force:
                return seat
        return None

    def nodes_controlled(self, seat: int) -> int:
        return sum(1 for node in range(self.num_nodes) if self.controller(node) == seat)

    def _setup_cards(self) -> int:
        return self.num_seats * (ZONE_NODES * STACK_CARDS + HAND_SIZE)

    def _dealing(self) -> bool:
        return self.dealt < self._setup_cards()

    # -- whose move ---------------------------------------------------------------------------
    def is_chance(self) -> bool:
        if self.over_reason:
            return False
        return self._dealing() or self.drawing is not None

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self.is_chance():
            return []
        return uniform_outcomes(self.pile)

    def _is_chance_outcome(self, outcome: int) -> bool:
        return self.is_chance() and outcome in self.pile

    def to_move(self) -> tuple[int, ...]:
        if self.over_reason or self.is_chance():
            return ()
        if self.attack is not None:
            return (self.reactors[0],)
        return (self.current,)

    def is_over(self) -> bool:
        return bool(self.over_reason)

    def result(self) -> Result:
        if not self.over_reason:
            raise GameError("the game is not over")
        if self.winner is not None:
            scores = [1.0 if seat == self.winner else 0.0 for seat in range(self.num_seats)]
        else:
            scores = [float(self.nodes_controlled(seat)) for seat in range(self.num_seats)]
        return Result.from_scores(scores, self.over_reason)

    # -- legal actions ------------------------------------------------------------------------
    def _legal_actions(self, seat: int) -> list[int]:
        if self.attack is not None:
            return self._reactions(seat)
        control = [self.controller(node) for node in range(self.num_nodes)]
        open_nodes = [node for node in range(self.num_nodes) if control[node] is None]
        actions = [PASS]
        if self.pile and len(self.hands[seat]) < HAND_LIMIT:
            actions.append(DRAW)
        actions += [reveal_action(node) for node in open_nodes if self.stacks[node]]
        force = self.forces[seat]
        if force != NO_FORCE:
            faces = sorted({face(c) for c in self.hands[seat] if self._force(c) == force})
            actions += [deploy_action(f, node) for f in faces for node in open_nodes]
            actions += self._attacks(seat, control)
        return sorted(actions)

    def _attacks(self, seat: int, control: list[int | None]) -> list[int]:
        """Attacks from a node the seat controls with a face-down card left, at an adjacent
        opponent node of equal or lower value with a face-down card left."""
        found = []
        for src in range(self.num_nodes):
            if control[src] != seat or not self.stacks[src]:
                continue
            for dst in neighbours(src, self.num_nodes):
                if control[dst] in (None, seat) or not self.stacks[dst]:
                    continue
                if value(self.face_up[dst]) <= value(self.face_up[src]):
                    found.append(attack_action(src, dst))
        return found

    def _reactions(self, seat: int) -> list[int]:
        """Decline, or prevent with a card of the attacker's force of equal or higher value."""
        assert self.attack is not None
        attacking = self.face_up[self.attack[1]]
        force, need = self._force(attacking), value(attacking)
        faces = {face(c) for c in self.hands[seat] if self._force(c) == force and value(c) >= need}
        return [DECLINE] + [prevent_action(f) for f in sorted(faces)]

    def _force(self, card: int) -> int:
        return force_of(card, self.num_seats)

    # -- chance -------------------------------------------------------------------------------
    def _apply_chance(self, card: int) -> list[Event]:
        self.pile.remove(card)
        step = len(self.history)
        if self._dealing():
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
        kind, a, b = decode(action)
        step = len(self.history)
        if kind == "pass":
            return self._end_turn(step, passed=True)
        if kind == "draw":
            self.drawing = seat
            return []
        if kind == "reveal":
            return self._reveal(step, seat, a)
        if kind == "deploy":
            return self._deploy(step, seat, a, b)
        if kind == "attack":
            return self._declare_attack(step, seat, a, b)
        if kind == "prevent":
            return self._prevent(step, seat, a)
        return self._decline(step, seat)

    def _take_from_hand(self, seat: int, card_face: int) -> int:
        """The lowest id of that face in the hand: copies of a face are interchangeable."""
        hand = self.hands[seat]
        card = next(c for c in hand if face(c) == card_face)
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
        force = self._force(card)
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
        taken = self._zone_taken()
        if taken is not None:
            seat, zone = taken
            self.winner = seat
            self.over_reason = f"seat {seat} controls all three nodes of seat {zone}'s zone"
            return messages.zone_taken(step, seat, zone)
        self.moves_left -= 1
        if self.moves_left == 0:
            return self._end_turn(step, passed=False)
        return []

    def _zone_taken(self) -> tuple[int, int] | None:
        """(seat, zone) when a seat controls a whole opponent zone. A force assignment can hand
        nodes to a seat that is not moving, so every seat is checked, the mover first."""
        for k in range(self.num_seats):
            seat = (self.current + k) % self.num_seats
            for zone in range(self.num_seats):
                if zone != seat and all(self.controller(n) == seat for n in zone_nodes(zone)):
                    return seat, zone
        return None

    def _end_turn(self, step: int, passed: bool) -> list[Event]:
        seat = self.current
        self.turns += 1
        events = messages.turn_ended(step, seat, passed)
        if self.turns >= TURN_CAP:
            counts = "-".join(str(self.nodes_controlled(s)) for s in range(self.num_seats))
            self.over_reason = f"turn cap of {TURN_CAP} reached; nodes controlled {counts}"
            return events
        self.current = (seat + 1) % self.num_seats
        self.moves_left = MOVES_PER_TURN
        return events

    # -- what seats see -----------------------------------------------------------------------
    def observation(self, seat: int | None) -> pb.Observation:
        return pb.Observation(strato_sphere=messages.observation(self, seat))

    def action_label(self, action: int) -> str:
        return action_label(action)

    def action_message(self, action: int) -> pb.Action:
        return action_message(action)

    def render(self, seat: int | None) -> str:
        return messages.render_observation(messages.observation(self, seat))

    # -- search and tests ---------------------------------------------------------------------
    def clone(self) -> StratoSphereState:
        other = StratoSphereState.__new__(StratoSphereState)
        other.options = self.options
        other.num_seats = self.num_seats
        other.history = list(self.history)
        other.num_nodes = self.num_nodes
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
        other.winner = self.winner
        other.over_reason = self.over_reason
        other._legal_cache = self._legal_cache
        return other

    def resample(self, seat: int, rng: random.Random) -> StratoSphereState:
        """Shuffle every card the seat cannot see (the pile, face-down node cards, the other
        hands) among their places, rewrite the history's chance outcomes to match and replay it.
        Replaying rather than permuting the state keeps the history exact when two copies of a
        face swap roles: the replayed state differs at most in which copy sits where, which no
        seat can tell apart."""
        hidden = sorted(
            self.pile
            + [card for stack in self.stacks for card in stack]
            + [card for other, hand in enumerate(self.hands) if other != seat for card in hand]
        )
        shuffled = list(hidden)
        rng.shuffle(shuffled)
        mapping = dict(zip(hidden, shuffled, strict=True))
        state = StratoSphereState(self.options, self.num_seats)
        for step in self.history:
            if step.seat == CHANCE:
                state.apply_chance(mapping.get(step.action, step.action))
            else:
                state.apply(step.seat, step.action)
        return state

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
            self.winner,
            self.over_reason,
            tuple((s.seat, s.action) for s in self.history),
        )
