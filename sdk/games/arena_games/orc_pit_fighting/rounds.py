"""The flow of rounds: fangs, favorite, the deal, non-combat turns, the round's end, damage and
the end of the game; and drawing from the deck with its reshuffles."""

from __future__ import annotations

from arena_games.orc_pit_fighting import events
from arena_games.orc_pit_fighting.events import Zone
from arena_games.orc_pit_fighting.rules import DAMAGE_TO_LOSE, HAND_SIZE, ROUND_TURN_CAP, d3
from arena_games.orc_pit_fighting.table import DrawFor, Phase, Table

# Enum members under short module names: looking one up on its Enum class is slow, and
# these are read at every step.
TURN, DECK_DRAW = Phase.TURN, Phase.DECK_DRAW
DECK, DISCARD, HAND = Zone.DECK, Zone.DISCARD, Zone.HAND


def seat_of_roll(face: int) -> int:
    """Who goes when a die decides: 1-3 seat 0, 4-6 seat 1."""
    return 0 if face <= 3 else 1


# -- the start -------------------------------------------------------------------------------------
def fangs_rolled(table: Table, face: int) -> None:
    seat = len(table.fangs)
    table.fangs.append(d3(face))
    events.dice(table, "fangs", face, d3(face), seat)
    if len(table.fangs) == 2:
        start_round(table)


def favorite(table: Table) -> int | None:
    """First round: the longer fangs. Later: the less wounded, then the higher Flair."""
    if table.round == 1:
        a, b = table.fangs
    else:
        a, b = -table.damage[0], -table.damage[1]
        if a == b:
            a, b = len(table.flair[0]), len(table.flair[1])
    if a == b:
        return None
    return 0 if a > b else 1


def start_round(table: Table) -> None:
    table.round += 1
    table.favorite = favorite(table)
    table.round_turns = 0
    events.round_started(table)
    table.deal_queue = [0, 1] * HAND_SIZE
    if table.favorite is not None:
        table.deal_queue.append(table.favorite)
    continue_deal(table)


def continue_deal(table: Table) -> None:
    if table.deal_queue and start_deck_draw(table, DrawFor.DEAL, table.deal_queue[0]):
        return
    table.deal_queue = []
    if not table.hands[0] and not table.hands[1]:
        finish(table, None, "no cards left to deal")
    elif table.favorite is not None:
        begin_turn(table, table.favorite, "favorite")
    else:
        table.phase = Phase.FIRST_ROLL


def dealt(table: Table, card: int) -> None:
    seat = table.deal_queue.pop(0)
    drawn_privately(table, seat, card)
    continue_deal(table)


def first_rolled(table: Table, face: int) -> None:
    events.dice(table, "first turn", face, face)
    begin_turn(table, seat_of_roll(face), "rolled")


# -- turns -----------------------------------------------------------------------------------------
def begin_turn(table: Table, seat: int, how: str) -> None:
    """A non-combat turn starts, unless the round is over: a seat has no cards, or the turn
    cap of a round without combat is reached."""
    for s in (0, 1):
        if not table.hands[s]:
            end_round(table, f"seat {s} has no cards left")
            return
    if table.round_turns >= ROUND_TURN_CAP:
        end_round(table, f"{ROUND_TURN_CAP} non-combat turns without a combat")
        return
    table.round_turns += 1
    table.phase = TURN
    table.turn_seat = table.actor = seat
    events.turn_given(table, seat, how)


def end_turn(table: Table, seat: int) -> None:
    table.resolving = None
    begin_turn(table, 1 - seat, "next")


def end_round(table: Table, reason: str) -> None:
    """Every card still in hand is discarded, and the next round is dealt."""
    table.resolving = None
    for seat in (0, 1):
        for card in list(table.hands[seat]):
            table.take(seat, card)
            table.discard.append(card)
            events.moved(table, card, HAND, seat, DISCARD, None, None)
        table.exposed[seat].clear()
    events.round_ended(table, reason)
    start_round(table)


# -- damage and the end ----------------------------------------------------------------------------
def wound(table: Table, seat: int) -> None:
    table.damage[seat] += 1
    events.damage(table, seat)
    if table.damage[seat] >= DAMAGE_TO_LOSE:
        finish(table, 1 - seat, f"seat {seat} is knocked out")


def finish(table: Table, winner: int | None, reason: str) -> None:
    table.winner = winner
    table.over_reason = reason
    table.phase = Phase.OVER


# -- the deck --------------------------------------------------------------------------------------
def refill(table: Table) -> bool:
    """Make sure the deck has a card: an empty deck takes the discard pile; with that empty
    too, both Out piles but their two topmost cards. False when there is no card at all. A
    draw calls it too, for a deck that found nothing to refill it when it ran out."""
    if table.deck:
        return True
    if table.discard:
        source, gathered = Zone.DISCARD, table.discard
        table.discard = []
    else:
        source, gathered = Zone.OUT, []
        for seat in (0, 1):
            gathered += table.out[seat][:-2]
            table.out[seat] = table.out[seat][-2:]
    if not gathered:
        return False
    table.deck = sorted(gathered)
    events.reshuffled(table, source, len(gathered))
    return True


def start_deck_draw(table: Table, why: DrawFor, seat: int) -> bool:
    """Set up the chance step that draws a card for a seat; False when no card is left."""
    if not refill(table):
        return False
    table.draw_for = why
    table.draw_seat = seat
    table.phase = DECK_DRAW
    return True


def drawn_privately(table: Table, seat: int, card: int) -> None:
    """A card from the deck to a seat's hand: only that seat learns which."""
    table.give(seat, card)
    events.moved(table, card, DECK, None, HAND, seat, None, events.ONLY[seat])
    refill_at_once(table)


def refill_at_once(table: Table) -> None:
    """'If the deck runs out the discard pile is shuffled and becomes the new deck': right
    after the draw that emptied it, not at the next draw. The deck is an unordered pile, so
    the shuffle has no outcome to choose; the next draw is the chance step."""
    if not table.deck:
        refill(table)
