"""Worlds one seat cannot tell apart from its own: the table rebuilt from what the seat was told
(its observation and its events, see knowledge), with every card it has not seen dealt afresh.

A deal places the unseen cards into the deck and the opponent's hidden places (his hand, his
face-down Blank or put-down, the two of his draw two, his Draw-procedure choice), uniformly
among the placements that agree with all the seat learnt: a proposal deals the cards an older
deck left to his hands (they can be nowhere else), the rest at random, and is kept only when
some way of giving his unseen arrivals their cards explains it (`explained`); else another is
drawn, until one is kept. Nothing is replayed, so a deal costs a clone and a few draws.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.v1 import orc_pit_fighting_pb2 as opb
from arena.v1 import referee_pb2 as pb

from arena_games import cards
from arena_games.base import GameError, GameState, SeatView, WorldSampler
from arena_games.orc_pit_fighting.actions import Use
from arena_games.orc_pit_fighting.knowledge import NEVER, HandRule, Knowledge, Token, read
from arena_games.orc_pit_fighting.rules import CLUBS, RANK, SUIT, Play
from arena_games.orc_pit_fighting.table import Combat, Phase, Stance, Table
from arena_games.playout import drawn_apart

if TYPE_CHECKING:
    from arena_games.orc_pit_fighting.state import OrcPitFightingOptions, OrcPitFightingState

TRIES = 100_000
"""A bound on rejection, far above any position seen: reaching it is a bug, not bad luck."""
ANSWERS_KEPT = 4096
"""Explained multisets of card kinds kept per view: a bound on memory, far above what one
decision's search meets."""


FACE_DOWN = ("blank", "put_down", "choice")
"""The opponent's places that hold one card face down, by their names in Places."""


@dataclass
class Places:
    """The opponent's hidden places in a table: how many unseen cards each takes."""

    hand: int
    blank: bool
    put_down: bool
    two: int
    choice: bool
    drawn: bool


def hidden_places(table: Table, other: int, hand_size: int) -> Places:
    fight = table.combat
    blank = fight is not None and any(p.face_down for p in fight.plays[other])
    put_down = table.put_down is not None and table.actor == other
    two = len(table.two) if table.draw_seat == other else 0
    choice = fight is not None and fight.choices[other] is not None
    drawn = fight is not None and fight.drawn is not None and table.actor == other
    return Places(hand_size, blank, put_down, two, choice, drawn)


class Dealer:
    """Deals a table's unseen cards anew from a seat's knowledge (see the module's docstring)."""

    def __init__(
        self, base: Table, seat: int, knowledge: Knowledge, unseen: list[int], hand_size: int
    ) -> None:
        self.base, self.seat, self.other = base, seat, 1 - seat
        self.knowledge = knowledge
        self.places = hidden_places(base, self.other, hand_size)
        places = self.places
        self.down_names = [name for name in FACE_DOWN if getattr(places, name)]
        self.explained = Explainer(knowledge, unseen)
        self.known = list(knowledge.known)
        held = places.hand + places.blank + places.put_down + places.two
        self.hidden_count = held - len(self.known)
        newest = knowledge.current_epoch
        self.forced = [c for c in unseen if knowledge.epoch[c] != newest]
        self.free = [c for c in unseen if knowledge.epoch[c] == newest]
        if self.hidden_count < len(self.forced) or len(unseen) != self.hidden_count + len(
            base.deck
        ):
            raise GameError("the view does not add up: unseen cards and hidden places differ")

    def deal(self, rng: random.Random) -> Table:
        for _ in range(TRIES):
            table = self.propose(rng)
            if table is not None:
                return table
        raise GameError("no world found that agrees with the view")

    def propose(self, rng: random.Random) -> Table | None:
        extra = self.hidden_count - len(self.forced)
        chosen, deck = drawn_apart(self.free, extra, rng)  # the deck's order is chance's
        # The fresh draws (two, Dirty Tricks) are unseen arrivals, any of his unseen cards; the
        # rest of his cards (known ones too) go over his face-down places at random, and the
        # others are his hand, which is kept sorted, so their order is not drawn.
        his_unseen = self.forced + chosen
        two, others = drawn_apart(his_unseen, self.places.two, rng)
        face_down, rest = drawn_apart(others + self.known, len(self.down_names), rng)
        down = dict(zip(self.down_names, face_down, strict=True))
        drawn = None
        if self.places.drawn:
            drawn = next((c for c in rest if c not in self.knowledge.known), None)
            if drawn is None:
                return None
            drawn = rng.choice([c for c in rest if c not in self.knowledge.known])
        if "put_down" in down and SUIT[down["put_down"]] == CLUBS:
            return None
        if not self.explained(set(his_unseen), down, drawn):
            return None
        return self.build(
            sorted(deck),
            sorted(rest + ([down["choice"]] if "choice" in down else [])),
            two,
            down,
            drawn,
        )

    def build(
        self,
        deck: list[int],
        hand: list[int],
        two: list[int],
        down: dict[str, int],
        drawn: int | None,
    ) -> Table:
        table = self.base.clone()
        other = self.other
        table.deck = deck
        table.hands[other] = hand
        if two:
            table.two = two
        if "put_down" in down:
            table.put_down = down["put_down"]
        fight = table.combat
        if fight is not None:
            if "blank" in down:
                card = down["blank"]
                old = next(p for p in fight.plays[other] if p.face_down)
                fight.plays[other] = [
                    Play.blank(card) if p.face_down else p for p in fight.plays[other]
                ]
                fight.pit = [card if c == old.cards[0] else c for c in fight.pit]
            if "choice" in down:
                fight.choices[other] = down["choice"]
            if drawn is not None:
                fight.drawn = drawn
        return table


