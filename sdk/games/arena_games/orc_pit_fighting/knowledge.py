"""What one seat has learnt of its opponent's hidden cards, read from the events it received
(as the wire carries them), for building the worlds it cannot tell apart.

Every card the opponent holds unseen came to him face down from the deck in this round (a
deal, the kept card of a draw two, a card drawn in Dirty Tricks): each such arrival is a
`Token`, with the step it came at and the reshuffle (epoch) of the deck it came from. Every
card that leaves his hand is seen (face up, given to the seat, turned up) except a face-down
card still in a hidden place, and a round's end shows his whole hand. So the cards he holds
unseen, with those he showed since the round began that were not known to be his, are the
tokens' cards, one each. The rules and his play add constraints on his hand at a step: it held
no club or spade (Blank, a pass where a card was due), only clubs (a swap that found nothing
to put down), or some card of a set (a stance declared). A deck that was reshuffled was public
(the discard pile, or the Out piles but their two topmost cards), and it was drawn to the last
card before the next reshuffle: an unseen card of an older deck can only be in his hands.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arena.v1 import orc_pit_fighting_pb2 as opb

from arena_games import cards
from arena_games.base import SeatView
from arena_games.orc_pit_fighting.actions import Use
from arena_games.orc_pit_fighting.events import Zone
from arena_games.orc_pit_fighting.rules import ACE_OF_CLUBS, CLUBS, RANK, SPADES, SUIT
from arena_games.orc_pit_fighting.table import Stance

NEVER = 1 << 30
"""The leave step of a card still in hand."""
CLUBS_OR_SPADES = frozenset(c for c in cards.DECK if SUIT[c] in (CLUBS, SPADES))
ALL_CLUBS = frozenset(c for c in cards.DECK if SUIT[c] == CLUBS)
NOT_CLUBS = frozenset(cards.DECK) - ALL_CLUBS
ALL_SPADES = frozenset(c for c in cards.DECK if SUIT[c] == SPADES)
CLUBS_OR_PAIRABLE_SPADES = ALL_CLUBS | frozenset(c for c in ALL_SPADES if RANK[c] != 14)
"""What a Counterattack against the ace of clubs shows: a club or a flush spade pair. A rule is
one card of a set, so the pair is kept as its weaker form, a spade that could be in one."""


@dataclass(frozen=True)
class Token:
    """A card that came to the opponent unseen: at event index `step`, from deck `epoch`."""

    step: int
    epoch: int


@dataclass(frozen=True)
class Shown:
    """A card the opponent showed that was not known to be his: it was a token's card; it left
    his hand at `left` (face down, or face up) from deck `epoch`."""

    card: int
    left: int
    epoch: int


@dataclass(frozen=True)
class HandRule:
    """At event index `step` his hand held no card of `cards` (none=True), or some (False)."""

    step: int
    cards: frozenset[int]
    none: bool


@dataclass
class Knowledge:
    """The reading of a view's events (see the module's docstring); `now` is the event count,
    the step of anything still pending."""

    seat: int
    now: int = 0
    tokens: list[Token] = field(default_factory=list)
    shown: list[Shown] = field(default_factory=list)
    rules: list[HandRule] = field(default_factory=list)
    # Cards the seat knows to be the opponent's (in hand or face down), with the step each
    # became known.
    known: dict[int, int] = field(default_factory=dict)
    # The reshuffle each card last entered a deck at (0: the first deck).
    epoch: list[int] = field(default_factory=lambda: [0] * 52)
    current_epoch: int = 0
    # Steps of the opponent's face-down plays still hidden: his Blank, his put-down.
    blank_step: int = -1
    put_down_step: int = -1
    # The Pit in the order its cards went in; None for the opponent's face-down Blank.
    pit: list[int | None] = field(default_factory=list)
    # Cards put into the Pit by each seat since Dirty Tricks began, and cards that left it.
    dirty_pitted: list[list[int]] = field(default_factory=lambda: [[], []])
    dirty_removed: list[list[int]] = field(default_factory=lambda: [[], []])
    dirty_drawn_to_pit: list[bool] = field(default_factory=lambda: [False, False])
    in_dirty_tricks: bool = False
    pit_owner: dict[int, int] = field(default_factory=dict)
    # The rank each card in the Pit counts at (a pair's spades at the pair's, the ace low at 1).
    pit_rank: dict[int, int] = field(default_factory=dict)
    last_swap: int = -1
    swap_declined: int = -1


def read(view: SeatView) -> Knowledge:
    """The knowledge of the view's seat, from its events in order."""
    reader = Reader(view.seat)
    previous: opb.OrcPitFightingEvent | None = None
    for index, event in enumerate(view.events):
        typed = event.orc_pit_fighting
        if is_echo(typed, previous):
            continue
        reader.step = index
        reader.event(typed)
        previous = typed
    reader.finish(len(view.events), view)
    return reader.known


