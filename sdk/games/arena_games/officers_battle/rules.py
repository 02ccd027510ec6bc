"""Pure rules of Officers' Battle: card ids, the playable-suit test, series, action ids.

Each seat owns a whole 52-card deck, so a card id is owner * 52 + the standard card (0..51 of
arena_games.cards): the two decks stay distinct while rank and suit are read as usual. The
wire's Card keeps only rank and suit, so actions name a standard card and the engine picks
which of the seat's copies leaves the hand (see the rules page).
"""

from __future__ import annotations

from functools import lru_cache

from arena_games import cards

RULES_VERSION = "officers-battle/3"
DECISION_CAP = 3000
SEATS = 2
DECK_SIZE = 52
POSITIONS = 3
POSITION_NAMES = ("West", "Centre", "East")
POSITION_LETTERS = "WCE"
RETREATS = 2
HAND_START = 5
FRONT_SLOTS = POSITIONS + 1  # the three front positions, then Support
SETUP_ORDER = (2, 1, 0)
"""The front positions in the order setup places officers: the seed's "Place the officers from
East to West, then support" (East, Centre, West; Support is placed fourth)."""
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


# Rank, suit and label of every card id of both decks: the legal actions are worked out at
# every step, and a tuple lookup costs a fraction of a function call.
CARD_IDS = range(SEATS * DECK_SIZE)
RANK_OF = tuple(cards.rank(c % DECK_SIZE) for c in CARD_IDS)
SUIT_OF = tuple(cards.suit(c % DECK_SIZE) for c in CARD_IDS)
LABEL_OF = tuple(cards.label(c % DECK_SIZE) for c in CARD_IDS)


def rank(card: int) -> int:
    return RANK_OF[card % DECK_SIZE]


def suit(card: int) -> int:
    return SUIT_OF[card % DECK_SIZE]


def is_officer(card: int) -> bool:
    return JACK <= rank(card) <= KING


def label(card: int) -> str:
    return LABEL_OF[card % DECK_SIZE]


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


SUIT_RANKS = (1 << 13) - 1
"""A suit's ranks as the 13 bits of a mask of standard cards: bit i is rank i + 2."""

PLAYABLE_ON = tuple(
    sum(1 << (r - 2) for r in range(2, ACE + 1) if can_play_on(r, top or None))
    for top in range(ACE + 1)
)
"""Per rank on top of a pile (0 for none), the ranks that may go on it, as suit bits."""

SERIES_TOP = tuple(0 if top == 2 else min(top, SHORT_SERIES[0] + 1) for top in range(ACE + 1))
"""The rank on top of a pile as far as a series can tell: a series starts at 8 or lower, so a
9, 10 or ace on top all leave only a start from 2, and a 2 on top is like no card. Keeps the
caches below small."""


# The legal actions are worked out on bit masks, with the answers that recur kept in bounded
# caches (lru_cache below): they hit well over 90% of the time and hold about 20 MB once full.

# A hand as a mask of card ids (bit c for card c, see card_mask) folds onto a mask of the
# standard cards held with (bits | bits >> DECK_SIZE) & STANDARD_MASK: two copies of a card
# make one choice. Its aces are (bits & ACE_BITS).bit_count().
CARD_BITS = tuple(1 << c for c in CARD_IDS)
STANDARD_MASK = (1 << DECK_SIZE) - 1
ACE_BITS = sum(1 << c for c in CARD_IDS if RANK_OF[c] == ACE)


def card_mask(card_ids: list[int]) -> int:
    """Bit c for each card id c (ids are distinct, so their bits add up to the union)."""
    return sum(map(CARD_BITS.__getitem__, card_ids))


@lru_cache(maxsize=1 << 14)
def bit_indices(mask: int) -> tuple[int, ...]:
    """The set bits of a mask, lowest first."""
    return tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


@lru_cache(maxsize=1 << 14)
def card_actions(base: int, ranks: int) -> tuple[int, ...]:
    """The actions base + 3 * i of the set bits i of a suit mask: with base the action of the
    suit's 2 at a position, the same kind of action with each card of the mask there. (The
    ids come from ACTION_IDS, so the many cached tuples share their numbers.)"""
    return tuple(ACTION_IDS[base + POSITIONS * i] for i in bit_indices(ranks))


# -- the playable-suit test -------------------------------------------------------------------

PAIR_STRENGTH = 99
"""Two officers of one suit (front and support) outrank any single officer of that suit."""


def blocked(suit_: int, strength: int, theirs: int) -> bool:
    """An opposing officer blocks a suit when it has that suit and a higher rank; a different
    suit is ignored and an identical officer does not block."""
    return theirs != NONE and suit(theirs) == suit_ and rank(theirs) > strength


@lru_cache(maxsize=1 << 12)
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


@lru_cache(maxsize=1 << 13)
def open_suits(mine: int, support: int, theirs: int, with_support: bool) -> tuple[int, ...]:
    """playable_suits as a sorted tuple, kept per set of officers (24 per seat)."""
    return tuple(sorted(playable_suits(mine, support, theirs, with_support)))