class Explainer:
    """Whether the opponent's unseen arrivals (tokens) can be given cards, one each, so that
    they are his unseen cards and those he showed, each from the deck of its token's epoch,
    arriving before it left his hand, and every rule on his hand holds. What depends only on
    the view is worked out once: each card's possible tokens, and which 'some' rules a card he
    showed surely witnesses.

    Cards with the same possible tokens that can witness the same rules are interchangeable, so
    the answer depends only on how many cards of each such kind a deal gives him: it is kept per
    multiset of kinds, and most deals of one view are answered without a matching."""

    def __init__(self, knowledge: Knowledge, unseen: list[int]) -> None:
        self.knowledge = knowledge
        self.tokens = knowledge.tokens
        self.newest = self.tokens[-1].step if self.tokens else -1
        self.none_rules = [r for r in knowledge.rules if r.none]
        self.fitting: dict[tuple[int, int, int], list[int]] = {}
        self.shown = [(s.card, s.left, s.epoch) for s in knowledge.shown]
        self.some_rules = [
            r for r in knowledge.rules if not r.none and not self.surely_witnessed(r)
        ]
        self.kinds: dict[tuple[int, int, int, bool], int] = {}
        self.kind_ids: dict[tuple[tuple[int, ...], tuple[bool, ...]], int] = {}
        self.answers: dict[tuple[int, ...], bool] = {}
        # The kind of each card a deal may give him, when it is in his hand (neither face down
        # nor the card drawn): most of his cards, looked up without building a key.
        self.in_hand = {c: self.kind(c, NEVER, knowledge.epoch[c], False) for c in unseen}

    def allowed(self, card: int, until: int, epoch: int) -> list[int]:
        key = (card, until, epoch)
        found = self.fitting.get(key)
        if found is None:
            found = [
                t
                for t, token in enumerate(self.tokens)
                if fits(card, until, epoch, token, self.none_rules)
            ]
            self.fitting[key] = found
        return found

    def surely_witnessed(self, rule: HandRule) -> bool:
        """A card he showed after the rule, that can only have come before it."""
        return any(
            card in rule.cards
            and until >= rule.step
            and all(self.tokens[t].step < rule.step for t in self.allowed(card, until, epoch))
            for card, until, epoch in self.shown
        )

    def __call__(self, unseen: set[int], down: dict[str, int], drawn: int | None) -> bool:
        knowledge = self.knowledge
        left = self.face_down(down)
        if left is None or len(unseen) + len(self.shown) != len(self.tokens):
            return False
        odd = set(left) | ({drawn} if drawn is not None else set())
        in_hand = self.in_hand
        kinds = [in_hand[card] for card in unseen if card not in odd]
        kinds += [self.kind(c, left.get(c, NEVER), knowledge.epoch[c], c == drawn) for c in odd]
        key = tuple(sorted(kinds))  # the cards he showed are the same in every deal
        answer = self.answers.get(key)
        if answer is None:
            answer = self.matched(unseen, left, drawn)
            if len(self.answers) < ANSWERS_KEPT:
                self.answers[key] = answer
        return answer

    def afresh(self, unseen: set[int], down: dict[str, int], drawn: int | None) -> bool:
        """The answer worked out again, from nothing kept (for tests)."""
        left = self.face_down(down)
        fits = left is not None and len(unseen) + len(self.shown) == len(self.tokens)
        return fits and self.matched(unseen, left or {}, drawn)

    def face_down(self, down: dict[str, int]) -> dict[int, int] | None:
        """The cards of his that left his hand face down, with when; None when one of them is
        a card known to be his only since (it must have been his when it went down)."""
        knowledge = self.knowledge
        left: dict[int, int] = {}
        for name, step in (("blank", knowledge.blank_step), ("put_down", knowledge.put_down_step)):
            card = down.get(name)
            if card is not None:
                if card in knowledge.known and knowledge.known[card] >= step:
                    return None
                left[card] = step
        return left

    def matched(self, unseen: set[int], left: dict[int, int], drawn: int | None) -> bool:
        """A witness for each 'some' rule, then a matching of every card to its token."""
        epoch = self.knowledge.epoch
        items = [(c, left.get(c, NEVER), epoch[c]) for c in unseen] + self.shown
        allowed = [self.allowed_to(*item, item[0] == drawn) for item in items]
        return witnessed(items, self.tokens, allowed, self.some_rules, 0)

    def allowed_to(self, card: int, until: int, epoch: int, drawn: bool) -> list[int]:
        """The tokens a card can be; the card drawn in Dirty Tricks is the newest arrival's."""
        allowed = self.allowed(card, until, epoch)
        if drawn:
            allowed = [t for t in allowed if self.tokens[t].step == self.newest]
        return allowed

    def kind(self, card: int, until: int, epoch: int, drawn: bool) -> int:
        """An id shared by the cards that are interchangeable in a matching (see above)."""
        key = (card, until, epoch, drawn)
        found = self.kinds.get(key)
        if found is None:
            can_witness = tuple(card in r.cards and until >= r.step for r in self.some_rules)
            shape = (tuple(self.allowed_to(card, until, epoch, drawn)), can_witness)
            found = self.kind_ids.setdefault(shape, len(self.kind_ids))
            self.kinds[key] = found
        return found


