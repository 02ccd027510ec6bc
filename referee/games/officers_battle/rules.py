"""Pure rules of Officers' Battle: card ids, the playable-suit test, series, action ids.

Each seat owns a whole 52-card deck, so a card id is owner * 52 + the standard card (0..51 of
referee.games.cards): the two decks stay distinct while rank and suit are read as usual. The
wire's Card keeps only rank and suit, so actions name a standard card and the engine picks
which of the seat's copies leaves the hand (see the rules page).
"""

from __future__ import annotations

from functools import lru_cache

from referee.games import cards

RULES_VERSION = "officers-battle/1"
DECISION_CAP = 3000
SEATS = 2
DECK_SIZE = 52
POSITIONS = 3
POSITION_NAMES = ("West", "Centre", "East")
POSITION_LETTERS = "WCE"
RETREATS = 2
HAND_START = 5
FRONT_SLOTS = POSITIONS + 1  # West, Centre, East, then Support
OFFICER_POINTS = 5
ACE = 14
JACK, KING = 11, 13
SERIES_LOW, SERIES_HIGH = 2, 10
SHORT_SERIES = (8, 10)  # 8-9-10 is the one series of three
NONE = -1

# -- card ids ---------------------------------------------------------------------------------


def card_id(owner: int, standard: int) -> int:
    return owner * DECK_SIZE + standard


def standard(card: int) -> int:
    return card % DECK_SIZE


def rank(card: int) -> int:
    return cards.rank(card % DECK_SIZE)


def suit(card: int) -> int:
    return cards.suit(card % DECK_SIZE)


def is_officer(card: int) -> bool:
    return JACK <= rank(card) <= KING


def label(card: int) -> str:
    return cards.label(card % DECK_SIZE)


def officers_of(owner: int) -> list[int]:
    return sorted(card_id(owner, c) for c in cards.DECK if JACK <= cards.rank(c) <= KING)


def number_cards_of(owner: int) -> list[int]:
    return sorted(card_id(owner, c) for c in cards.DECK if not JACK <= cards.rank(c) <= KING)


def needs_reshuffle(placed: list[int]) -> bool:
    """The setup rule: more than two of the four placed officers share a rank."""
    ranks = [rank(o) for o in placed]
    return any(ranks.count(r) >= 3 for r in set(ranks))


# -- playing order ----------------------------------------------------------------------------


def can_play_on(new_rank: int, top_rank: int | None) -> bool:
    """2 < 3 < ... < 10 < A, and a 2 is also the highest: it goes on anything and anything goes
    on it. Equal is enough."""
    if top_rank is None or new_rank == 2 or top_rank == 2:
        return True
    return new_rank >= top_rank


# -- the playable-suit test -------------------------------------------------------------------

PAIR_STRENGTH = 99
"""Two officers of one suit (front and support) outrank any single officer of that suit."""


def blocked(suit_: int, strength: int, theirs: int) -> bool:
    """An opposing officer blocks a suit when it has that suit and a higher rank; a different
    suit is ignored and an identical officer does not block."""
    return theirs != NONE and suit(theirs) == suit_ and rank(theirs) > strength


def front_suit(mine: int, theirs: int) -> int | None:
    """The suit a front officer opens at its position without help, or None."""
    if mine == NONE or theirs == NONE:
        return None
    own = suit(mine)
    return None if blocked(own, rank(mine), theirs) else own


def support_suit(mine: int, support: int, theirs: int) -> int | None:
    """The suit the support officer opens at a position where both front officers stand;
    sharing the front officer's suit makes a pair that outranks any single opposing officer."""
    if support == NONE or mine == NONE or theirs == NONE:
        return None
    own = suit(support)
    strength = PAIR_STRENGTH if own == suit(mine) else rank(support)
    return None if blocked(own, strength, theirs) else own


def playable_suits(mine: int, support: int, theirs: int, with_support: bool) -> set[int]:
    """Suits a player may play at a position, with or without using the support officer."""
    opened = {front_suit(mine, theirs)}
    if with_support:
        opened.add(support_suit(mine, support, theirs))
    return {s for s in opened if s is not None}


# -- series -----------------------------------------------------------------------------------


def valid_length(low: int, count: int) -> bool:
    high = low + count - 1
    if low < SERIES_LOW or high > SERIES_HIGH:
        return False
    return count >= 4 or (low, high) == SHORT_SERIES


def rank_mask(ranks: list[int] | set[int]) -> int:
    mask = 0
    for r in ranks:
        mask |= 1 << r
    return mask


def _span(mask: int) -> tuple[int, int]:
    ranks = [r for r in range(SERIES_LOW, SERIES_HIGH + 1) if mask >> r & 1]
    return ranks[0], ranks[-1]


@lru_cache(maxsize=65536)
def completable(naturals: int, jokers: int, spare: int, spare_aces: int, top: int) -> bool:
    """Whether a series begun with the natural ranks in mask `naturals` and `jokers` aces can
    be finished from the hand: `spare` is the mask of ranks of the series' suit still in hand,
    `spare_aces` the aces left in hand, `top` the rank on top of the own pile (0 for none)."""
    low_nat, high_nat = _span(naturals)
    have = bin(naturals).count("1")
    top_rank = top or None
    for low in range(SERIES_LOW, low_nat + 1):
        if not can_play_on(low, top_rank):
            continue
        for high in range(high_nat, SERIES_HIGH + 1):
            count = high - low + 1
            if not valid_length(low, count):
                continue
            missing = count - have
            window = ((1 << (high + 1)) - 1) ^ ((1 << low) - 1)
            addable = bin(spare & window & ~naturals).count("1")
            if jokers <= missing and missing - addable <= jokers + spare_aces:
                return True
    return False


