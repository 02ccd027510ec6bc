"""The Result segment, the Draw procedure and what follows a combat."""

from __future__ import annotations

from arena_games.orc_pit_fighting import combat, events, rounds
from arena_games.orc_pit_fighting.actions import GIVE_TURN, TAKE_TURN, Use, card_action, decode
from arena_games.orc_pit_fighting.events import Zone
from arena_games.orc_pit_fighting.rules import (
    ACE_OF_CLUBS,
    ACE_OF_SPADES,
    CLUBS,
    DIAMONDS,
    HEARTS,
    SPADES,
    Play,
    suit,
)
from arena_games.orc_pit_fighting.table import Combat, Phase, Stance, Table

ACE_OF_CLUBS_BONUS = 5
BLANK_CAP = 5
CAP = 4


# -- the Result ------------------------------------------------------------------------------------
def bonuses(fight: Combat) -> tuple[int, int]:
    """What each seat adds to its roll: the ace of clubs +5 against nothing; the ace of spades
    nothing for either; else the difference of Combat Values for the higher, at most 5 when a
    Blank stood unreplaced, at most 4 otherwise. A Draw-procedure roll has fixed additions."""
    if fight.reroll is not None:
        return fight.reroll
    if fight.ace_of_clubs is not None:
        return (ACE_OF_CLUBS_BONUS, 0) if fight.ace_of_clubs == 0 else (0, ACE_OF_CLUBS_BONUS)
    if fight.ace_of_spades is not None:
        return (0, 0)
    values = [combat.value_of(fight, 0), combat.value_of(fight, 1)]
    cap = BLANK_CAP if any(fight.blank_unsubstituted) else CAP
    difference = min(abs(values[0] - values[1]), cap)
    return (difference, 0) if values[0] > values[1] else (0, difference)


def rolled(table: Table, face: int) -> None:
    """The attacked seat rolls first, then the attacker."""
    fight = combat.the_combat(table)
    roller = fight.attacked if not fight.rolls else fight.attacker
    fight.rolls.append(face)
    events.dice(table, "result", face, face, roller)
    if len(fight.rolls) == 2:
        resolve(table)


def resolve(table: Table) -> None:
    fight = combat.the_combat(table)
    rolls = [0, 0]
    rolls[fight.attacked], rolls[fight.attacker] = fight.rolls
    bonus = bonuses(fight)
    totals = [rolls[s] + bonus[s] for s in (0, 1)]
    values = (combat.value_of(fight, 0), combat.value_of(fight, 1))
    winner = None if totals[0] == totals[1] else (0 if totals[0] > totals[1] else 1)
    events.combat_resolved(table, (rolls[0], rolls[1]), bonus, values, winner)
    discard_pit(table)
    fight.reroll = None
    if winner is None:
        start_draw_procedure(table)
        return
    rounds.wound(table, 1 - winner)
    if table.phase != Phase.OVER:
        after_combat(table, winner)


def discard_pit(table: Table) -> None:
    """Every card in the Pit to the discard pile in the order it was put there, face up."""
    fight = combat.the_combat(table)
    for card in fight.pit:
        table.discard.append(card)
        for seat in (0, 1):
            table.exposed[seat].discard(card)
        events.moved(table, card, Zone.PIT, None, Zone.DISCARD, None, None)
    fight.pit = []
    fight.new_round()


# -- the Draw procedure ----------------------------------------------------------------------------
def start_draw_procedure(table: Table) -> None:
    """Both seats with cards put one face down at the same time; none left: no winner."""
    fight = combat.the_combat(table)
    if not table.hands[0] and not table.hands[1]:
        after_combat(table, None)
        return
    fight.choices = [None, None]
    fight.revealed = [None, None]
    events.segment(table, "draw")
    table.phase = Phase.DRAW_CHOICE


def choosers(table: Table) -> tuple[int, ...]:
    fight = combat.the_combat(table)
    return tuple(s for s in (0, 1) if table.hands[s] and fight.choices[s] is None)


def face_down_actions(table: Table, seat: int) -> list[int]:
    return [card_action(Use.FACE_DOWN, c) for c in table.hands[seat]]


