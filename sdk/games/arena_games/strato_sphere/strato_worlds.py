"""Strato-Sphere worlds a seat cannot tell apart from its own (determinizations), for search.

What a seat knows. Every card it has ever seen is still in sight: a card leaves a hand only
face up (deploy) or onto the face-up discard pile (prevent), and a face-up card leaves only for
the discard pile. So the cards it has not seen are exactly those outside its observation, and
they lie in the pile, the face-down stacks and the other hands. Decline and pass are always
legal, so they say nothing of a hand, and every other move shows its card.

One inference remains, from the dead-position rule. A pass that opens a turn is forced when
nothing else was legal; a full round of forced passes ends the game. Whether another seat's
pass was forced can hang on its hand (did it hold a card of its force to deploy?). A run of
turns passed at their first move changes nothing on the board, so every seat is in the same
spot each time round, and:
- a run that some seat ended by moving was broken by a seat that could move all along, so it
  held the game open; past runs constrain nothing;
- the run still going on now (`passed_turns` turns) is judged on the board and hands of now:
  the game went on, so if it has lasted a full round, some seat could have moved; and the
  state's count of forced passes in a row is the count, from the latest turn back, of seats
  that could only pass.
Worlds are dealt uniformly (a shuffle of the unseen cards into the places' sizes) and, when
that run spans a round, those where every seat could only pass are rejected.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from arena.v1 import referee_pb2 as pb

from arena_games import cards
from arena_games.base import GameError, GameState, SeatView, WorldSampler
from arena_games.playout import drawn_apart
from arena_games.strato_sphere.rules import FACE, decks
from arena_games.strato_sphere.state import (
    DEAD_ROUND,
    SETUP_CARDS,
    StratoSphereOptions,
    StratoSphereState,
)

MAX_TRIES = 100_000
"""Rejections before a view is declared impossible: a real view is accepted far sooner (a
rejected world has every seat of a round without a card it could play)."""


class HiddenDeal:
    """Deals of what one seat cannot see in a state, keeping everything it can see. Reads the
    visible cards and the sizes of the hidden places, never which hidden card is where."""

    def __init__(self, state: StratoSphereState, seat: int) -> None:
        self.seat = seat
        visible = {c for c in state.face_up if c >= 0} | set(state.discard)
        visible |= set(state.hands[seat])
        self.unseen = [c for c in range(52 * decks(state.num_seats)) if c not in visible]
        self.stack_sizes = [len(stack) for stack in state.stacks]
        self.hand_sizes = [len(hand) for hand in state.hands]
        hidden = sum(self.stack_sizes) + sum(self.hand_sizes) - self.hand_sizes[seat]
        self.placed = hidden  # unseen cards in stacks and the other seats' hands
        if hidden + len(state.pile) != len(self.unseen):
            raise GameError("the view does not account for every card")
        n = state.num_seats
        # The seats of the run's turns, the latest first; a round of them is enough, since a
        # seat's spot is the same each time round. A game that is over did not pass the turn on.
        last = state.current if state.over_reason else state.current - 1
        self.run = [(last - k) % n for k in range(min(state.passed_turns, n))]
        self.dead = state.over_reason.startswith(f"dead position: {DEAD_ROUND}")
        # What every world shares, with nothing in the places each deal fills, so that a
        # deal's clone copies no history and no card it replaces.
        base = state.clone()
        base.history, base.pile = [], []
        base.stacks = [[] for _ in state.stacks]
        base.hands = [hand if other == seat else [] for other, hand in enumerate(base.hands)]
        self.base = base

    def deal(self, rng: random.Random) -> StratoSphereState:
        """One world, uniform over those consistent with the seat's view (rejection)."""
        for _ in range(MAX_TRIES):
            world = self._shuffled(rng)
            if self._settle_forced_passes(world):
                world.forget_legal_actions()
                return world
        raise GameError("no world is consistent with this view")

    def _shuffled(self, rng: random.Random) -> StratoSphereState:
        world = self.base.clone()
        # The pile's order is chance's to draw: only the cards dealt to places are drawn here.
        pool, rest = drawn_apart(self.unseen, self.placed, rng)
        at = 0
        for node, size in enumerate(self.stack_sizes):
            world.stacks[node] = pool[at : at + size]
            at += size
        for other, size in enumerate(self.hand_sizes):
            if other != self.seat:
                world.hands[other] = sorted(pool[at : at + size])
                at += size
        world.pile = sorted(rest)
        return world

    def _settle_forced_passes(self, world: StratoSphereState) -> bool:
        """Set the count of forced passes in a row the world's hands imply; False when those
        hands would have ended the game already (or, for a game that ended in a dead position,
        would not have)."""
        count = 0
        for other in self.run:
            if not world.could_only_pass(other):
                break
            count += 1
        world.forced_passes = count
        return (count == world.num_seats) == self.dead


