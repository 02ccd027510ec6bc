"""Scripted Orc Pit Fighting games for the engine's tests (this folder): a game dealt normally, then
laid out by hand, and the moves that several of the test modules play."""

from __future__ import annotations

from arena.v1 import orc_pit_fighting_pb2 as opb
from arena_games import cards
from arena_games.base import Event, GameState
from arena_games.orc_pit_fighting import (
    ORC_PIT_FIGHTING,
    OrcPitFightingOptions,
    OrcPitFightingState,
)
from arena_games.orc_pit_fighting.table import Combat, Phase, Table

GAME = ORC_PIT_FIGHTING
AnyState = GameState[OrcPitFightingOptions]


def of(state: AnyState) -> OrcPitFightingState:
    assert isinstance(state, OrcPitFightingState)
    return state


def cs(text: str) -> list[int]:
    """Cards named like 'Qh Ts 2c'."""
    return [cards.parse(t) for t in text.split()]


def c(text: str) -> int:
    return cards.parse(text)


class Game:
    """A game dealt normally, then laid out: hands (and any pile) set directly from the deck.
    Direct setup leaves the history short of the layout, so scenario states do not replay."""

    def __init__(self, hand0: str, hand1: str, *, first: int = 0, favorite: int | None = None):
        state = ORC_PIT_FIGHTING.new_state()
        assert isinstance(state, OrcPitFightingState)
        self.state = state
        faces = {None: (1, 2), 0: (6, 1), 1: (1, 6)}[favorite]
        for face in faces:
            state.apply_chance(face)
        # Two hands of five are dealt for real, so the history replays; others are laid out.
        dealt = [cs(hand0), cs(hand1)]
        genuine = favorite is None and [len(h) for h in dealt] == [5, 5]
        while self.table.phase == Phase.DECK_DRAW:
            seat = self.table.deal_queue[0]
            state.apply_chance(dealt[seat].pop(0) if genuine else self.table.deck[0])
        if favorite is None:
            state.apply_chance(1 if first == 0 else 4)
        if not genuine:
            self.set_hand(0, hand0)
            self.set_hand(1, hand1)

    @property
    def table(self) -> Table:
        return self.state.table

    @property
    def fight(self) -> Combat:
        assert self.table.combat is not None
        return self.table.combat

    def touched(self) -> None:
        """Direct changes invalidate the cached legal list."""
        self.state.forget_legal_actions()

    def take_from_anywhere(self, card: int) -> None:
        t = self.table
        for pile in [t.deck, t.discard, *t.out, *t.flair, *t.hands]:
            if card in pile:
                pile.remove(card)
                return
        raise AssertionError(f"{cards.label(card)} is nowhere to take from")

    def set_hand(self, seat: int, text: str) -> None:
        t = self.table
        t.deck = sorted(t.deck + t.hands[seat])
        t.hands[seat] = []
        for card in cs(text):
            self.take_from_anywhere(card)
            t.hands[seat].append(card)
        t.hands[seat].sort()
        self.touched()

    def put(self, pile: list[int], text: str) -> None:
        """Cards onto a pile (bottom first), taken from wherever they are."""
        for card in cs(text):
            self.take_from_anywhere(card)
            pile.append(card)
        self.touched()

    def empty_deck(self, keep: str = "") -> None:
        """Every deck card but `keep` to the discard pile's bottom."""
        kept = set(cs(keep))
        gone = [card for card in self.table.deck if card not in kept]
        self.table.deck = sorted(kept)
        self.table.discard = gone + self.table.discard
        self.touched()

    # -- moves -------------------------------------------------------------------------------------
    def seat(self) -> int:
        movers = self.state.to_move()
        assert len(movers) == 1, f"to move: {movers}, phase {self.table.phase.name}"
        return movers[0]

    def legal(self, seat: int | None = None) -> list[str]:
        who = self.seat() if seat is None else seat
        return [self.state.action_label(a) for a in self.state.legal_actions(who)]

    def act(self, label: str, seat: int | None = None) -> list[Event]:
        who = self.seat() if seat is None else seat
        actions = {self.state.action_label(a): a for a in self.state.legal_actions(who)}
        assert label in actions, f"{label!r} not legal for seat {who}: {sorted(actions)}"
        return self.state.apply(who, actions[label])

    def acts(self, *labels: str) -> None:
        for each in labels:
            self.act(each)

    def chance(self, outcome: int | str) -> list[Event]:
        value = cards.parse(outcome) if isinstance(outcome, str) else outcome
        return self.state.apply_chance(value)

    def roll(self, *faces: int) -> None:
        for face in faces:
            assert self.table.phase in (
                Phase.RESULT,
                Phase.ACE_OF_DIAMONDS,
                Phase.TURN_ROLL,
                Phase.FIRST_ROLL,
            ), self.table.phase.name
            self.state.apply_chance(face)

    def observe(self, seat: int | None) -> opb.OrcPitFightingObservation:
        return self.state.observation(seat).orc_pit_fighting

    def resolved(self, events: list[Event]) -> opb.OrcPitFightingCombatResolved:
        found = [
            e.message.orc_pit_fighting.combat_resolved
            for e in events
            if e.message.orc_pit_fighting.WhichOneof("kind") == "combat_resolved"
        ]
        assert len(found) == 1, events
        return found[0]


def held_or_face_down(table: Table, seat: int) -> list[int]:
    """A seat's hand and face-down places: a known card may be re-dealt as the Blank."""
    places = list(table.hands[seat])
    if table.combat is not None:
        places += [p.cards[0] for p in table.combat.plays[seat] if p.face_down]
    if table.put_down is not None and table.actor == seat:
        places.append(table.put_down)
    return places


def attack(game: Game, club: str, answer: str = "defend") -> None:
    """The seat to move attacks with club; the other seat declines to cancel and answers."""
    game.act(f"attack {club}")
    if game.table.phase == Phase.CANCEL:
        game.act("decline")
    game.act(answer)


def draw_procedure_table(hand0: str, hand1: str) -> Game:
    """Seat 0 attacks with its first card, a club; seat 1 defends with its first card, a
    spade of the same value; nobody adds anything; equal rolls: the Draw procedure."""
    game = Game(hand0, hand1)
    club, spade = hand0.split()[0], hand1.split()[0]
    attack(game, club)
    game.acts(f"pit {spade}", "pass", "pass")
    assert game.table.phase == Phase.REINFORCEMENTS and game.seat() == 0, "the attacker first"
    game.acts("pass", "pass")
    game.acts("pass", "pass")  # Dirty Tricks
    game.roll(3, 3)
    if len(hand0.split()) > 1 or len(hand1.split()) > 1:
        assert game.table.phase == Phase.DRAW_CHOICE
    return game


def choose(game: Game, first: str | None, second: str | None) -> list[Event]:
    events: list[Event] = []
    movers = game.state.to_move()
    assert movers == tuple(s for s, x in enumerate((first, second)) if x is not None)
    for seat, card in enumerate((first, second)):
        if card is not None:
            events += game.act(f"face down {card}", seat=seat)
    return events


def finish_quietly(game: Game, attacked_roll: int, attacker_roll: int) -> list[Event]:
    """Both pass to the end of the combat round; then the two Result rolls."""
    while game.table.phase in (Phase.BRUTALITY, Phase.REINFORCEMENTS, Phase.DIRTY_TRICKS):
        game.act("pass")
    game.roll(attacked_roll)
    return game.state.apply_chance(attacker_roll)
