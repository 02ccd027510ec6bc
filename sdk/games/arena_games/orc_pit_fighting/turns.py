"""Non-combat turns: one card played for one of its uses (or the last card discarded), the
spade-picture cancel offered to the other seat, then the use carried out."""

from __future__ import annotations

from arena_games.orc_pit_fighting import combat, events, rounds
from arena_games.orc_pit_fighting.actions import (
    CANCELLABLE,
    DECLINE,
    DONE,
    Use,
    actions_of,
    card_action,
    decode,
)
from arena_games.orc_pit_fighting.events import BOTH, ONLY, Zone
from arena_games.orc_pit_fighting.rules import (
    ACE_OF_CLUBS,
    ACE_OF_HEARTS,
    CLUBS,
    DIAMONDS,
    DIG_DEPTH,
    HEARTS,
    SPADE_PICTURES,
    SPADES,
    is_picture,
    is_red,
    suit,
)
from arena_games.orc_pit_fighting.table import DrawFor, Phase, Table

HEART_USES = (Use.FLAIR, Use.DRAW_TWO, Use.TAKE_THEIR_OUT, Use.TAKE_OWN_OUT)
# Enum members under short module names: looking one up on its Enum class is slow, and
# these are read at every step.
HAND, DISCARD, OUT, PIT, DECK = Zone.HAND, Zone.DISCARD, Zone.OUT, Zone.PIT, Zone.DECK
ATTACK, FLAIR, DRAW_TWO, TAKE_OWN_OUT, TAKE_THEIR_OUT, DISCARD_USE = (
    Use.ATTACK,
    Use.FLAIR,
    Use.DRAW_TWO,
    Use.TAKE_OWN_OUT,
    Use.TAKE_THEIR_OUT,
    Use.DISCARD,
)
CANCEL, KEEP = Phase.CANCEL, Phase.KEEP
HEART_PICTURES = frozenset(c for c in range(52) if suit(c) == HEARTS and is_picture(c))
ATTACKS, CANCELS, KEEPS, PUT_DOWNS = (
    actions_of(Use.ATTACK),
    actions_of(Use.CANCEL),
    actions_of(Use.KEEP),
    actions_of(Use.PUT_DOWN),
)

# Where each use puts the card: own pile, or the opponent's (True in the second place).
DESTINATION = {
    Use.ATTACK: (Zone.PIT, False),
    Use.DIG: (Zone.OUT, False),
    Use.FLAIR: (Zone.FLAIR, False),
    Use.DRAW_TWO: (Zone.OUT, False),
    Use.TAKE_THEIR_OUT: (Zone.OUT, False),
    Use.TAKE_OWN_OUT: (Zone.OUT, True),
    Use.HEAL: (Zone.OUT, False),
    Use.SWAP: (Zone.OUT, False),
}


# -- legal actions ---------------------------------------------------------------------------------
def card_uses(card: int) -> list[Use]:
    """Every non-combat use of a card."""
    kind = suit(card)
    if kind == CLUBS:
        return [Use.ATTACK]
    if kind == SPADES:
        return [Use.DIG]
    if kind == HEARTS:
        return [*HEART_USES, Use.HEAL] if card == ACE_OF_HEARTS else list(HEART_USES)
    return [Use.DRAW_TWO, Use.SWAP] if is_picture(card) else [Use.DRAW_TWO]


# The actions of every non-combat use of each card, by card.
PLAYS = tuple(tuple(card_action(use, c) for use in card_uses(c)) for c in range(52))


def turn_actions(table: Table, seat: int) -> list[int]:
    """A player holding only clubs must attack; one holding a single card may discard it."""
    hand = table.hands[seat]
    if max(hand, default=0) < 13:  # clubs are cards 0..12
        return [ATTACKS[c] for c in hand]
    actions = [action for c in hand for action in PLAYS[c]]
    if len(hand) == 1:
        actions.append(card_action(Use.DISCARD, hand[0]))
    actions.sort()
    return actions


def extra_red_actions(table: Table, seat: int) -> list[int]:
    """After a heart picture: one more red card for any of its uses, or done."""
    plays = [action for c in table.hands[seat] if is_red(c) for action in PLAYS[c]]
    return sorted([DONE, *plays])


def cancel_actions(table: Table, seat: int) -> list[int]:
    """Offered after every cancellable play, whether or not the seat holds a spade picture."""
    return [DECLINE, *[CANCELS[c] for c in table.hands[seat] if c in SPADE_PICTURES]]


def keep_actions(table: Table) -> list[int]:
    return sorted([KEEPS[c] for c in table.two])


def swappable(hand: list[int]) -> list[int]:
    """Cards that may be put down for a swap: any but clubs, which may only be played to start
    a combat."""
    return [c for c in hand if c >= 13]  # clubs are cards 0..12


def put_down_actions(table: Table, seat: int) -> list[int]:
    return [PUT_DOWNS[c] for c in swappable(table.hands[seat])]


# -- playing a card --------------------------------------------------------------------------------
def play(table: Table, seat: int, action: int) -> None:
    """A card played in a turn or as the extra red card; DONE ends the extra play."""
    if action == DONE:
        events.passed(table, seat, "extra red")
        rounds.end_turn(table, seat)
        return
    use, card = decode(action)
    assert use is not None
    table.take(seat, card)
    if use is DISCARD_USE:
        table.discard.append(card)
        events.moved(table, card, HAND, seat, DISCARD, None, use)
        rounds.end_round(table, f"seat {seat} discards its last card")
        return
    zone, theirs = DESTINATION[use]
    target = 1 - seat if theirs else seat
    events.moved(table, card, HAND, seat, zone, None if zone is PIT else target, use)
    if card == ACE_OF_CLUBS:
        combat.start_combat(table, seat, card)
        return
    assert use in CANCELLABLE
    table.pending = (seat, card, use)
    table.phase = CANCEL
    table.actor = 1 - seat