class StratoSphereWorlds(WorldSampler[StratoSphereOptions]):
    """Worlds from a seat's view as the wire carries it: the observation gives the board, the
    seat's hand and every size; the events give how many turns in a row were passed at their
    first move (see the module's docstring for what that implies)."""

    def __init__(self, options: StratoSphereOptions, view: SeatView) -> None:
        super().__init__(view)
        self.deals = HiddenDeal(state_seen(options, view), self.seat)

    def sample(self, rng: random.Random) -> StratoSphereState:
        return self.deals.deal(rng)

    def hidden(self, state: GameState[StratoSphereOptions]) -> set[tuple[object, int]]:
        """The pile, each face-down card by node and depth, each other hand; by face, since two
        copies of a face are the same card to every seat."""
        assert isinstance(state, StratoSphereState)
        found: set[tuple[object, int]] = {("pile", FACE[c]) for c in state.pile}
        for node, stack in enumerate(state.stacks):
            found |= {(("node", node, depth), FACE[c]) for depth, c in enumerate(stack)}
        for other, hand in enumerate(state.hands):
            if other != self.seat:
                found |= {(("hand", other), FACE[c]) for c in hand}
        return found


class CopyIds:
    """Card ids for the faces a seat sees: with four seats each face has two copies (ids face
    and face + 52), which nobody can tell apart; each sighting takes one the view leaves free."""

    def __init__(self, num_seats: int) -> None:
        self.copies = decks(num_seats)
        self.taken: set[int] = set()

    def take(self, face: int, above: int = -1) -> int:
        for copy in range(self.copies):
            card = copy * 52 + face
            if card > above and card not in self.taken:
                self.taken.add(card)
                return card
        raise GameError(f"the view shows {cards.label(face)} more often than the deck holds it")

    def hand(self, faces: list[int]) -> list[int]:
        """A hand is kept in id order, so its ids must rise along the faces shown."""
        held: list[int] = []
        for face in faces:
            held.append(self.take(face, held[-1] if held else -1))
        return held


def state_seen(options: StratoSphereOptions, view: SeatView) -> StratoSphereState:
    """A state showing the seat its view; the hidden places hold placeholders (-1) of the
    right sizes, for HiddenDeal to fill."""
    seen = view.observation.strato_sphere
    seat, n = view.seat, view.start.num_seats
    state = StratoSphereState(options, n)
    ids = CopyIds(n)
    state.hands = [[-1] * size for size in seen.hand_sizes]
    state.hands[seat] = ids.hand([cards.from_message(c) for c in seen.hand])
    for node in seen.nodes:
        state.stacks[node.index] = [-1] * node.face_down
        if node.HasField("face_up"):
            state.face_up[node.index] = ids.take(cards.from_message(node.face_up))
    state.discard = [ids.take(cards.from_message(c)) for c in seen.discard_pile]
    state.pile = [-1] * seen.resource_pile_size
    state.forces = [int(force) for force in seen.forces]
    state.current, state.moves_left, state.turns = seen.current_seat, seen.moves_left, seen.turns
    state.dealt = n * SETUP_CARDS
    if seen.HasField("attack"):
        pending = seen.attack
        state.attack = (pending.attacker, pending.from_node, pending.to_node)
        state.declined = list(pending.declined)
        defender = state.controller(pending.to_node)
        if defender is None:
            raise GameError("the view's attack is on an uncontrolled node")
        order = [(defender + k) % n for k in range(n)]
        asked = [s for s in order if s != pending.attacker]
        state.reactors = asked[len(state.declined) :]
    # A move made in the turn under way ended any run of passes; a first-round turn starts
    # with fewer moves than three.
    if state.turn_unmoved():
        state.passed_turns = passed_turns(view.events, n)
    return state


def passed_turns(events: Sequence[pb.Event], num_seats: int) -> int:
    """Turns in a row, ending with the latest, that were passed at their first move: trailing
    turn_ended events with passed set, each right after another turn's end (or after the deal).
    Events of the turn under way, which has made no move yet (an attack being asked about), are
    skipped."""
    deal_steps = num_seats * SETUP_CARDS
    kinds = [_kind(event) for event in events]
    at = len(kinds) - 1
    while at >= 0 and kinds[at][0] != "turn_ended":
        at -= 1
    run = 0
    while at >= 0 and kinds[at] == ("turn_ended", True):
        before = at - 1
        if before >= 0 and kinds[before][0] != "turn_ended" and events[before].step >= deal_steps:
            break  # the turn made a move before passing
        run += 1
        at = before
    return run


def _kind(event: pb.Event) -> tuple[str, bool]:
    """The kind of a Strato-Sphere wire event, and for a turn's end whether it was a pass."""
    typed = event.strato_sphere
    kind = typed.WhichOneof("kind") or ""
    return kind, kind == "turn_ended" and typed.turn_ended.passed
