"""Worlds a seat cannot tell apart from its own: what resample and a bot's own search draw.

Nobody, the owner included, learns a card before it is revealed, and nothing a seat may do
depends on a card nobody knows (a legal list depends on the formations' shapes alone; a war's
lone flipper wins whatever it turns up). So no play tells anything of the hidden cards: given
what every seat saw, every placement of the cards not seen in this deal into the places nobody
can see (hidden slots, the cards that left play unseen, the undealt rest) is equally likely,
within each suit with one_suit_each, where a card's suit is that of the seat it was dealt to,
followed through gifts. The only other thing hidden from a seat is another seat's pending war
choice, drawn at random from that seat's options.

Both draws start from Blanks, a table of the places to fill and the cards to fill them with,
made from the public part of a state alone: resample makes it from the true state, without a
look at the hidden cards; CommanderWorlds makes it from a seat's view (SeatView), as a bot
in its own process has it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from arena.v1 import capture_the_commander_pb2 as ctcpb
from arena.v1 import referee_pb2 as pb

from arena_games import cards
from arena_games.base import CHANCE, GameState, SeatView, Step, WorldSampler
from arena_games.capture_the_commander import view as shown
from arena_games.capture_the_commander.formation import ALL_HOLES, BIT, EMPTY, SLOTS
from arena_games.capture_the_commander.state import (
    DEAL_INDEX,
    TURN,
    WAR,
    Battle,
    CaptureTheCommanderOptions,
    CaptureTheCommanderState,
)
from arena_games.playout import dealt_into


@dataclass(frozen=True, slots=True)
class Blanks:
    """The places nobody can see in a position and the cards that may fill them, in classes
    whose cards may trade places (one class; or one per suit with one_suit_each). A fill
    copies `cards`, deals pools[k] into places[k] for each class k (the rest being undealt),
    and reads each formation and each pile of cards out unseen as a slice of it."""

    at: int
    """The history length of the position it was made for."""
    pools: tuple[tuple[int, ...], ...]
    places: tuple[tuple[int, ...], ...]
    """Per class, the index in cards of each place it fills, in the deal's order."""
    cards: tuple[int, ...]
    """Every slot as everyone sees it, 14 per seat (a hidden one holds a placeholder), then
    each seat's cards out unseen (placeholders)."""
    piles: tuple[tuple[int, int], ...]
    """Per seat, where its cards out unseen lie in cards (start, end)."""
    steps: tuple[tuple[int, int], ...]
    """(history index of a dealt card's chance step, its place in cards) for each place; ()
    when the history does not hold this deal (a state built from a view)."""


def blanks_of(state: CaptureTheCommanderState) -> Blanks:
    """The Blanks of a position, from what everyone sees: which slots are hidden, which cards
    are known or removed, how many left play unseen, and where in the deal each was dealt
    (with one_suit_each, suit i was dealt to seat i). The hidden cards are never read."""
    n = state.num_seats
    classes = 4 if state.options.one_suit_each else 1
    # Per class, each place to fill: (index in cards, deal index).
    places: list[list[tuple[int, int]]] = [[] for _ in range(classes)]
    seen = set()
    table = [EMPTY] * (14 * n)
    piles = []
    for seat in range(n):
        formation, known, index = state.formations[seat], state.known[seat], state.deal_index[seat]
        for slot in SLOTS:
            if formation[slot] == EMPTY:
                continue
            if known[slot]:
                seen.add(formation[slot])
                table[14 * seat + slot] = formation[slot]
            else:
                table[14 * seat + slot] = UNDRAWN
                places[index[slot] % n % classes].append((14 * seat + slot, index[slot]))
        seen.update(state.removed[seat])
    for seat in range(n):
        start = len(table)
        for dealt in state.unseen_deal_index[seat]:
            places[dealt % n % classes].append((len(table), dealt))
            table.append(UNDRAWN)
        piles.append((start, len(table)))
    start = state.deal_start
    # A state built from a view has deal_start -1: its history does not hold this deal.
    holds_deal = start >= 0 and len(state.history) >= start + state.dealt
    return Blanks(
        at=len(state.history),
        pools=tuple(
            tuple(c for c in cards.DECK if c not in seen and cards.suit(c) % classes == kind)
            for kind in range(classes)
        ),
        places=tuple(tuple(place for place, _ in kind) for kind in places),
        cards=tuple(table),
        piles=tuple(piles),
        steps=(
            tuple((start + dealt, place) for kind in places for place, dealt in kind)
            if holds_deal
            else ()
        ),
    )


