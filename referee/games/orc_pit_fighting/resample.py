"""Re-dealing what a seat cannot see, so that the re-dealt history still replays.

What a seat cannot locate: the deck (an unordered pile), the opponent's hand and the
opponent's face-down cards, less the cards it knows to be there (`Table.exposed`). Two
relabelings of the history make a new world:

1. Each face-down card of the opponent (a Blank, the card put down for a swap, a Draw choice
   not yet turned up) is chosen again among the cards the opponent held when it was put down
   and still holds: it is swapped with that card from the placement step on.
2. The unseen cards are permuted among themselves, each only with cards that entered the deck
   at the same reshuffle, and every reference to them after that reshuffle is relabeled.

The relabeled history is replayed on a fresh state; a replay that breaks a rule (a Blank is
only legal without clubs and spades, for example) is thrown away and another drawn. After a
few failures the permutation keeps suits, which no rule can tell apart, and in the very last
resort the state itself is returned.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from referee.games.base import CHANCE, GameError, Step
from referee.games.orc_pit_fighting.actions import card_of, with_card
from referee.games.orc_pit_fighting.table import Table

if TYPE_CHECKING:
    from referee.games.orc_pit_fighting.state import OrcPitFightingState

FREE_TRIES = 8
SUITED_TRIES = 8


def resample(state: OrcPitFightingState, seat: int, rng: random.Random) -> OrcPitFightingState:
    for attempt in range(FREE_TRIES + SUITED_TRIES):
        world = propose(state, seat, rng, keep_suits=attempt >= FREE_TRIES)
        if world is not None:
            return world
    return state.clone()


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
    cards_: list[int], epoch: list[int], rng: random.Random, keep_suits: bool
) -> dict[int, int]:
    """A random permutation among cards of the same reshuffle (and suit, if asked)."""
    groups: dict[tuple[int, int], list[int]] = {}
    for card in cards_:
        groups.setdefault((epoch[card], card // 13 if keep_suits else 0), []).append(card)
    mapping: dict[int, int] = {}
    for group in groups.values():
        images = list(group)
        rng.shuffle(images)
        mapping.update(zip(group, images, strict=True))
    return mapping


def propose(
    state: OrcPitFightingState, seat: int, rng: random.Random, *, keep_suits: bool
) -> OrcPitFightingState | None:
    table = state.table
    face_down = face_down_cards(state, seat)
    relabel = Relabeling()
    relabel.layers = choose_again(state, seat, face_down, rng)
    relabel.starts = table.epoch_starts
    relabel.epoch = table.epoch
    relabel.permutation = permute(unseen(table, seat, face_down), table.epoch, rng, keep_suits)
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