def is_echo(typed: opb.OrcPitFightingEvent, previous: opb.OrcPitFightingEvent | None) -> bool:
    """The public copy, without the card, of a private move the seat has just seen in full."""
    if previous is None or not typed.HasField("card_moved") or typed.card_moved.HasField("card"):
        return False
    if not previous.HasField("card_moved") or not previous.card_moved.HasField("card"):
        return False
    bare = opb.OrcPitFightingCardMoved()
    bare.CopyFrom(previous.card_moved)
    bare.ClearField("card")
    return bare == typed.card_moved


class Reader:
    def __init__(self, seat: int) -> None:
        self.known = Knowledge(seat)
        self.seat, self.other = seat, 1 - seat
        self.step = 0
        self.drew_before: int | None = None
        self.discard: list[int] = []
        self.out: list[list[int]] = [[], []]
        self.ace_opened = False
        # The seat whose Dirty Tricks draw was the last card move.
        self.just_drew: int | None = None

    def event(self, typed: opb.OrcPitFightingEvent) -> None:
        kind = typed.WhichOneof("kind")
        drew = self.just_drew
        if kind in ("card_moved", "passed"):
            self.just_drew = None
        if kind == "card_moved":
            self.drew_before = drew
            self.moved(typed.card_moved)
        elif kind == "reshuffled":
            self.reshuffled(typed.reshuffled.source)
        elif kind == "stance_declared":
            self.declared(typed.stance_declared)
        elif kind == "passed":
            self.passed(typed.passed)
        elif kind == "cards_revealed":
            self.revealed(typed.cards_revealed)
        elif kind == "segment_started":
            self.segment(typed.segment_started.segment)
        elif kind in ("round_started", "round_ended"):
            self.new_round()
        elif kind == "turn_given":
            self.turn_given()

    # -- the round and the segments --------------------------------------------------------------
    def new_round(self) -> None:
        k = self.known
        k.tokens, k.shown, k.rules, k.known = [], [], [], {}
        k.blank_step = k.put_down_step = -1
        k.last_swap = k.swap_declined = -1

    def segment(self, name: str) -> None:
        k = self.known
        if name == "dirty tricks":
            k.in_dirty_tricks = True
            k.dirty_pitted, k.dirty_removed = [[], []], [[], []]
            k.dirty_drawn_to_pit = [False, False]
        elif name in ("result", "draw", "combat"):
            k.in_dirty_tricks = False

    def turn_given(self) -> None:
        k = self.known
        # A swap of his, let through, that went on to no put-down: he held only clubs.
        if k.last_swap >= 0 and k.swap_declined > k.last_swap:
            k.rules.append(HandRule(k.swap_declined, NOT_CLUBS, none=True))
        k.last_swap = k.swap_declined = -1

    def reshuffled(self, source: int) -> None:
        k = self.known
        k.current_epoch += 1
        if source == Zone.DISCARD:
            gathered, self.discard = self.discard, []
        else:
            gathered = []
            for s in (0, 1):
                gathered += self.out[s][:-2]
                self.out[s] = self.out[s][-2:]
        for card in gathered:
            k.epoch[card] = k.current_epoch

    # -- decisions that tell something -------------------------------------------------------------
    def declared(self, declared: opb.OrcPitFightingStanceDeclared) -> None:
        if declared.seat != self.other:
            return
        stance = Stance(declared.stance)
        if stance == Stance.DEFEND:
            held = ALL_SPADES if self.ace_opened else CLUBS_OR_SPADES
        elif stance == Stance.COUNTERATTACK:
            held = CLUBS_OR_PAIRABLE_SPADES if self.ace_opened else CLUBS_OR_SPADES
        else:
            return
        # A card known to be his at the time shows it at once.
        if not any(card in held for card in self.known.known):
            self.known.rules.append(HandRule(self.step, held, none=False))

    def passed(self, passed: opb.OrcPitFightingPassed) -> None:
        k = self.known
        if passed.seat == self.other and passed.segment == "must play":
            k.rules.append(HandRule(self.step, CLUBS_OR_SPADES, none=True))
        if passed.seat == self.seat and passed.segment == "cancel" and k.last_swap >= 0:
            k.swap_declined = self.step

    def revealed(self, revealed: opb.OrcPitFightingCardsRevealed) -> None:
        if revealed.outcome == "chosen":
            return
        for shown in revealed.cards:
            if shown.HasField("card"):
                card = cards.from_message(shown.card)
                self.known.pit.append(card)
                if shown.seat == self.other:
                    self.left_other(card, self.step)

    # -- cards moving ------------------------------------------------------------------------------
    def moved(self, m: opb.OrcPitFightingCardMoved) -> None:
        card = cards.from_message(m.card) if m.HasField("card") else None
        use = Use(m.use - 1) if m.use else None
        k = self.known
        from_seat = m.from_seat if m.HasField("from_seat") else None
        to_seat = m.to_seat if m.HasField("to_seat") else None
        if Zone(m.from_zone) == Zone.HAND and from_seat == self.other:
            if use is Use.SWAP and Zone(m.to_zone) == Zone.OUT:
                k.last_swap, k.swap_declined = self.step, -1
            if card is None:
                self.hidden_down(use)
            else:
                self.left_other(card, self.step)
        self.leave(m, card, use, from_seat)
        self.enter(m, card, use, to_seat)

    def hidden_down(self, use: Use | None) -> None:
        k = self.known
        if use is Use.BLANK:
            k.blank_step = self.step
            k.pit.append(None)
            k.rules.append(HandRule(self.step, CLUBS_OR_SPADES, none=True))
        elif use is Use.PUT_DOWN:
            k.put_down_step = self.step
            k.last_swap = -1

    def left_other(self, card: int, left: int) -> None:
        """A card of the opponent seen leaving him (or turned up)."""
        k = self.known
        if card in k.known:
            del k.known[card]
        else:
            k.shown.append(Shown(card, left, k.epoch[card]))

    def leave(
        self, m: opb.OrcPitFightingCardMoved, card: int | None, use: Use | None, seat: int | None
    ) -> None:
        k = self.known
        if card is None:
            return
        if Zone(m.from_zone) == Zone.DISCARD:
            self.discard.remove(card)
        elif Zone(m.from_zone) == Zone.OUT and seat is not None:
            self.out[seat].remove(card)
        elif Zone(m.from_zone) == Zone.PIT and use is not Use.SWAP:
            if card in k.pit:
                k.pit.remove(card)
                owner = k.pit_owner.get(card)
            else:
                # The opponent's Blank, turned up as it leaves.
                k.pit.remove(None)
                owner = self.other
                self.left_other(card, k.blank_step)
                k.blank_step = -1
            if k.in_dirty_tricks and owner is not None:
                k.dirty_removed[owner].append(card)
        elif Zone(m.from_zone) == Zone.PIT and use is Use.SWAP and m.to_seat == self.seat:
            # His put-down arrives: it left his hand when he put it down.
            self.left_other(card, k.put_down_step)
            k.put_down_step = -1

    def enter(
        self, m: opb.OrcPitFightingCardMoved, card: int | None, use: Use | None, seat: int | None
    ) -> None:
        k = self.known
        if Zone(m.from_zone) == Zone.DECK and k.in_dirty_tricks and seat is not None:
            self.just_drew = seat
        if Zone(m.to_zone) == Zone.HAND and seat == self.other:
            if card is None:
                k.tokens.append(Token(self.step, k.current_epoch))
            else:
                k.known[card] = self.step
            return
        if card is None:
            return
        if Zone(m.to_zone) == Zone.DISCARD:
            self.discard.append(card)
        elif Zone(m.to_zone) == Zone.OUT and seat is not None:
            self.out[seat].append(card)
        elif Zone(m.to_zone) == Zone.PIT and use is not Use.PUT_DOWN:
            owner = m.from_seat
            k.pit.append(card)
            k.pit_owner[card] = owner
            if use is Use.PAIR:
                k.pit_rank[card] = RANK[card] if card - 1 not in k.pit else RANK[card - 1]
            else:
                k.pit_rank[card] = 1 if use is Use.ACE_LOW else RANK[card]
            if use is Use.ATTACK:
                self.ace_opened = card == ACE_OF_CLUBS
            if k.in_dirty_tricks:
                k.dirty_pitted[owner].append(card)
                if self.drew_before == owner and use is Use.PIT:
                    k.dirty_drawn_to_pit[owner] = True

    def finish(self, now: int, view: SeatView) -> None:
        k = self.known
        k.now = now
        seen = view.observation.orc_pit_fighting
        # A swap of his, let through, waiting for his put-down: he holds a card not a club
        # (unless one he is known to hold shows it already).
        waiting = k.last_swap >= 0 and k.swap_declined > k.last_swap
        waiting = waiting and seen.phase == opb.ORC_PIT_FIGHTING_PHASE_PUT_DOWN
        if waiting and not any(card in NOT_CLUBS for card in k.known):
            k.rules.append(HandRule(now, NOT_CLUBS, none=False))