def finish_lows(natural_ranks: list[int], count: int, top: int | None) -> list[int]:
    """The lowest ranks a series of `count` cards with these natural ranks may be laid from:
    the naturals fit inside, the aces fill the gaps, and the starting rank goes on the pile."""
    if not natural_ranks:
        return []
    low_nat, high_nat = min(natural_ranks), max(natural_ranks)
    return [
        low
        for low in range(max(SERIES_LOW, high_nat - count + 1), low_nat + 1)
        if valid_length(low, count) and can_play_on(low, top)
    ]


def arrange(committed: list[int], low: int) -> list[int]:
    """The series from its starting rank upwards: naturals at their ranks, the aces filling the
    missing ranks from the bottom in the order they were added (so the last ace added stands
    highest, and an ace meant to be the killing card is added last)."""
    by_rank = {rank(c): c for c in committed if rank(c) != ACE}
    aces = iter([c for c in committed if rank(c) == ACE])
    return [by_rank[r] if r in by_rank else next(aces) for r in range(low, low + len(committed))]


# -- action ids -------------------------------------------------------------------------------
# Stable small ints; legal lists are sorted by id. Cards are standard cards 0..51.
DRAW_DECK = 0
DRAW_DISCARD = 1
NO_DRAW = 2
PASS = 3
END_BATTLE = 4
TAKE_PILE = 5
KILL_BONUS = 6
SUPPORT_FROM_DECK = 7
SUPPORT_FROM_RETREAT = 8  # + retreat 0..1
RETREAT = 11  # + position * 2 + retreat
FINISH_SERIES = 20  # + starting rank - 2
SINGLE = 40  # + card * 3 + position
START_SERIES = 200  # + card * 3 + position
ACE_KILL = 400  # + card * 3 + position
ADD_TO_SERIES = 600  # + card
ACTION_END = ADD_TO_SERIES + DECK_SIZE


def retreat_action(position: int, retreat: int) -> int:
    return RETREAT + position * RETREATS + retreat


def finish_action(low: int) -> int:
    return FINISH_SERIES + low - SERIES_LOW


def single_action(card: int, position: int) -> int:
    return SINGLE + standard(card) * POSITIONS + position


def start_action(card: int, position: int) -> int:
    return START_SERIES + standard(card) * POSITIONS + position


def ace_kill_action(card: int, position: int) -> int:
    return ACE_KILL + standard(card) * POSITIONS + position


def add_action(card: int) -> int:
    return ADD_TO_SERIES + standard(card)


def card_and_position(action: int, base: int) -> tuple[int, int]:
    """(standard card, position) of a single, series start or ace kill."""
    return divmod(action - base, POSITIONS)


def action_kind(action: int) -> str:
    """One word per kind of action, for dispatch and labels."""
    simple = {
        DRAW_DECK: "draw",
        DRAW_DISCARD: "draw",
        NO_DRAW: "no_draw",
        PASS: "pass",
        END_BATTLE: "end_battle",
        TAKE_PILE: "kill_choice",
        KILL_BONUS: "kill_choice",
        SUPPORT_FROM_DECK: "support",
        SUPPORT_FROM_RETREAT: "support",
        SUPPORT_FROM_RETREAT + 1: "support",
    }
    if action in simple:
        return simple[action]
    for base, kind in (
        (ADD_TO_SERIES, "add"),
        (ACE_KILL, "ace_kill"),
        (START_SERIES, "start"),
        (SINGLE, "single"),
        (FINISH_SERIES, "finish"),
        (RETREAT, "retreat"),
    ):
        if action >= base:
            return kind
    raise ValueError(f"not an action: {action}")


def action_label(action: int) -> str:
    """Short and stable: 'draw deck', 'play 7h W', 'series 5h W', 'add Ac', 'finish 5'..."""
    fixed = {
        DRAW_DECK: "draw deck",
        DRAW_DISCARD: "draw discard",
        NO_DRAW: "no draw",
        PASS: "pass",
        END_BATTLE: "end battle",
        TAKE_PILE: "take pile",
        KILL_BONUS: "bonus card",
        SUPPORT_FROM_DECK: "support from deck",
        SUPPORT_FROM_RETREAT: "support from retreat 1",
        SUPPORT_FROM_RETREAT + 1: "support from retreat 2",
    }
    if action in fixed:
        return fixed[action]
    kind = action_kind(action)
    if kind == "retreat":
        position, retreat = divmod(action - RETREAT, RETREATS)
        return f"retreat {POSITION_LETTERS[position]} to {retreat + 1}"
    if kind == "finish":
        return f"finish from {action - FINISH_SERIES + SERIES_LOW}"
    if kind == "add":
        return f"add {cards.label(action - ADD_TO_SERIES)}"
    base, word = {"single": (SINGLE, "play"), "start": (START_SERIES, "series")}.get(
        kind, (ACE_KILL, "kill")
    )
    card, position = card_and_position(action, base)
    return f"{word} {cards.label(card)} {POSITION_LETTERS[position]}"