def fill(state: CaptureTheCommanderState, blanks: Blanks, rng: random.Random) -> None:
    """Deal the pools into the blanks of a clone of their position, every placement equally
    likely; the cards left over are the undealt rest. The deal's chance steps are rewritten
    to match when the history holds them."""
    dealt = list(blanks.cards)
    deck: list[int] = []
    for pool, places in zip(blanks.pools, blanks.places, strict=True):
        deck += dealt_into(pool, dealt, places, rng)
    deck.sort()
    state.deck = deck
    state.formations = [dealt[k : k + 14] for k in range(0, 14 * state.num_seats, 14)]
    for seat, (start, end) in enumerate(blanks.piles):
        if end > start:
            state.unseen_out[seat] = dealt[start:end]
    history = state.history
    for step, place in blanks.steps:
        history[step] = DEALT[dealt[place]]


DEALT = tuple(Step(CHANCE, card) for card in cards.DECK)
"""Card -> the chance step that deals it: made once, as a re-deal rewrites up to 52 steps."""

UNDRAWN = 52
"""Not a card: what a view's hidden slots hold until a sample deals them."""


class CommanderWorlds(WorldSampler[CaptureTheCommanderOptions]):
    """Worlds from a seat's view: the table from its observation (every card revealed in this
    deal is still shown, in a slot or among the removed), where each hidden card was dealt from
    the deal's events (gifts move cards, a capture sends its hidden ones out unseen), the cards
    to deal from both (see Blanks); each sample is a clone with the blanks dealt afresh and any
    other seat's pending war choice drawn again."""

    def __init__(self, options: CaptureTheCommanderOptions, view: SeatView) -> None:
        super().__init__(view)
        if not view.observation.HasField("capture_the_commander"):
            raise ValueError("not a Capture the Commander observation")
        seen = view.observation.capture_the_commander
        base = CaptureTheCommanderState(options, len(seen.formations))
        _set_table(base, seen)
        base.deal_index, base.unseen_deal_index = _follow_deal(view.events, base)
        _set_battle(base, seen, self.seat)
        base.forget_legal_actions()
        self.base = base
        self.blanks = blanks_of(base)
        base.blanks = self.blanks

    def sample(self, rng: random.Random) -> CaptureTheCommanderState:
        state = self.base.clone()
        fill(state, self.blanks, rng)
        state.redraw_war_choices(self.seat, rng)
        return state

    def hidden(self, state: GameState[CaptureTheCommanderOptions]) -> set[tuple[object, int]]:
        """Hidden cards by slot, by the seat whose cards left play unseen, and undealt; and
        the other seats' pending war choices."""
        assert isinstance(state, CaptureTheCommanderState)
        pairs: set[tuple[object, int]] = set()
        for seat, formation in enumerate(state.formations):
            known = state.known[seat]
            pairs.update(
                ((seat, slot), formation[slot])
                for slot in SLOTS
                if formation[slot] != EMPTY and not known[slot]
            )
            pairs.update((("unseen", seat), card) for card in state.unseen_out[seat])
        pairs.update(("undealt", card) for card in state.deck)
        if state.battle is not None:
            choices = state.battle.choices.items()
            pairs.update((("war choice", s), slot) for s, slot in choices if s != self.seat)
        return pairs