def fits(card: int, until: int, epoch: int, token: Token, rules: list[HandRule]) -> bool:
    if token.epoch != epoch or token.step >= until:
        return False
    return not any(card in r.cards and token.step < r.step <= until for r in rules)


def witnessed(
    items: list[tuple[int, int, int]],
    tokens: list[Token],
    allowed: list[list[int]],
    rules: list[HandRule],
    index: int,
) -> bool:
    """Each 'some' rule needs a card of its set in his hand at its step: try each witness."""
    if index == len(rules):
        return matched(allowed, len(tokens))
    rule = rules[index]
    for i, (card, until, _) in enumerate(items):
        if card not in rule.cards or until < rule.step:
            continue
        narrowed = list(allowed)
        narrowed[i] = [t for t in allowed[i] if tokens[t].step < rule.step]
        if narrowed[i] and witnessed(items, tokens, narrowed, rules, index + 1):
            return True
    return False


def matched(allowed: list[list[int]], count: int) -> bool:
    """A perfect matching of items to tokens (augmenting paths; a round has a few dozen)."""
    owner = [-1] * count

    def augment(item: int, seen: list[bool]) -> bool:
        for t in allowed[item]:
            if not seen[t]:
                seen[t] = True
                if owner[t] < 0 or augment(owner[t], seen):
                    owner[t] = item
                    return True
        return False

    return all(augment(item, [False] * count) for item in range(len(allowed)))


