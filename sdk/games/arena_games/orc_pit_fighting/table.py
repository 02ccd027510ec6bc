"""The data of a game of Orc Pit Fighting: piles, hands, the round and the combat.

Plain data with a hand-written clone and key; the rules that change it live in rounds, turns,
combat and result.
"""

from __future__ import annotations

from enum import IntEnum

from arena_games.base import Event
from arena_games.orc_pit_fighting.actions import Use
from arena_games.orc_pit_fighting.rules import Play


class Phase(IntEnum):
    """Where the game stands; the values are the wire enum's."""

    FANGS = 1
    DECK_DRAW = 2
    FIRST_ROLL = 3
    TURN = 4
    CANCEL = 5
    EXTRA_RED = 6
    DIG = 7
    KEEP = 8
    PUT_DOWN = 9
    SWAP_DRAW = 10
    DECLARE = 11
    MUST_PLAY = 12
    BRUTALITY = 13
    ACE_ANSWER = 14
    REINFORCEMENTS = 15
    DIRTY_TRICKS = 16
    DRAWN = 17
    ACE_OF_DIAMONDS = 18
    RESULT = 19
    DRAW_CHOICE = 20
    CHOOSE_TURN = 21
    TURN_ROLL = 22
    OVER = 23


CHANCE_PHASES = frozenset(
    {
        Phase.FANGS,
        Phase.DECK_DRAW,
        Phase.FIRST_ROLL,
        Phase.DIG,
        Phase.SWAP_DRAW,
        Phase.ACE_OF_DIAMONDS,
        Phase.RESULT,
        Phase.TURN_ROLL,
    }
)
DICE_PHASES = frozenset(
    {Phase.FANGS, Phase.FIRST_ROLL, Phase.ACE_OF_DIAMONDS, Phase.RESULT, Phase.TURN_ROLL}
)


class Stance(IntEnum):
    """How a seat fights in the current combat round; the values are the wire enum's."""

    ATTACK = 1
    DEFEND = 2
    COUNTERATTACK = 3
    BLANK = 4
    EMPTY = 5
    UNDECLARED = 6


ATTACKING = frozenset({Stance.ATTACK, Stance.COUNTERATTACK})


class DrawFor(IntEnum):
    """Why a card is being drawn from the deck."""

    DEAL = 0
    TWO = 1
    DIRTY = 2


class Combat:
    """One combat, over one or more combat rounds (a Draw can start another)."""

    __slots__ = (
        "ace_of_clubs",
        "ace_of_spades",
        "attacker",
        "blank_played",
        "blank_unsubstituted",
        "choices",
        "combat_round",
        "defender",
        "drawn",
        "drawn_to_pit",
        "hearts",
        "other_cards",
        "passed",
        "pit",
        "plays",
        "reinforced",
        "reroll",
        "revealed",
        "rolls",
        "stance",
        "start_plays",
    )

    def __init__(self, attacker: int) -> None:
        self.attacker = attacker
        self.combat_round = 1
        self.stance = [Stance.UNDECLARED, Stance.UNDECLARED]
        self.stance[attacker] = Stance.ATTACK
        # The seat that declared Defend when the combat began: it chooses the next turn.
        self.defender: int | None = None
        # Every card in the Pit in the order it was put there: the order of the discard.
        self.pit: list[int] = []
        self.revealed: list[int | None] = [None, None]
        self.choices: list[int | None] = [None, None]
        self.reroll: tuple[int, int] | None = None
        self.new_round()

    def new_round(self) -> None:
        """Clear what one combat round holds; stances and the chooser stay."""
        self.plays: list[list[Play]] = [[], []]
        self.other_cards: list[list[int]] = [[], []]
        self.hearts: list[list[int]] = [[], []]
        self.reinforced = [False, False]
        self.passed = [False, False]
        self.ace_of_clubs: int | None = None
        self.ace_of_spades: int | None = None
        self.blank_played = [False, False]
        self.blank_unsubstituted = [False, False]
        self.start_plays: list[tuple[Play, ...]] = [(), ()]
        self.drawn_to_pit = [False, False]
        self.drawn: int | None = None
        self.rolls: list[int] = []

    @property
    def attacked(self) -> int:
        return 1 - self.attacker

    def clone(self) -> Combat:
        other = Combat.__new__(Combat)
        other.attacker = self.attacker
        other.combat_round = self.combat_round
        other.stance = list(self.stance)
        other.defender = self.defender
        other.pit = list(self.pit)
        other.revealed = list(self.revealed)
        other.choices = list(self.choices)
        other.reroll = self.reroll
        other.plays = [list(p) for p in self.plays]
        other.other_cards = [list(c) for c in self.other_cards]
        other.hearts = [list(h) for h in self.hearts]
        other.reinforced = list(self.reinforced)
        other.passed = list(self.passed)
        other.ace_of_clubs = self.ace_of_clubs
        other.ace_of_spades = self.ace_of_spades
        other.blank_played = list(self.blank_played)
        other.blank_unsubstituted = list(self.blank_unsubstituted)
        other.start_plays = list(self.start_plays)
        other.drawn_to_pit = list(self.drawn_to_pit)
        other.drawn = self.drawn
        other.rolls = list(self.rolls)
        return other

    def key(self) -> tuple[object, ...]:
        return (
            self.attacker,
            self.combat_round,
            tuple(self.stance),
            self.defender,
            tuple(self.pit),
            tuple(self.revealed),
            tuple(self.choices),
            self.reroll,
            tuple(tuple(p) for p in self.plays),
            tuple(tuple(c) for c in self.other_cards),
            tuple(tuple(h) for h in self.hearts),
            tuple(self.reinforced),
            tuple(self.passed),
            self.ace_of_clubs,
            self.ace_of_spades,
            tuple(self.blank_played),
            tuple(self.blank_unsubstituted),
            tuple(self.start_plays),
            tuple(self.drawn_to_pit),
            self.drawn,
            tuple(self.rolls),
        )


