"""Card facts of Orc Pit Fighting: suits, pictures, aces, combat values and runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena_games import cards

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
ACE = 14
ACE_OF_CLUBS = cards.make(ACE, CLUBS)
ACE_OF_DIAMONDS = cards.make(ACE, DIAMONDS)
ACE_OF_HEARTS = cards.make(ACE, HEARTS)
ACE_OF_SPADES = cards.make(ACE, SPADES)
ACES = frozenset({ACE_OF_CLUBS, ACE_OF_DIAMONDS, ACE_OF_HEARTS, ACE_OF_SPADES})

# Per card, as tuples indexed by card: the rules ask these questions at every step.
SUIT = tuple(cards.suit(card) for card in cards.DECK)
RANK = tuple(cards.rank(card) for card in cards.DECK)
PICTURES = frozenset(card for card in cards.DECK if 11 <= cards.rank(card) <= 13)
SPADE_PICTURES = frozenset(card for card in PICTURES if cards.suit(card) == SPADES)

DAMAGE_TO_LOSE = 5
HAND_SIZE = 5
DIG_DEPTH = 5
ROUND_TURN_CAP = 60
DECISION_CAP = 5000


def suit(card: int) -> int:
    return SUIT[card]


def rank(card: int) -> int:
    return RANK[card]


def is_picture(card: int) -> bool:
    """Jack, Queen or King."""
    return card in PICTURES


def is_red(card: int) -> bool:
    return 13 <= card < 39  # diamonds and hearts


def is_ace(card: int) -> bool:
    return card in ACES


def value_of_rank(rank_: int) -> int:
    """Combat value: 2..10 at face value, pictures 12, the ace of spades played low 1."""
    return 12 if 11 <= rank_ <= 13 else rank_


def d3(face: int) -> int:
    """A D3 is a D6 halved, rounded up."""
    return (face + 1) // 2


def heart_strength(card: int) -> int:
    """Reinforcements: the single highest heart wins, a King above a Queen, the ace highest."""
    return cards.rank(card)


@dataclass(frozen=True, slots=True)
class Play:
    """One play that counts for the Combat Value: a card, two spades as one club, or a Blank."""

    cards: tuple[int, ...]
    rank: int
    value: int
    face_down: bool = False

    @staticmethod
    def single(card: int) -> Play:
        return SINGLES[card]

    @staticmethod
    def pair(low: int) -> Play:
        """Two flush spades played as a club of the lower rank and value."""
        r = RANK[low]
        return Play((low, low + 1), r, value_of_rank(r))

    @staticmethod
    def ace_low() -> Play:
        return ACE_LOW

    @staticmethod
    def blank(card: int) -> Play:
        return Play((card,), 0, -1, face_down=True)


# Plays are frozen, so one of each card serves every combat.
SINGLES = tuple(Play((card,), RANK[card], value_of_rank(RANK[card])) for card in cards.DECK)
ACE_LOW = Play((ACE_OF_SPADES,), 1, 1)


def combat_value(plays: Sequence[Play]) -> int:
    """The value of the highest card plus 1 for each other card; no cards count 0."""
    if not plays:
        return 0
    return max([p.value for p in plays]) + len(plays) - 1


def run_ends(plays: Sequence[Play]) -> tuple[int, int] | None:
    """The two ranks that extend the player's run, or None when any rank starts one."""
    ranks = [p.rank for p in plays if not p.face_down]
    if not ranks:
        return None
    return min(ranks) - 1, max(ranks) + 1


def extends_run(plays: Sequence[Play], rank_: int) -> bool:
    """'Flush': a card must extend the player's run of consecutive ranks at either end."""
    ends = run_ends(plays)
    return ends is None or rank_ in ends


def lowest_cards(plays: Sequence[Play], hearts: Sequence[int], count: int) -> list[int]:
    """The `count` lowest cards a seat has put into the Pit in this combat round, the ace of
    diamonds discards these: each card of a pair at the pair's value (two cards), a Blank at
    -1, a heart of Reinforcements at its rank's value; ties by rank, then card."""
    ranked = [(p.value, p.rank, card) for p in plays for card in p.cards]
    ranked += [(value_of_rank(RANK[card]), RANK[card], card) for card in hearts]
    return [card for _, _, card in sorted(ranked)[:count]]


def without_card(plays: list[Play], card: int) -> None:
    """Take one card out of the seat's plays; the other spade of a pair stays as the club it
    stood for, so the run it made is unchanged."""
    play = next(p for p in plays if card in p.cards)
    index = plays.index(play)
    rest = tuple(other for other in play.cards if other != card)
    if rest:
        plays[index] = Play(rest, play.rank, play.value, play.face_down)
    else:
        del plays[index]


def spade_pairs(hand: Sequence[int]) -> list[int]:
    """The lower spades of every two spades of consecutive rank in hand (no ace)."""
    held = set(hand)
    return [c for c in sorted(hand) if 39 <= c < 50 and c + 1 in held]  # 2s..Qs and the next
