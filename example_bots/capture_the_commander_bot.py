"""A strategy bot for Capture the Commander: remembers every reveal, heads for the nearest enemy
commander by a shortest path, and keeps its own formation closed.

Memory: a card revealed once stays known to everyone while it is in play, and every removed card
is listed, so the observation carries every reveal of the deal; the bot rebuilds its picture
from it on each decision. Cards nobody has seen are modelled by the ranks still unaccounted for
(per seat with one_suit_each, where seat i holds suit i).

An attack with own card a on target t is worth
    P(win) * gain(t) - P(lose) * loss(a)
where a tie counts as a war: half won and half lost when both sides can flip, won (or lost)
outright when only we (or only they) can, and worth nothing when neither can (a draw). gain(t)
is the progress toward that opponent's commander along its cheapest path (the battles still
needed, each removal costed by how hard our best card finds the card there, so the shortest
path through beatable cards; worth more the nearer the commander gets; a capture is worth
everything) plus the threat a known high card of theirs carries. loss(a) is the same seen from
our side: how much nearer our commander comes, every card left newly open to attack ("protect
partially uncovered cards"), and a known high card of ours we would lose.

In a war the bot flips the card most likely to win, never its commander unless that is known to
be strong. With teams a gift that closes the way to a threatened ally's commander competes with
the attacks on the same scale. Ties go to the first legal action, so the bot is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.v1 import capture_the_commander_pb2 as ctcpb
from arena.v1 import referee_pb2 as pb
from arena_games import cards
from arena_games.capture_the_commander import (
    COMMANDER,
    COVERS,
    EMPTY,
    beats,
    commander_distance,
    fully_uncovered,
    targetable,
)
from arena_games.capture_the_commander.formation import ADJACENT
from arena_sdk.bot import Bot

UNKNOWN = 52
"""A card in play that nobody has seen."""

CAPTURE = 1000.0
PROGRESS = 24.0
EXPOSURE = 30.0
OPENED = 2.0
THREAT = 1.0
WEAPON = 1.5
BASE_GAIN = 1.0
STRONG_COMMANDER = 13
"""A commander known to be at least this strong may be flipped in a war."""

RANKS = tuple(range(2, 15))
FLOOR = 0.05
"""The least win chance a removal is costed at, so no card is out of reach for good."""


class Table:
    """The bot's picture of the deal: every formation with the cards everyone knows, and the
    ranks a never-seen card of each seat may have."""

    def __init__(self, obs: Any) -> None:
        self.me: int = obs.seat
        self.seats = len(obs.formations)
        self.teams: bool = obs.teams
        self.twos: bool = obs.twos_beat_aces
        self.formations: list[list[int]] = []
        self.in_game: list[bool] = []
        known: list[int] = []
        for formation in obs.formations:
            slots = [EMPTY] * 14
            for slot in formation.slots:
                if slot.state == ctcpb.CAPTURE_THE_COMMANDER_SLOT_STATE_HIDDEN:
                    slots[slot.number] = UNKNOWN
                elif slot.state != ctcpb.CAPTURE_THE_COMMANDER_SLOT_STATE_EMPTY:
                    slots[slot.number] = cards.from_message(slot.card)
                    known.append(slots[slot.number])
            known += [cards.from_message(c) for c in formation.removed]
            self.formations.append(slots)
            self.in_game.append(formation.in_game)
        self.pools = self._pools(set(known), obs.one_suit_each)
        self.costs: dict[int, list[float]] = {}

    def _pools(self, known: set[int], one_suit_each: bool) -> list[list[int]]:
        """Per seat, how many unseen cards of each rank (index rank - 2) it may hold."""
        pools = []
        for seat in range(self.seats):
            unseen = [
                c
                for c in cards.DECK
                if c not in known and (not one_suit_each or cards.suit(c) == seat)
            ]
            counts = [0] * 13
            for c in unseen:
                counts[cards.rank(c) - 2] += 1
            pools.append(counts)
        return pools

    def ranks_of(self, seat: int, slot: int) -> list[tuple[int, float]]:
        """(rank, probability) of the card in a slot."""
        card = self.formations[seat][slot]
        if card != UNKNOWN:
            return [(cards.rank(card), 1.0)]
        counts = self.pools[seat]
        total = sum(counts) or 1
        return [(r, counts[r - 2] / total) for r in RANKS if counts[r - 2]]

    def duel(
        self, mine: list[tuple[int, float]], theirs: list[tuple[int, float]]
    ) -> tuple[float, float]:
        """(P(win), P(tie)) of a card with rank distribution `mine` against `theirs`."""
        win = tie = 0.0
        for a, pa in mine:
            for b, pb_ in theirs:
                outcome = beats(cards.make(a, 0), cards.make(b, 0), self.twos)
                if outcome > 0:
                    win += pa * pb_
                elif outcome == 0:
                    tie += pa * pb_
        return win, tie

    # -- what a removal is worth ----------------------------------------------------------------
    def without(self, seat: int, slot: int) -> list[int]:
        formation = list(self.formations[seat])
        formation[slot] = EMPTY
        return formation

    def known_rank(self, seat: int, slot: int) -> int:
        card = self.formations[seat][slot]
        return 0 if card == UNKNOWN else cards.rank(card)

    def removal_cost(self, seat: int, slot: int) -> float:
        """Battles expected to remove the card in slot: 1 / P(its best attacker beats it), the
        attackers being ours against an opponent and the opponents' against us."""
        if seat == self.me:
            attackers = [
                (o, s) for o in self.enemies() for s in fully_uncovered(self.formations[o])
            ]
        else:
            attackers = [(self.me, s) for s in fully_uncovered(self.formations[self.me])]
        target = self.ranks_of(seat, slot)
        best = 0.0
        for owner, s in attackers:
            win, tie = self.duel(self.ranks_of(owner, s), target)
            best = max(best, win + tie / 2)
        return 1 / max(FLOOR, best)

    def distance(self, seat: int, formation: list[int]) -> float:
        """Battles expected before this commander falls, along its cheapest path."""
        costs = self.costs.get(seat)
        if costs is None:
            costs = [0.0] + [self.removal_cost(seat, s) for s in range(1, 14)]
            self.costs[seat] = costs

        def expose(slot: int) -> float:
            cover = COVERS[slot]
            if not cover or any(formation[c] == EMPTY for c in cover):
                return 0.0
            return min(costs[c] + expose(c) for c in cover)

        return expose(COMMANDER) + costs[COMMANDER]

    def enemies(self) -> list[int]:
        return [
            o
            for o in range(self.seats)
            if o != self.me and self.in_game[o] and not (self.teams and o % 2 == self.me % 2)
        ]

    def gain(self, seat: int, slot: int) -> float:
        """What removing an opponent's card is worth to us."""
        if slot == COMMANDER:
            return CAPTURE
        before = self.distance(seat, self.formations[seat])
        after = self.distance(seat, self.without(seat, slot))
        threat = max(0, self.known_rank(seat, slot) - 8) * THREAT
        return BASE_GAIN + PROGRESS * (before - after) / after + threat

    def loss(self, seat: int, slot: int) -> float:
        """What losing one of our cards costs us."""
        if slot == COMMANDER:
            return CAPTURE
        formation = self.formations[seat]
        after_formation = self.without(seat, slot)
        before = self.distance(seat, formation)
        after = self.distance(seat, after_formation)
        opened = len(targetable(after_formation)) - (len(targetable(formation)) - 1)
        weapon = max(0, self.known_rank(seat, slot) - 8) * WEAPON
        return EXPOSURE * (before - after) / after + OPENED * max(0, opened) + weapon

    # -- decisions ----------------------------------------------------------------------------
    def attack(self, slot: int, defender: int, target: int) -> float:
        win, tie = self.duel(self.ranks_of(self.me, slot), self.ranks_of(defender, target))
        gain, loss = self.gain(defender, target), self.loss(self.me, slot)
        lose = 1 - win - tie
        we_can, they_can = self.can_go_on(self.me, slot), self.can_go_on(defender, target)
        # A tie is a war: a coin flip when both can fight it, won by the only side that can,
        # and a draw (worth nothing) when neither can.
        if we_can:
            win += tie if not they_can else tie / 2
        if they_can:
            lose += tie if not we_can else tie / 2
        return win * gain - lose * loss

    def can_go_on(self, seat: int, slot: int) -> bool:
        """Whether the seat has a card to flip in a war over the card in slot."""
        formation = self.formations[seat]
        return any(formation[a] != EMPTY for a in ADJACENT[slot])

    def gift(self, slot: int, ally_slot: int) -> float:
        """Closing a hole on the way to the ally's commander, paid with one of our cards."""
        ally = (self.me + 2) % 4
        before = commander_distance(self.formations[ally])
        filled = list(self.formations[ally])
        filled[ally_slot] = UNKNOWN
        after = commander_distance(filled)
        return EXPOSURE * (after - before) / before - self.loss(self.me, slot) - BASE_GAIN

    def war_flip(self, slot: int, battle: Any) -> float:
        """Flip the card most likely to win the next comparison; the commander only if it is
        known to be strong, since every card of the losing side goes."""
        if slot == COMMANDER and self.known_rank(self.me, slot) < STRONG_COMMANDER:
            return -CAPTURE
        other = battle.defender if battle.attacker == self.me else battle.attacker
        theirs = self._their_next(other, battle)
        if not theirs:
            # They cannot flip: any flip of ours wins; show them as little as possible.
            return -float(self.known_rank(self.me, slot) == 0)
        win, tie = self.duel(self.ranks_of(self.me, slot), theirs)
        return win + tie / 2 - self.loss(self.me, slot) / CAPTURE

    def _their_next(self, seat: int, battle: Any) -> list[tuple[int, float]]:
        """The rank distribution of the opponent's war flip: the best of its options when all
        are known, otherwise the unseen ranks."""
        flipped = set(battle.attacker_slots if seat == battle.attacker else battle.defender_slots)
        formation = self.formations[seat]
        options = {a for s in flipped for a in ADJACENT[s] if formation[a] != EMPTY} - flipped
        if not options:
            return []
        if all(formation[s] != UNKNOWN for s in options):
            return [(max(self.known_rank(seat, s) for s in options), 1.0)]
        return self.ranks_of(seat, min(s for s in options if formation[s] == UNKNOWN))


class CaptureTheCommanderBot(Bot):
    name = "capture-the-commander-strategy"

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        table = Table(observation)
        best, best_score = 0, float("-inf")
        for index, legal in enumerate(legal_actions):
            score = self._score(table, legal.action.capture_the_commander, observation)
            if score > best_score:
                best, best_score = index, score
        return best

    @staticmethod
    def _score(table: Table, action: Any, observation: Any) -> float:
        kind = action.WhichOneof("kind")
        if kind == "attack":
            a = action.attack
            return table.attack(a.slot, a.defender, a.target_slot)
        if kind == "gift":
            return table.gift(action.gift.slot, action.gift.ally_slot)
        return table.war_flip(action.war_flip.slot, observation.battle)