# -- what the seat sees ----------------------------------------------------------------------------
def seen_cards(observation: pb.Observation) -> set[int]:
    """Every card the observation shows, wherever it is."""
    seen = observation.orc_pit_fighting
    shown = list(seen.hand) + list(seen.discard_pile) + list(seen.drawn)
    for side in seen.seats:
        shown += list(side.out_pile) + list(side.flair_pile)
    for name in ("put_down", "face_down_choice"):
        if seen.HasField(name):
            shown.append(getattr(seen, name))
    if seen.HasField("pending_play"):
        shown.append(seen.pending_play.card)
    fight = seen.combat
    if seen.HasField("combat"):
        for fought in fight.sides:
            shown += list(fought.hearts) + list(fought.other_cards)
            for play in fought.plays:
                shown += list(play.cards)
        shown += [r.card for r in fight.revealed if r.HasField("card")]
        if fight.HasField("dirty_drawn"):
            shown.append(fight.dirty_drawn)
    return {cards.from_message(card) for card in shown}


def unseen_cards(observation: pb.Observation, knowledge: Knowledge) -> list[int]:
    known = seen_cards(observation) | set(knowledge.known)
    return [card for card in cards.DECK if card not in known]


BLANK_PLACEHOLDER = -1
"""The opponent's Blank in a table rebuilt from a view, until a deal names it."""


def table_of(view: SeatView, knowledge: Knowledge) -> Table:
    """The table as the seat sees it, its unseen cards not yet dealt (the opponent's hand holds
    only the cards known to be his). Built at a request of the seat: the phases where it
    decides."""
    seen = view.observation.orc_pit_fighting
    seat, other = view.seat, 1 - view.seat
    table = Table()
    table.phase = Phase(seen.phase)
    table.turn_seat = seen.turn_seat
    table.actor = seen.actor if seen.HasField("actor") else seat
    table.round, table.round_turns = seen.round, seen.round_turns
    table.decisions = seen.decisions
    table.fangs = list(seen.fangs)
    table.favorite = seen.favorite if seen.HasField("favorite") else None
    table.discard = [cards.from_message(c) for c in seen.discard_pile]
    for side in seen.seats:
        table.damage[side.seat] = side.damage
        table.out[side.seat] = [cards.from_message(c) for c in side.out_pile]
        table.flair[side.seat] = [cards.from_message(c) for c in side.flair_pile]
    table.hands[seat] = sorted(cards.from_message(c) for c in seen.hand)
    table.hands[other] = sorted(knowledge.known)
    table.deck = [BLANK_PLACEHOLDER] * seen.deck_size
    if seen.HasField("pending_play"):
        played = seen.pending_play
        table.pending = (played.seat, cards.from_message(played.card), Use(played.use - 1))
    if seen.drawn:
        table.two = [cards.from_message(c) for c in seen.drawn]
        table.draw_seat = seat
    if table.phase in (Phase.KEEP, Phase.PUT_DOWN) and table.out[table.actor]:
        table.resolving = table.out[table.actor][-1]
    table.exposed[other] = set(knowledge.known)
    if seen.HasField("combat"):
        table.combat = combat_of(view, knowledge)
    if table.phase == Phase.OVER:
        raise GameError("the game is over: there is no world left to search")
    return table


