"""Action ids of Orc Pit Fighting: small ints in a stable order, with labels and wire forms.

Plain decisions come first (0..7); a card played for a use is CARD_BASE + use * 52 + card, so
a legal list sorted by id groups the plays by use, then by card.
"""

from __future__ import annotations

from enum import IntEnum

from arena.v1 import orc_pit_fighting_pb2 as opb
from arena.v1 import referee_pb2 as pb

from arena_games import cards

PASS = 0
DECLINE = 1
DONE = 2
DEFEND = 3
COUNTERATTACK = 4
TAKE_TURN = 5
GIVE_TURN = 6
KEEP_DRAWN = 7
CARD_BASE = 8

PLAIN_LABELS = {
    PASS: "pass",
    DECLINE: "decline",
    DONE: "done",
    DEFEND: "defend",
    COUNTERATTACK: "counterattack",
    TAKE_TURN: "take turn",
    GIVE_TURN: "give turn",
    KEEP_DRAWN: "keep drawn",
}


class Use(IntEnum):
    """What a card is played for; the values are the wire enum's minus one."""

    ATTACK = 0
    DIG = 1
    FLAIR = 2
    DRAW_TWO = 3
    TAKE_THEIR_OUT = 4
    TAKE_OWN_OUT = 5
    HEAL = 6
    SWAP = 7
    DISCARD = 8
    CANCEL = 9
    PUT_DOWN = 10
    KEEP = 11
    BLANK = 12
    PIT = 13
    PAIR = 14
    ACE_LOW = 15
    DIRTY_DRAW = 16
    FACE_DOWN = 17


USE_WORDS = {
    Use.ATTACK: "attack",
    Use.DIG: "dig",
    Use.FLAIR: "flair",
    Use.DRAW_TWO: "draw two",
    Use.TAKE_THEIR_OUT: "take their out",
    Use.TAKE_OWN_OUT: "take own out",
    Use.HEAL: "heal",
    Use.SWAP: "swap",
    Use.DISCARD: "discard",
    Use.CANCEL: "cancel",
    Use.PUT_DOWN: "put down",
    Use.KEEP: "keep",
    Use.BLANK: "blank",
    Use.PIT: "pit",
    Use.PAIR: "pair",
    Use.ACE_LOW: "ace low",
    Use.DIRTY_DRAW: "dirty draw",
    Use.FACE_DOWN: "face down",
}

# Plays that the spade picture may cancel (a non-combat card use; the ace of clubs excepted).
CANCELLABLE = frozenset(
    {
        Use.ATTACK,
        Use.DIG,
        Use.FLAIR,
        Use.DRAW_TWO,
        Use.TAKE_THEIR_OUT,
        Use.TAKE_OWN_OUT,
        Use.HEAL,
        Use.SWAP,
    }
)
LAST_ACTION = CARD_BASE + len(Use) * 52 - 1


def card_action(use: Use, card: int) -> int:
    return CARD_BASE + int(use) * 52 + card


# (use, card) of every card action, by id: decoding is on every step's path.
DECODED = tuple((use, card) for use in Use for card in range(52))


def decode(action: int) -> tuple[Use | None, int]:
    """(use, card) of a card action; (None, action) for a plain decision."""
    if action < CARD_BASE:
        return None, action
    return DECODED[action - CARD_BASE]


def actions_of(use: Use) -> tuple[int, ...]:
    """The action of each card played for use, indexed by card."""
    return tuple(card_action(use, card) for card in range(52))


def label(action: int) -> str:
    use, card = decode(action)
    if use is None:
        return PLAIN_LABELS[action]
    if use is Use.PAIR and cards.rank(card) < 14:
        return f"pair {cards.label(card)}{cards.label(card + 1)}"
    return f"{USE_WORDS[use]} {cards.label(card)}"


def wire_use(use: Use) -> opb.OrcPitFightingUse.ValueType:
    return opb.OrcPitFightingUse.ValueType(int(use) + 1)


def message(action: int) -> pb.Action:
    use, card = decode(action)
    if use is not None:
        play = opb.OrcPitFightingPlay(card=cards.to_message(card), use=wire_use(use))
        typed = opb.OrcPitFightingAction(play=play)
    elif action == PASS:
        typed = opb.OrcPitFightingAction(pass_turn=opb.OrcPitFightingPass())
    elif action == DECLINE:
        typed = opb.OrcPitFightingAction(decline=opb.OrcPitFightingDecline())
    elif action == DONE:
        typed = opb.OrcPitFightingAction(done=opb.OrcPitFightingDone())
    elif action == DEFEND:
        typed = opb.OrcPitFightingAction(defend=opb.OrcPitFightingDefend())
    elif action == COUNTERATTACK:
        typed = opb.OrcPitFightingAction(counterattack=opb.OrcPitFightingCounterattack())
    elif action in (TAKE_TURN, GIVE_TURN):
        choose = opb.OrcPitFightingChooseTurn(take=action == TAKE_TURN)
        typed = opb.OrcPitFightingAction(choose_turn=choose)
    else:
        typed = opb.OrcPitFightingAction(keep_drawn=opb.OrcPitFightingKeepDrawn())
    return pb.Action(orc_pit_fighting=typed)


def card_of(action: int) -> int | None:
    """The card a card action names (the lower spade of a pair), else None."""
    use, card = decode(action)
    return None if use is None else card


def with_card(action: int, card: int) -> int:
    """The same action naming another card (resampling relabels hidden cards)."""
    use, _ = decode(action)
    return action if use is None else card_action(use, card)
