"""Re-dealing what a seat cannot see, so that the re-dealt history still replays and shows the
seat exactly what it saw.

What a seat cannot locate: the deck (an unordered pile), the opponent's hand and the
opponent's face-down cards, less the cards it knows to be there (`Table.exposed`). Two
relabelings of the history make a new world:

1. Each face-down card of the opponent (a Blank, the card put down for a swap, a Draw choice
   not yet turned up) is chosen again among the cards the opponent held when it was put down
   and still holds: it is swapped with that card from the placement step on.
2. The unseen cards are permuted among themselves, each only with cards that entered the deck
   at the same reshuffle, and every reference to them after that reshuffle is relabeled.

One rule turns on hidden cards without a decision of their holder: an opponent's swap goes on
to the put-down only if he holds a card other than a club, and the next phase is public. So
the permutation keeps what the seat inferred from it (`Inferred`): the cards he held at his
last swap that found only clubs stay clubs, and at a put-down still pending his hand keeps a
card that is not a club.

The relabeled history is replayed on a fresh state; a replay that breaks a rule (a Blank is
only legal without clubs and spades, for example), or that ends showing the seat anything else
than it sees, is thrown away and another drawn. After a few failures the permutation keeps
suits, which no rule can tell apart, and in the very last resort the state itself is returned.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from referee.games.base import CHANCE, GameError, Step
from referee.games.orc_pit_fighting.actions import DECLINE, Use, card_of, decode, with_card
from referee.games.orc_pit_fighting.rules import CLUBS, SUIT
from referee.games.orc_pit_fighting.table import Phase, Table

if TYPE_CHECKING:
    from referee.games.orc_pit_fighting.state import OrcPitFightingState

FREE_TRIES = 8
SUITED_TRIES = 8


def resample(state: OrcPitFightingState, seat: int, rng: random.Random) -> OrcPitFightingState:
    seen = state.observation(seat)
    inferred = Inferred.of(state, seat)
    for attempt in range(FREE_TRIES + SUITED_TRIES):
        world = propose(state, seat, rng, inferred, keep_suits=attempt >= FREE_TRIES)
        # A replay only fails on a broken rule; a public turn of events that went another way
        # without breaking one would still show at the end, so the world is checked too.
        if world is not None and world.observation(seat) == seen:
            return world
    # The last resort is the true state rather than a GameError: it is the one world certain
    # to match all the seat saw, and a search that resamples should not stop for want of a
    # sample. With the permutation keeping the inferences, no known position gets here.
    return state.clone()


class Inferred:
    """What the seat learnt of the opponent's hidden cards from the way his swaps went on."""

    def __init__(self, clubs: frozenset[int], some_not_club: tuple[int, ...]) -> None:
        # Cards that must be re-dealt as clubs.
        self.clubs = clubs
        # Cards of which at least one must be re-dealt as a card other than a club (none: no
        # such inference).
        self.some_not_club = some_not_club

    @classmethod
    def of(cls, state: OrcPitFightingState, seat: int) -> Inferred:
        table = state.table
        other = 1 - seat
        held = list(table.hands[other]) + [card for card, _ in face_down_cards(state, seat)]
        # Every card he held at that swap was a club; those he holds still arrived before it
        # (a card that leaves a hand and comes back arrives again).
        earliest = min((table.arrived[card] for card in held), default=len(state.history))
        since = last_swap_finding_only_clubs(state, other, earliest)
        clubs = frozenset(card for card in held if table.arrived[card] < since)
        assert all(SUIT[card] == CLUBS for card in clubs), "a swap found only clubs"
        pending = table.phase == Phase.PUT_DOWN and table.actor == other
        return cls(clubs, tuple(table.hands[other]) if pending else ())

    def kept_by(self, permutation: dict[int, int]) -> bool:
        """True when the permutation keeps the inferences (clubs are kept by construction)."""
        if not self.some_not_club:
            return True
        return any(SUIT[permutation.get(c, c)] != CLUBS for c in self.some_not_club)


def last_swap_finding_only_clubs(state: OrcPitFightingState, swapper: int, after: int) -> int:
    """The step at which the swapper's last swap took effect and no put-down followed, which
    showed that he held only clubs; -1 if none after step `after` (an earlier one concerns no
    card he holds now).

    A swap play is answered by the other seat at once (the cancel), and on a decline the
    put-down, if any, is the swapper's very next decision. Without one, the other seat held no
    card (the round then ends, so no card held then is held still), or the swapper held only
    clubs. A game that ended at that step shows neither."""
    history = state.history
    end = len(history)
    for index in range(end - 2, max(after, 0) - 1, -1):
        play, answer = history[index], history[index + 1]
        if play.seat != swapper or answer.seat != 1 - swapper or answer.action != DECLINE:
            continue
        if decode(play.action)[0] is not Use.SWAP:
            continue
        taken = index + 1
        if taken + 1 < end:
            following = history[taken + 1]
            if following.seat != swapper or decode(following.action)[0] is not Use.PUT_DOWN:
                return taken
        elif state.table.phase not in (Phase.PUT_DOWN, Phase.OVER):
            return taken
    return -1