class Table:
    """Everything on the table and in the hands, and where the game stands."""

    def __init__(self) -> None:
        # The deck is an unordered pile, kept sorted: a card is chosen at the moment it is
        # drawn, so no deck order exists to be revealed.
        self.deck: list[int] = list(range(52))
        self.discard: list[int] = []
        self.out: list[list[int]] = [[], []]
        self.flair: list[list[int]] = [[], []]
        self.hands: list[list[int]] = [[], []]
        # Cards in a seat's hand or face-down place that the other seat knows to be there.
        self.exposed: list[set[int]] = [set(), set()]
        self.damage = [0, 0]
        self.round = 0
        self.fangs: list[int] = []
        self.favorite: int | None = None
        self.phase = Phase.FANGS
        self.turn_seat = 0
        self.actor = 0
        self.round_turns = 0
        self.decisions = 0
        self.pending: tuple[int, int, Use] | None = None
        # The non-combat card whose use is being carried out (a heart picture then allows
        # one more red card).
        self.resolving: int | None = None
        self.draw_for = DrawFor.DEAL
        self.draw_seat = 0
        self.deal_queue: list[int] = []
        self.two: list[int] = []
        self.put_down: int | None = None
        self.combat: Combat | None = None
        self.winner: int | None = None
        self.over_reason = ""
        self.events: list[Event] = []
        self.step = 0

    # -- cards -------------------------------------------------------------------------------------
    def take(self, seat: int, card: int, *, face_down: bool = False) -> None:
        """A card leaves a seat's hand. Face down, the other seat still knows it is in this
        seat's hidden places if it knew it before."""
        self.hands[seat].remove(card)
        if not face_down:
            self.exposed[seat].discard(card)

    def give(self, seat: int, card: int, *, known: bool = False) -> None:
        """A card enters a seat's hand; known when the other seat knows which card it is."""
        self.hands[seat].append(card)
        self.hands[seat].sort()
        if known:
            self.exposed[seat].add(card)

    def all_cards(self) -> list[int]:
        """Every card wherever it is: 52 of them, each once, at every step."""
        found = self.deck + self.discard + self.two
        for seat in (0, 1):
            found += self.out[seat] + self.flair[seat] + self.hands[seat]
        if self.pending is not None:
            found.append(self.pending[1])
        if self.put_down is not None:
            found.append(self.put_down)
        if self.combat is not None:
            found += self.combat.pit
        return found

    def more_flair(self, seat: int) -> bool:
        """True when the seat has more Flair than its opponent (the Dirty Tricks limit)."""
        return len(self.flair[seat]) > len(self.flair[1 - seat])

    # -- copies ------------------------------------------------------------------------------------
    def clone(self) -> Table:
        other = Table.__new__(Table)
        other.deck = list(self.deck)
        other.discard = list(self.discard)
        other.out = [list(p) for p in self.out]
        other.flair = [list(p) for p in self.flair]
        other.hands = [list(h) for h in self.hands]
        other.exposed = [set(e) for e in self.exposed]
        other.damage = list(self.damage)
        other.round = self.round
        other.fangs = list(self.fangs)
        other.favorite = self.favorite
        other.phase = self.phase
        other.turn_seat = self.turn_seat
        other.actor = self.actor
        other.round_turns = self.round_turns
        other.decisions = self.decisions
        other.pending = self.pending
        other.resolving = self.resolving
        other.draw_for = self.draw_for
        other.draw_seat = self.draw_seat
        other.deal_queue = list(self.deal_queue)
        other.two = list(self.two)
        other.put_down = self.put_down
        other.combat = None if self.combat is None else self.combat.clone()
        other.winner = self.winner
        other.over_reason = self.over_reason
        other.events = []
        other.step = self.step
        return other

    def key(self) -> tuple[object, ...]:
        return (
            tuple(self.deck),
            tuple(self.discard),
            tuple(tuple(p) for p in self.out),
            tuple(tuple(p) for p in self.flair),
            tuple(tuple(h) for h in self.hands),
            tuple(frozenset(e) for e in self.exposed),
            tuple(self.damage),
            self.round,
            tuple(self.fangs),
            self.favorite,
            self.phase,
            self.turn_seat,
            self.actor,
            self.round_turns,
            self.decisions,
            self.pending,
            self.resolving,
            self.draw_for,
            self.draw_seat,
            tuple(self.deal_queue),
            tuple(self.two),
            self.put_down,
            None if self.combat is None else self.combat.key(),
            self.winner,
            self.over_reason,
        )