SuitPlan = tuple[int, int, int, int]


@lru_cache(maxsize=1 << 15)
def suit_plans(
    mine: int, support: int, theirs: int, with_support: bool, position: int
) -> tuple[SuitPlan, ...]:
    """Per suit a hand may play at a position with these officers: (where the suit's bits
    start in a mask of standard cards, the action of a single 2 of the suit there, of a
    series from its 2 there, the ace kill there or 0 when the opposing officer has the ace's
    suit). Add 3 * i for the card of suit bit i (rank i + 2) instead of the 2."""
    return tuple(
        SUIT_PLANS[suit][position][suit != SUIT_OF[theirs]]
        for suit in open_suits(mine, support, theirs, with_support)
    )


def _suit_plan(suit: int, position: int, ace_kills: bool) -> SuitPlan:
    offset = suit * 13 * POSITIONS + position
    kill = ACE_KILL + offset + POSITIONS * (ACE - 2) if ace_kills else 0
    return (suit * 13, SINGLE + offset, START_SERIES + offset, kill)


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
    have = naturals.bit_count()
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
            addable = (spare & window & ~naturals).bit_count()
            if jokers <= missing and missing - addable <= jokers + spare_aces:
                return True
    return False


# The two questions below are completable asked for many cards at once. Both rest on one
# count: a window of ranks (a possible series) can be filled when its ranks missing from the
# naturals laid and the spare naturals in hand are at most the aces (laid and in hand). Adding
# a natural of spare changes neither side, nor does adding an ace, so the windows that pass
# answer for every card of the hand together.

SERIES_WINDOWS = tuple(
    (low, high - low + 1, (1 << (high + 1)) - (1 << low))
    for low in range(SERIES_LOW, SERIES_HIGH + 1)
    for high in range(low, SERIES_HIGH + 1)
    if valid_length(low, high - low + 1)
)
"""Every span a series may cover: (lowest rank, count, mask of its ranks)."""

WINDOWS_ON = tuple(
    tuple((count, mask) for low, count, mask in SERIES_WINDOWS if can_play_on(low, top or None))
    for top in range(ACE + 1)
)
"""Per rank on top of the own pile (0 for none), the (count, mask) of the series that may
start on it."""


@lru_cache(maxsize=1 << 15)
def series_starts(naturals: int, aces: int, top: int) -> int:
    """Which of a suit's naturals in hand (suit bits: bit i for rank i + 2) can begin a series
    that the hand can finish, as suit bits: rank r qualifies when completable(1 << r, 0,
    spare, aces, top), spare being these naturals as rank bits. top as in completable, best
    passed through SERIES_TOP (a smaller cache)."""
    spare = naturals << 2
    reach = 0
    for count, window in WINDOWS_ON[top]:
        if count - (spare & window).bit_count() <= aces:
            reach |= window
    return (spare & reach) >> 2


def series_additions(
    naturals: int, jokers: int, spare: int, aces: int, top: int
) -> tuple[int, bool]:
    """What may be added to a series begun (arguments as in completable) so that it can still
    be finished: the natural ranks r of spare not laid yet with completable(naturals | 1 << r,
    jokers, spare, aces, top), and whether an ace may be (completable(naturals, jokers + 1,
    spare, aces - 1, top)). Either needs a window with room for one more card."""
    union = naturals | spare
    reach = 0
    for count, window in windows_around(naturals, naturals.bit_count() + jokers, top):
        if count - (union & window).bit_count() <= jokers + aces:
            reach |= window
    return reach & spare & ~naturals, aces > 0 and reach != 0


@lru_cache(maxsize=1 << 14)
def windows_around(naturals: int, laid: int, top: int) -> tuple[tuple[int, int], ...]:
    """The (count, mask) of WINDOWS_ON[top] that hold the naturals and room for one more card
    than the laid ones."""
    return tuple(
        candidate
        for candidate in WINDOWS_ON[top]
        if candidate[1] & naturals == naturals and candidate[0] > laid
    )


@lru_cache(maxsize=1 << 13)
def series_finishes(naturals: int, count: int, top: int) -> tuple[int, ...]:
    """The finish actions of a series of count cards with these natural ranks (a mask) on a
    pile with top (0 for none): finish_lows as action ids."""
    ranks = [r for r in range(SERIES_LOW, SERIES_HIGH + 1) if naturals >> r & 1]
    return tuple(finish_action(low) for low in finish_lows(ranks, count, top or None))


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
ACTION_IDS = tuple(range(ACTION_END))

SUIT_PLANS = tuple(
    tuple(
        tuple(_suit_plan(suit, position, ace_kills) for ace_kills in (False, True))
        for position in range(POSITIONS)
    )
    for suit in range(len(cards.SUIT_NAMES))
)
"""The few distinct entries of suit_plans, by [suit][position][whether an ace kills there]."""


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
