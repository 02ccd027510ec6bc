"""The standard 52-card deck as small integers: card = suit * 13 + (rank - 2)."""

from __future__ import annotations

from arena.v1 import cards_pb2

RANK_LABELS = {10: "T", 11: "J", 12: "Q", 13: "K", 14: "A"}
SUIT_LABELS = "cdhs"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
DECK = tuple(range(52))


def rank(card: int) -> int:
    """2..14 (ace high)."""
    return card % 13 + 2


def suit(card: int) -> int:
    """0 clubs, 1 diamonds, 2 hearts, 3 spades."""
    return card // 13


def make(rank_: int, suit_: int) -> int:
    return suit_ * 13 + rank_ - 2


def is_black(card: int) -> bool:
    return suit(card) in (0, 3)


def label(card: int) -> str:
    """Two characters: rank (2-9, T, J, Q, K, A) then suit (c, d, h, s), e.g. 'Qh', 'Ts'."""
    r = rank(card)
    return f"{RANK_LABELS.get(r, str(r))}{SUIT_LABELS[suit(card)]}"


def parse(text: str) -> int:
    """The inverse of label; also accepts '10' for ten and upper-case suits."""
    text = text.strip()
    rank_text, suit_text = text[:-1].upper(), text[-1].lower()
    ranks = {v: k for k, v in RANK_LABELS.items()} | {"10": 10}
    r = ranks[rank_text] if rank_text in ranks else int(rank_text)
    if not 2 <= r <= 14 or suit_text not in SUIT_LABELS:
        raise ValueError(f"not a card: {text!r}")
    return make(r, SUIT_LABELS.index(suit_text))


def _build_message(card: int) -> cards_pb2.Card:
    return cards_pb2.Card(rank=rank(card), suit=suit(card) + 1)  # type: ignore[arg-type]


_MESSAGES = tuple(_build_message(card) for card in DECK)


def to_message(card: int) -> cards_pb2.Card:
    """The card's wire message, built once per card and shared: observations copy thousands of
    cards per match. Never change the returned message; setting it into another message, or
    passing it to a constructor, copies it."""
    return _MESSAGES[card]


def from_message(message: cards_pb2.Card) -> int:
    return make(message.rank, int(message.suit) - 1)
