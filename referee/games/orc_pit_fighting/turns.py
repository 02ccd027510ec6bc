"""Non-combat turns: one card played for one of its uses (or the last card discarded), the
spade-picture cancel offered to the other seat, then the use carried out."""

from __future__ import annotations

from referee.games.orc_pit_fighting import combat, events, rounds
from referee.games.orc_pit_fighting.actions import (
    CANCELLABLE,
    DECLINE,
    DONE,
    Use,
    card_action,
    decode,
)
from referee.games.orc_pit_fighting.events import Zone
from referee.games.orc_pit_fighting.rules import (
    ACE_OF_CLUBS,
    ACE_OF_HEARTS,
    CLUBS,
    DIAMONDS,
    DIG_DEPTH,
    HEARTS,
    SPADES,
    is_picture,
    is_red,
    suit,
)
from referee.games.orc_pit_fighting.table import DrawFor, Phase, Table

HEART_USES = (Use.FLAIR, Use.DRAW_TWO, Use.TAKE_THEIR_OUT, Use.TAKE_OWN_OUT)

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


def turn_actions(table: Table, seat: int) -> list[int]:
    """A player holding only clubs must attack; one holding a single card may discard it."""
    hand = table.hands[seat]
    if all(suit(c) == CLUBS for c in hand):
        return [card_action(Use.ATTACK, c) for c in hand]
    actions = [card_action(use, c) for c in hand for use in card_uses(c)]
    if len(hand) == 1:
        actions.append(card_action(Use.DISCARD, hand[0]))
    return sorted(actions)


def extra_red_actions(table: Table, seat: int) -> list[int]:
    """After a heart picture: one more red card for any of its uses, or done."""
    plays = [card_action(use, c) for c in table.hands[seat] if is_red(c) for use in card_uses(c)]
    return sorted([DONE, *plays])


def cancel_actions(table: Table, seat: int) -> list[int]:
    """Offered after every cancellable play, whether or not the seat holds a spade picture."""
    pictures = [
        card_action(Use.CANCEL, c) for c in table.hands[seat] if suit(c) == SPADES and is_picture(c)
    ]
    return [DECLINE, *pictures]


def keep_actions(table: Table) -> list[int]:
    return sorted(card_action(Use.KEEP, c) for c in table.two)


def swappable(hand: list[int]) -> list[int]:
    """Cards that may be put down for a swap: any but clubs, which may only be played to start
    a combat."""
    return [c for c in hand if suit(c) != CLUBS]


def put_down_actions(table: Table, seat: int) -> list[int]:
    return [card_action(Use.PUT_DOWN, c) for c in swappable(table.hands[seat])]


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
    if use is Use.DISCARD:
        table.discard.append(card)
        events.moved(table, card, (Zone.HAND, seat), (Zone.DISCARD, None), use)
        rounds.end_round(table, f"seat {seat} discards its last card")
        return
    zone, theirs = DESTINATION[use]
    target = 1 - seat if theirs else seat
    events.moved(table, card, (Zone.HAND, seat), (zone, None if zone is Zone.PIT else target), use)
    if card == ACE_OF_CLUBS:
        combat.start_combat(table, seat, card)
        return
    assert use in CANCELLABLE
    table.pending = (seat, card, use)
    table.phase = Phase.CANCEL
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
    events.moved(table, picture, (Zone.HAND, seat), (Zone.OUT, seat), Use.CANCEL)
    zone, theirs = DESTINATION[use]
    pile = None if zone is Zone.PIT else (seat if theirs else owner)
    table.discard.append(card)
    events.moved(table, card, (zone, pile), (Zone.DISCARD, None), None)
    table.resolving = None
    rounds.begin_turn(table, owner, "cancelled, plays again")


def carry_out(table: Table, seat: int, card: int, use: Use) -> None:
    """The card reaches its pile and its use happens."""
    other = 1 - seat
    table.resolving = card
    if use is Use.ATTACK:
        table.resolving = None
        combat.start_combat(table, seat, card)
    elif use is Use.FLAIR:
        table.flair[seat].append(card)
        finish_play(table, seat)
    elif use is Use.TAKE_OWN_OUT:
        table.out[other].append(card)
        take_top_of_out(table, seat, seat)
    elif use is Use.TAKE_THEIR_OUT:
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
    if card is not None and suit(card) == HEARTS and is_picture(card):
        table.resolving = None
        table.phase = Phase.EXTRA_RED
        table.turn_seat = table.actor = seat
        return
    rounds.end_turn(table, seat)


def take_top_of_out(table: Table, seat: int, pile: int) -> None:
    if table.out[pile]:
        card = table.out[pile].pop()
        table.give(seat, card, known=True)
        events.moved(table, card, (Zone.OUT, pile), (Zone.HAND, seat), None)
    finish_play(table, seat)


# -- the spade: one of the top five of the discard pile --------------------------------------------
def dig_outcomes(table: Table) -> list[int]:
    return sorted(table.discard[-DIG_DEPTH:])


def dug(table: Table, card: int) -> None:
    """The drawn card is known to both seats: the rest go back face up in their order."""
    seat = table.actor
    table.discard.remove(card)
    table.give(seat, card, known=True)
    events.moved(table, card, (Zone.DISCARD, None), (Zone.HAND, seat), Use.DIG)
    finish_play(table, seat)


# -- draw two, keep one ----------------------------------------------------------------------------
def drew_one_of_two(table: Table, card: int) -> None:
    seat = table.draw_seat
    table.two.append(card)
    events.moved(
        table, card, (Zone.DECK, None), (Zone.HAND, seat), Use.DRAW_TWO, knowers=frozenset([seat])
    )
    if len(table.two) < 2 and rounds.start_deck_draw(table, DrawFor.TWO, seat):
        return
    settle_two(table, seat)


def settle_two(table: Table, seat: int) -> None:
    if len(table.two) == 2:
        table.phase = Phase.KEEP
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
    events.moved(table, other, (Zone.HAND, seat), (Zone.DISCARD, None), None)
    finish_play(table, seat)


# -- the diamond picture's swap --------------------------------------------------------------------
def put_down(table: Table, seat: int, action: int) -> None:
    _, card = decode(action)
    table.take(seat, card, face_down=True)
    table.put_down = card
    table.put_down_step = table.step
    events.moved(
        table,
        card,
        (Zone.HAND, seat),
        (Zone.PIT, None),
        Use.PUT_DOWN,
        knowers=frozenset([seat]),
        face_down=True,
    )
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
    table.put_down_step = -1
    table.give(other, given, known=True)
    both = frozenset([0, 1])
    events.moved(table, card, (Zone.HAND, other), (Zone.HAND, seat), Use.SWAP, knowers=both)
    events.moved(table, given, (Zone.PIT, None), (Zone.HAND, other), Use.SWAP, knowers=both)
    finish_play(table, seat)