def react(table: Table, seat: int, action: int) -> None:
    """The cancel reaction: decline, or a spade picture to own Out pile discards the card."""
    assert table.pending is not None
    owner, card, use = table.pending
    table.pending = None
    if action == DECLINE:
        events.passed(table, seat, "cancel")
        carry_out(table, owner, card, use)
        return
    _, picture = decode(action)
    table.take(seat, picture)
    table.out[seat].append(picture)
    events.moved(table, picture, HAND, seat, OUT, seat, Use.CANCEL)
    zone, theirs = DESTINATION[use]
    pile = None if zone is PIT else (seat if theirs else owner)
    table.discard.append(card)
    events.moved(table, card, zone, pile, DISCARD, None, None)
    table.resolving = None
    rounds.begin_turn(table, owner, "cancelled, plays again")


def carry_out(table: Table, seat: int, card: int, use: Use) -> None:
    """The card reaches its pile and its use happens."""
    other = 1 - seat
    table.resolving = card
    if use is ATTACK:
        table.resolving = None
        combat.start_combat(table, seat, card)
    elif use is FLAIR:
        table.flair[seat].append(card)
        finish_play(table, seat)
    elif use is TAKE_OWN_OUT:
        table.out[other].append(card)
        take_top_of_out(table, seat, seat)
    elif use is TAKE_THEIR_OUT:
        table.out[seat].append(card)
        take_top_of_out(table, seat, other)
    else:
        table.out[seat].append(card)
        carry_out_from_own_out(table, seat, card, use)


def carry_out_from_own_out(table: Table, seat: int, card: int, use: Use) -> None:
    if use is Use.HEAL:
        table.damage[seat] = max(0, table.damage[seat] - 1)
        events.damage(table, seat)
        finish_play(table, seat)
    elif use is Use.DIG:
        if table.discard:
            table.phase = Phase.DIG
            table.actor = seat
        else:
            finish_play(table, seat)
    elif use is Use.DRAW_TWO:
        table.two = []
        if not rounds.start_deck_draw(table, DrawFor.TWO, seat):
            settle_two(table, seat)
    else:
        assert use is Use.SWAP and suit(card) == DIAMONDS
        if swappable(table.hands[seat]) and table.hands[1 - seat]:
            table.phase = Phase.PUT_DOWN
            table.actor = seat
        else:
            finish_play(table, seat)


def finish_play(table: Table, seat: int) -> None:
    """A heart picture lets the player play another red card at once; else the turn ends."""
    card = table.resolving
    if card is not None and card in HEART_PICTURES:
        table.resolving = None
        table.phase = Phase.EXTRA_RED
        table.turn_seat = table.actor = seat
        return
    rounds.end_turn(table, seat)


def take_top_of_out(table: Table, seat: int, pile: int) -> None:
    if table.out[pile]:
        card = table.out[pile].pop()
        table.give(seat, card, known=True)
        events.moved(table, card, OUT, pile, HAND, seat, None)
    finish_play(table, seat)


# -- the spade: one of the top five of the discard pile --------------------------------------------
def dig_outcomes(table: Table) -> list[int]:
    return sorted(table.discard[-DIG_DEPTH:])


def dug(table: Table, card: int) -> None:
    """The drawn card is known to both seats: the rest go back face up in their order."""
    seat = table.actor
    table.discard.remove(card)
    table.give(seat, card, known=True)
    events.moved(table, card, DISCARD, None, HAND, seat, Use.DIG)
    finish_play(table, seat)


# -- draw two, keep one ----------------------------------------------------------------------------
def drew_one_of_two(table: Table, card: int) -> None:
    seat = table.draw_seat
    table.two.append(card)
    events.moved(table, card, DECK, None, HAND, seat, DRAW_TWO, ONLY[seat])
    rounds.refill_at_once(table)
    if len(table.two) < 2 and rounds.start_deck_draw(table, DrawFor.TWO, seat):
        return
    settle_two(table, seat)


def settle_two(table: Table, seat: int) -> None:
    if len(table.two) == 2:
        table.phase = KEEP
        table.actor = seat
        return
    for card in table.two:
        table.give(seat, card)
    table.two = []
    finish_play(table, seat)


def keep(table: Table, seat: int, action: int) -> None:
    _, kept = decode(action)
    other = next(c for c in table.two if c != kept)
    table.two = []
    table.give(seat, kept)
    table.discard.append(other)
    events.moved(table, other, HAND, seat, DISCARD, None, None)
    finish_play(table, seat)


# -- the diamond picture's swap --------------------------------------------------------------------
def put_down(table: Table, seat: int, action: int) -> None:
    _, card = decode(action)
    table.take(seat, card, face_down=True)
    table.put_down = card
    events.moved(table, card, HAND, seat, PIT, None, Use.PUT_DOWN, ONLY[seat], face_down=True)
    table.phase = Phase.SWAP_DRAW


def swap_outcomes(table: Table) -> list[int]:
    return list(table.hands[1 - table.actor])


def swapped(table: Table, card: int) -> None:
    """The drawn card goes to the swapper, the face-down card to the opponent: both seats know
    both cards, a spectator neither."""
    seat, other = table.actor, 1 - table.actor
    given = table.put_down
    assert given is not None
    table.take(other, card)
    table.give(seat, card, known=True)
    table.exposed[seat].discard(given)
    table.put_down = None
    table.give(other, given, known=True)
    events.moved(table, card, HAND, other, HAND, seat, Use.SWAP, BOTH)
    events.moved(table, given, PIT, None, HAND, other, Use.SWAP, BOTH)
    finish_play(table, seat)