def combat_of(view: SeatView, knowledge: Knowledge) -> Combat:
    seen = view.observation.orc_pit_fighting.combat
    fight = Combat(seen.attacker)
    fight.combat_round = seen.combat_round
    fight.defender = seen.defender if seen.HasField("defender") else None
    fight.rolls = list(seen.rolls)
    if seen.reroll_bonus:
        fight.reroll = (seen.reroll_bonus[0], seen.reroll_bonus[1])
    fight.ace_of_clubs = seen.ace_of_clubs if seen.HasField("ace_of_clubs") else None
    fight.ace_of_spades = seen.ace_of_spades if seen.HasField("ace_of_spades") else None
    if seen.HasField("dirty_drawn"):
        fight.drawn = cards.from_message(seen.dirty_drawn)
    for revealed in seen.revealed:
        if revealed.HasField("card"):
            fight.revealed[revealed.seat] = cards.from_message(revealed.card)
    for side in seen.sides:
        s = side.seat
        fight.stance[s] = Stance(side.stance)
        fight.plays[s] = [play_of(play) for play in side.plays]
        fight.passed[s] = side.passed
        fight.hearts[s] = [cards.from_message(c) for c in side.hearts]
        fight.reinforced[s] = side.reinforced
        fight.blank_unsubstituted[s] = side.blank_unsubstituted
        fight.other_cards[s] = [cards.from_message(c) for c in side.other_cards]
        fight.blank_played[s] = fight.stance[s] == Stance.BLANK
        fight.drawn_to_pit[s] = knowledge.dirty_drawn_to_pit[s]
        fight.start_plays[s] = start_plays(fight.plays[s], knowledge, s)
    fight.pit = [BLANK_PLACEHOLDER if card is None else card for card in knowledge.pit]
    return fight


def play_of(play: opb.OrcPitFightingPitPlay) -> Play:
    if play.face_down and not play.cards:
        return Play((BLANK_PLACEHOLDER,), play.rank, play.value, face_down=True)
    return Play(
        tuple(cards.from_message(c) for c in play.cards), play.rank, play.value, play.face_down
    )


def start_plays(plays: list[Play], knowledge: Knowledge, seat: int) -> tuple[Play, ...]:
    """The seat's plays when Dirty Tricks began, for what counts as newly valid there: only
    their ranks matter (see combat.unlocked_actions)."""
    pitted = set(knowledge.dirty_pitted[seat])
    kept = [p for p in plays if not any(c in pitted for c in p.cards)]
    removed = [
        Play((card,), knowledge.pit_rank.get(card, RANK[card]), 0)
        for card in knowledge.dirty_removed[seat]
        if card not in pitted
    ]
    return tuple(kept + removed)


def drawn_world(
    options: OrcPitFightingOptions, dealer: Dealer, rng: random.Random
) -> OrcPitFightingState:
    """A state at a fresh deal: its history is empty, and resampling it for the same seat
    deals again from the same reading."""
    from arena_games.orc_pit_fighting.state import OrcPitFightingState

    world = OrcPitFightingState(options, 2, dealer.deal(rng))
    world.sampled_for = dealer.seat
    world.dealers = {(0, dealer.seat): dealer}
    return world


class OrcPitFightingWorlds(WorldSampler["OrcPitFightingOptions"]):
    """Worlds of a seat's view at one of its requests (see the module's docstring)."""

    def __init__(self, options: OrcPitFightingOptions, view: SeatView) -> None:
        super().__init__(view)
        self.options = options
        knowledge = read(view)
        self.knowledge = knowledge
        base = table_of(view, knowledge)
        other = 1 - view.seat
        hand_size = view.observation.orc_pit_fighting.seats[other].hand_size
        unseen = unseen_cards(view.observation, knowledge)
        self.dealer = Dealer(base, view.seat, knowledge, unseen, hand_size)

    def sample(self, rng: random.Random) -> OrcPitFightingState:
        return drawn_world(self.options, self.dealer, rng)

    def hidden(self, state: GameState[OrcPitFightingOptions]) -> set[tuple[object, int]]:
        return hidden_pairs(state, self.seat)


def hidden_pairs(state: GameState[OrcPitFightingOptions], seat: int) -> set[tuple[object, int]]:
    """(place, card) of every card in the deck and the opponent's hidden places."""
    from arena_games.orc_pit_fighting.state import OrcPitFightingState

    assert isinstance(state, OrcPitFightingState)
    table, other = state.table, 1 - seat
    found: set[tuple[object, int]] = {("deck", c) for c in table.deck}
    found |= {("hand", c) for c in table.hands[other]}
    fight = table.combat
    if fight is not None:
        found |= {("blank", p.cards[0]) for p in fight.plays[other] if p.face_down}
    if table.put_down is not None and table.actor == other:
        found.add(("put down", table.put_down))
    if table.draw_seat == other:
        found |= {("two", c) for c in table.two}
    return found