def _set_table(base: CaptureTheCommanderState, seen: ctcpb.CaptureTheCommanderObservation) -> None:
    """Everything the observation shows: the formations slot by slot, the removed cards, how
    many left play unseen, who is in, whose turn, scores and counts. No battle yet (TURN)."""
    n = base.num_seats
    base.scores = list(seen.scores)
    base.deal, base.first_seat = seen.deal, seen.first_seat
    base.decisions, base.current = seen.decisions, seen.current_seat
    base.in_game = [formation.in_game for formation in seen.formations]
    base.out_order = list(seen.out_order)
    for formation in seen.formations:
        seat = formation.seat
        cards_there, known = base.formations[seat], base.known[seat]
        holes = ALL_HOLES
        for slot in formation.slots:
            if slot.state == shown.EMPTY_SLOT:
                continue
            holes &= ~BIT[slot.number]
            if slot.state == shown.HIDDEN_SLOT:
                cards_there[slot.number] = UNDRAWN
            else:
                cards_there[slot.number] = cards.from_message(slot.card)
                known[slot.number] = True
        base.holes[seat] = holes
        base.removed[seat] = [cards.from_message(card) for card in formation.removed]
        base.unseen_out[seat] = [UNDRAWN] * formation.left_unseen
    base.deck = []
    base.dealt = 13 * n
    # This deal's chance steps are not in the (empty) history: nothing to rewrite there.
    base.deal_start = -1
    base.phase = TURN


def _follow_deal(
    events: tuple[pb.Event, ...], base: CaptureTheCommanderState
) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """Where in the deal's order each card in play and each card out unseen was dealt, from the
    events of the deal under way (its table must agree with the observation's)."""
    n = base.num_seats
    index = [list(row) for row in DEAL_INDEX[n]]
    filled = [[slot > 0 for slot in range(14)] for _ in range(n)]
    known = [[False] * 14 for _ in range(n)]
    unseen: list[list[int]] = [[] for _ in range(n)]
    for event in events:
        typed = event.capture_the_commander
        kind = typed.WhichOneof("kind")
        if kind == "deal_started":
            index = [list(row) for row in DEAL_INDEX[n]]
            filled = [[slot > 0 for slot in range(14)] for _ in range(n)]
            known = [[False] * 14 for _ in range(n)]
            unseen = [[] for _ in range(n)]
        elif kind == "card_revealed":
            known[typed.card_revealed.seat][typed.card_revealed.slot] = True
        elif kind == "battle_won":
            for slot in typed.battle_won.removed_slots:
                filled[typed.battle_won.loser][slot] = known[typed.battle_won.loser][slot] = False
        elif kind == "gift_given":
            gift = typed.gift_given
            index[gift.ally][gift.ally_slot] = index[gift.giver][gift.slot]
            filled[gift.ally][gift.ally_slot], filled[gift.giver][gift.slot] = True, False
        elif kind == "commander_captured":
            seat = typed.commander_captured.seat
            out = [index[seat][s] for s in SLOTS if filled[seat][s] and not known[seat][s]]
            unseen[seat] += out
            filled[seat], known[seat] = [False] * 14, [False] * 14
    for seat in range(n):
        if [s for s in SLOTS if filled[seat][s]] != [
            s for s in SLOTS if base.formations[seat][s] != EMPTY
        ] or len(unseen[seat]) != len(base.unseen_out[seat]):
            raise ValueError(
                f"capture-the-commander: the view's events do not account for seat {seat}'s "
                "formation in its observation"
            )
    return tuple(map(tuple, index)), tuple(map(tuple, unseen))


def _set_battle(
    base: CaptureTheCommanderState, seen: ctcpb.CaptureTheCommanderObservation, seat: int
) -> None:
    """The war under way, if any: the flipped slots and who still has to choose are shown; a
    side that could flip (a war's options depend on the table alone) and is no longer waiting
    has chosen: this seat's own choice is shown to it, another's is drawn in each sample."""
    if not seen.HasField("battle"):
        return
    shown_battle = seen.battle
    battle = Battle(shown_battle.attacker, 0, shown_battle.defender, 0)
    battle.attacker_slots = list(shown_battle.attacker_slots)
    battle.defender_slots = list(shown_battle.defender_slots)
    battle.wars = shown_battle.wars
    battle.waiting = list(shown_battle.waiting)
    base.battle, base.phase = battle, WAR
    able = [s for s in (battle.attacker, battle.defender) if base.war_options(s)]
    battle.sole = len(able) == 1
    for side in able:
        if side in battle.waiting:
            continue
        if side == seat:
            if not seen.HasField("own_war_choice"):
                raise ValueError("capture-the-commander: a war choice made but not shown")
            battle.choices[side] = seen.own_war_choice
        else:
            battle.choices[side] = base.war_options(side)[0]  # drawn again in every sample