def choose_face_down(table: Table, seat: int, action: int) -> None:
    """Recorded privately; the card stays in hand until both are turned up together."""
    fight = combat.the_combat(table)
    _, card = decode(action)
    fight.choices[seat] = card
    events.face_down_chosen(table, seat, card)
    if not choosers(table):
        reveal(table)


def effective_suit(card: int | None) -> int:
    """Nothing counts as hearts."""
    return HEARTS if card is None else suit(card)


def reroll_bonus(card: int, other: int | None) -> int:
    """Clubs against hearts: +3 (+4 against nothing), the ace of clubs +5. Spades against
    hearts: +1 (+2 against nothing), the ace of spades nothing."""
    if card == ACE_OF_CLUBS:
        return ACE_OF_CLUBS_BONUS
    if card == ACE_OF_SPADES:
        return 0
    base = 3 if suit(card) == CLUBS else 1
    return base + (1 if other is None else 0)


def outcome_of(shown: list[int | None]) -> str:
    kinds = [effective_suit(c) for c in shown]
    if any(c is not None and suit(c) == DIAMONDS for c in shown):
        return "no winner"
    if kinds[0] == kinds[1] and kinds[0] != CLUBS:
        return "no winner"
    if HEARTS in kinds:
        return "roll again"
    return "combat again"


def reveal(table: Table) -> None:
    fight = combat.the_combat(table)
    shown = list(fight.choices)
    for seat, card in enumerate(shown):
        if card is not None:
            table.take(seat, card)
            fight.pit.append(card)
    fight.revealed = shown
    fight.choices = [None, None]
    outcome = outcome_of(shown)
    events.turned_up(table, (shown[0], shown[1]), outcome)
    if outcome == "no winner":
        after_combat(table, None)
    elif outcome == "roll again":
        hitter = next(s for s in (0, 1) if effective_suit(shown[s]) != HEARTS)
        card = shown[hitter]
        assert card is not None
        bonus = [0, 0]
        bonus[hitter] = reroll_bonus(card, shown[1 - hitter])
        fight.reroll = (bonus[0], bonus[1])
        combat.go_result(table)
    else:
        combat_again(table, shown)


def combat_again(table: Table, shown: list[int | None]) -> None:
    """Clubs against clubs or spades: a new Brutality with the turned-up cards as each side's
    first card; the attacker keeps attacking, a second club counterattacks, a spade defends."""
    fight = combat.the_combat(table)
    fight.combat_round += 1
    fight.new_round()
    for seat, card in enumerate(shown):
        assert card is not None
        if suit(card) == SPADES:
            fight.stance[seat] = Stance.DEFEND
        else:
            fight.stance[seat] = Stance.ATTACK if seat == fight.attacker else Stance.COUNTERATTACK
        if card == ACE_OF_CLUBS:
            fight.ace_of_clubs = seat
            fight.other_cards[seat].append(card)
        elif card == ACE_OF_SPADES:
            fight.ace_of_spades = seat
            fight.other_cards[seat].append(card)
        else:
            fight.plays[seat].append(Play.single(card))
    if fight.ace_of_clubs is not None:
        combat.go_result(table)
    elif fight.ace_of_spades is not None:
        combat.answer_the_ace_of_spades(table)
    else:
        combat.start_brutality(table)


# -- after the combat ------------------------------------------------------------------------------
def after_combat(table: Table, winner: int | None) -> None:
    """A seat out of cards ends the round. Else the Defender chooses who moves, or the winner,
    or a die decides."""
    fight = combat.the_combat(table)
    if fight.pit:
        discard_pit(table)
    table.combat = None
    table.round_turns = 0
    if not table.hands[0] or not table.hands[1]:
        rounds.end_round(table, "a seat ran out of cards in the combat")
        return
    chooser = fight.defender if fight.defender is not None else winner
    if chooser is None:
        table.phase = Phase.TURN_ROLL
        return
    table.phase = Phase.CHOOSE_TURN
    table.actor = chooser


def choose_turn_actions() -> list[int]:
    return [TAKE_TURN, GIVE_TURN]


def choose_turn(table: Table, seat: int, action: int) -> None:
    rounds.begin_turn(table, seat if action == TAKE_TURN else 1 - seat, "chosen")


def turn_rolled(table: Table, face: int) -> None:
    events.dice(table, "turn", face, face)
    rounds.begin_turn(table, rounds.seat_of_roll(face), "rolled")