def face_down_cards(state: OrcPitFightingState, seat: int) -> list[tuple[int, int]]:
    """(card, placement step) of every face-down card of the seat's opponent."""
    table = state.table
    other = 1 - seat
    found: list[tuple[int, int]] = []
    fight = table.combat
    if fight is not None:
        found += [
            (play.cards[0], table.blank_step[other])
            for play in fight.plays[other]
            if play.face_down
        ]
        choice = fight.choices[other]
        if choice is not None:
            placed = max(i for i, step in enumerate(state.history) if step.seat == other)
            found.append((choice, placed))
    if table.put_down is not None and table.actor == other:
        found.append((table.put_down, table.put_down_step))
    return found


def unseen(table: Table, seat: int, face_down: list[tuple[int, int]]) -> list[int]:
    other = 1 - seat
    hidden = set(table.deck) | set(table.hands[other]) | {card for card, _ in face_down}
    if table.two and table.draw_seat == other:
        hidden |= set(table.two)
    return sorted(hidden - table.exposed[other])


class Relabeling:
    """Card renamings, each from a history index on."""

    def __init__(self) -> None:
        self.layers: list[tuple[int, dict[int, int]]] = []
        self.permutation: dict[int, int] = {}
        self.starts: list[int] = []
        self.epoch: list[int] = []

    def card(self, index: int, card: int) -> int:
        for start, swap in self.layers:
            if index >= start:
                card = swap.get(card, card)
        image = self.permutation.get(card)
        if image is not None and index > self.starts[self.epoch[card]]:
            return image
        return card


def choose_again(
    state: OrcPitFightingState, seat: int, face_down: list[tuple[int, int]], rng: random.Random
) -> list[tuple[int, dict[int, int]]]:
    """Swap each face-down card with one the opponent held then and holds still."""
    table = state.table
    other = 1 - seat
    layers = []
    for card, placed in face_down:
        held = [c for c in table.hands[other] if table.arrived[c] < placed and c != card]
        pick = rng.choice([card, *held])
        if pick != card:
            layers.append((placed, {card: pick, pick: card}))
    return layers


def permute(
    cards_: list[int],
    epoch: list[int],
    rng: random.Random,
    keep_suits: bool,
    clubs: frozenset[int],
) -> dict[int, int]:
    """A random permutation among cards of the same reshuffle (and suit, if asked) that maps
    the given clubs to clubs, uniform among those that do."""
    groups: dict[tuple[int, int], list[int]] = {}
    for card in cards_:
        groups.setdefault((epoch[card], card // 13 if keep_suits else 0), []).append(card)
    mapping: dict[int, int] = {}
    for group in groups.values():
        bound = [card for card in group if card in clubs]
        # Each of them is a club of this group, so the group has clubs enough for them.
        images = rng.sample([card for card in group if SUIT[card] == CLUBS], len(bound))
        mapping.update(zip(bound, images, strict=True))
        taken = set(images)
        free = [card for card in group if card not in clubs]
        rest = [card for card in group if card not in taken]
        rng.shuffle(rest)
        mapping.update(zip(free, rest, strict=True))
    return mapping


def propose(
    state: OrcPitFightingState,
    seat: int,
    rng: random.Random,
    inferred: Inferred,
    *,
    keep_suits: bool,
) -> OrcPitFightingState | None:
    table = state.table
    face_down = face_down_cards(state, seat)
    relabel = Relabeling()
    relabel.layers = choose_again(state, seat, face_down, rng)
    relabel.starts = table.epoch_starts
    relabel.epoch = table.epoch
    cards_ = unseen(table, seat, face_down)
    relabel.permutation = permute(cards_, table.epoch, rng, keep_suits, inferred.clubs)
    if not inferred.kept_by(relabel.permutation):
        return None
    return replay(state, relabel)


def replay(state: OrcPitFightingState, relabel: Relabeling) -> OrcPitFightingState | None:
    """The relabeled history on a fresh state, or None when it breaks a rule."""
    world = type(state)(state.options, state.num_seats)
    try:
        for index, step in enumerate(state.history):
            world.apply_step(relabeled(world, index, step, relabel))
    except GameError:
        return None
    return world


def relabeled(world: OrcPitFightingState, index: int, step: Step, relabel: Relabeling) -> Step:
    if step.seat == CHANCE:
        if not world.card_chance():
            return step
        return Step(CHANCE, relabel.card(index, step.action))
    card = card_of(step.action)
    if card is None:
        return step
    return Step(step.seat, with_card(step.action, relabel.card(index, card)))
