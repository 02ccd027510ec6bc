"""A strategy bot for Opposing Force: claims every proven position, then plays the card whose
marginal worth, summed over the positions it affects, is the highest.

The estimate, per position, is the probability of winning it. Our side's final formation and
the opponent's are each modelled as a distribution over formation values: a side's completion
"targets" (the cards, ranks or suits it still needs) are listed best first, each with the chance
that the side gets what it needs, and the distribution is the expected maximum over those targets
taken as independent events. A card in our hand counts as certain; a card nobody has seen (the
deck and the opponent's hand) reaches us, or the opponent, with a probability from the draws
still to come. Cards on the table or in our hand never reach the opponent.

A play of card c at position p is worth, before the tie breaks:
    weight(p) * (P(win p | c added there) - P(win p | c gone from our hand))
  - OPPORTUNITY * the best that c would be worth anywhere else
  - WASTE * how high c is, when p is lost whatever we do
  + CLAIM_BONUS * weight(p), when the play makes p provably ours at once.
A position's weight counts what it means for three adjacent positions (ours to take, the
opponent's to stop) and for five positions, so the centre and the neighbours of claimed positions
matter most. Only tie breaks use the seeded generator, so the bot is deterministic.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

from arena.v1 import referee_pb2 as pb
from arena_games import cards
from arena_games.opposing_force import (
    ANYTHING_ELSE,
    FLUSH,
    POSITIONS,
    STRAIGHT,
    STRAIGHT_FLUSH,
    THREE_OF_A_KIND,
    best_completion,
    formation_value,
)
from arena_sdk.bot import Bot

Dist = list[tuple[int, float]]
"""A formation distribution: (value, probability) pairs, best value first, summing to 1."""

NEVER = -1
"""The value of a side that is never completed: below every formation."""

# Tuned against a naive greedy bot (best reachable formation); roles in the module docstring.
DRAW_DISCOUNT = 0.65
OPPORTUNITY = 0.3
WASTE = 0.05
CLAIM_BONUS = 0.25
HOPELESS = 0.05
COMPLETE_ANYWAY = 0.9
TAIL = 0.01

TRIPLES = tuple((p, p + 1, p + 2) for p in range(POSITIONS - 2))
ATTACK = (0.2, 0.6, 2.0)
"""Weight a position gets from a triple the opponent holds none of, by how many we hold."""
DEFEND = (0.0, 0.5, 1.8)
"""Weight a position gets from a triple we hold none of, by how many the opponent holds."""


def encode(category: int, high: int, mid: int, low: int) -> int:
    """The engine's formation_value for a category and ranks, high to low."""
    return ((category * 16 + high) * 16 + mid) * 16 + low


# -- formation distributions ------------------------------------------------------------------
_PAIR_CANDIDATES: dict[int, list[tuple[int, int]]] = {}


def pair_candidates(a: int, b: int) -> list[tuple[int, int]]:
    """(value, third card) for every third card completing a and b, best value first."""
    key = min(a, b) * 52 + max(a, b)
    found = _PAIR_CANDIDATES.get(key)
    if found is None:
        found = sorted(
            ((formation_value((a, b, c)), c) for c in range(52) if c != a and c != b),
            reverse=True,
        )
        _PAIR_CANDIDATES[key] = found
    return found


def expected_max(targets: list[tuple[int, float]]) -> Dist:
    """The distribution of the best target reached, the targets taken as independent."""
    targets.sort(reverse=True)
    dist: Dist = []
    rest = 1.0
    for value, p in targets:
        if p <= 0.0:
            continue
        mass = rest * min(p, 1.0)
        dist.append((value, mass))
        rest -= mass
        if rest < TAIL:
            break
    if rest > 0.0:
        dist.append((NEVER, rest))
    return dist


def binomial_at_least(n: int, p: float, need: int) -> float:
    """The chance that at least need of n independent events of chance p happen."""
    if need <= 0:
        return 1.0
    if need > n or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    miss = 0.0
    term = (1.0 - p) ** n  # exactly j happen, for j = 0, 1, ...
    for j in range(need):
        miss += term
        term *= (n - j) / (j + 1) * p / (1.0 - p)
    return max(0.0, 1.0 - miss)


def two_of_three(a: float, b: float, c: float) -> float:
    """The chance that at least two of three independent events happen."""
    return a * b + a * c + b * c - 2.0 * a * b * c


def three_of_four(a: float, b: float, c: float, d: float) -> float:
    """The chance that at least three of four independent events happen."""
    return a * b * c + a * b * d + a * c * d + b * c * d - 3.0 * a * b * c * d


SF_VALUE = [encode(STRAIGHT_FLUSH, t, t - 1, t - 2) if t >= 4 else NEVER for t in range(15)]
STRAIGHT_VALUE = [encode(STRAIGHT, t, t - 1, t - 2) if t >= 4 else NEVER for t in range(15)]
TRIPS_VALUE = [encode(THREE_OF_A_KIND, r, r, r) for r in range(15)]
RANK_CARDS = [tuple(cards.make(r, s) for s in range(4)) if r >= 2 else () for r in range(15)]
SUIT_HIGH_FIRST = [tuple((r, cards.make(r, s)) for r in range(14, 1, -1)) for s in range(4)]
SUITED_RUNS = tuple(
    (t, cards.make(t, s), cards.make(t - 1, s), cards.make(t - 2, s))
    for t in range(4, 15)
    for s in range(4)
)
EMPTY_JUNK = encode(ANYTHING_ELSE, 11, 8, 5)


class Resources:
    """How likely each card is to end up in one side's hands: 1 held, q unseen, 0 gone."""

    def __init__(self, prob: list[float], unseen: float) -> None:
        self.prob = prob
        self.unseen = unseen
        self.rank_prob = [0.0] * 15
        for r in range(2, 15):
            a, b, c, d = RANK_CARDS[r]
            self.rank_prob[r] = 1.0 - (1.0 - prob[a]) * (1.0 - prob[b]) * (1.0 - prob[c]) * (
                1.0 - prob[d]
            )

    def flush_target(self, suit: int, ranks: list[int], exclude: int) -> tuple[int, float]:
        """(value, chance) of a flush in suit completing ranks with the likeliest high cards;
        exclude is a card already in the side (or -1)."""
        need = 3 - len(ranks)
        prob = self.prob
        certain = possible = 0
        picks: list[int] = []
        expected = 0.0
        last = 2
        for r, card in SUIT_HIGH_FIRST[suit]:
            p = prob[card]
            if p <= 0.0 or card == exclude:
                continue
            if p >= 1.0:
                certain += 1
            possible += 1
            expected += p
            if len(picks) < need and expected >= len(picks) + 0.5:
                picks.append(r)
            last = r
        if possible < need:
            return NEVER, 0.0
        while len(picks) < need:
            picks.append(last)
        high, mid, low = sorted(ranks + picks, reverse=True)
        chance = binomial_at_least(possible - certain, self.unseen, need - certain)
        return encode(FLUSH, high, mid, low), chance

    def dist(self, side: Sequence[int]) -> Dist:
        """Our (or the opponent's) formation distribution for a side with these cards."""
        if len(side) == 3:
            return [(formation_value(tuple(side)), 1.0)]
        if len(side) == 2:
            return self._dist_two(side[0], side[1])
        if len(side) == 1:
            return self._dist_one(side[0])
        return self._dist_empty()

    def _dist_two(self, a: int, b: int) -> Dist:
        prob = self.prob
        dist: Dist = []
        rest = 1.0
        for value, c in pair_candidates(a, b):
            p = prob[c]
            if p <= 0.0:
                continue
            mass = rest * p
            dist.append((value, mass))
            rest -= mass
            if rest < TAIL:
                break
        if rest > 0.0:
            dist.append((NEVER, rest))
        return dist

    def _dist_one(self, a: int) -> Dist:
        prob = self.prob
        rp = self.rank_prob
        r, s = cards.rank(a), cards.suit(a)
        targets: list[tuple[int, float]] = []
        for top in range(max(r, 4), min(r + 2, 14) + 1):
            x, y = (t for t in (top, top - 1, top - 2) if t != r)
            p = prob[cards.make(x, s)] * prob[cards.make(y, s)]
            if p > 0.0:
                targets.append((SF_VALUE[top], p))
            targets.append((STRAIGHT_VALUE[top], rp[x] * rp[y]))
        p1, p2, p3 = (prob[c] for c in RANK_CARDS[r] if c != a)
        targets.append((TRIPS_VALUE[r], two_of_three(p1, p2, p3)))
        targets.append(self.flush_target(s, [r], a))
        high, mid, low = sorted((r, 9, 6), reverse=True)
        targets.append((encode(ANYTHING_ELSE, high, mid, low), COMPLETE_ANYWAY))
        return expected_max(targets)

    def _dist_empty(self) -> Dist:
        prob = self.prob
        rp = self.rank_prob
        targets: list[tuple[int, float]] = []
        for top, a, b, c in SUITED_RUNS:
            p = prob[a] * prob[b] * prob[c]
            if p > 0.0:
                targets.append((SF_VALUE[top], p))
        for top in range(4, 15):
            p = rp[top] * rp[top - 1] * rp[top - 2]
            if p > 0.0:
                targets.append((STRAIGHT_VALUE[top], p))
        for r in range(2, 15):
            a, b, c, d = RANK_CARDS[r]
            p = three_of_four(prob[a], prob[b], prob[c], prob[d])
            if p > 0.0:
                targets.append((TRIPS_VALUE[r], p))
        for s in range(4):
            targets.append(self.flush_target(s, [], -1))
        targets.append((EMPTY_JUNK, COMPLETE_ANYWAY))
        return expected_max(targets)


# -- comparing distributions ------------------------------------------------------------------
class Opponent:
    """The opponent's distribution at one position, ready for win probabilities."""

    def __init__(self, dist: Dist, complete: bool) -> None:
        mass: dict[int, float] = {}
        for value, p in dist:
            mass[value] = mass.get(value, 0.0) + p
        self.values = sorted(mass)
        self.below: list[float] = []
        self.at: list[float] = []
        total = 0.0
        for value in self.values:
            self.below.append(total)
            self.at.append(mass[value])
            total += mass[value]
        self.total = total
        self.complete = complete

    def p_win(self, ours: Dist, tie: float) -> float:
        """The chance our value beats theirs, a tie counting as tie."""
        values, below, at = self.values, self.below, self.at
        n = len(values)
        win = 0.0
        for value, p in ours:
            i = bisect_left(values, value)
            if i == n:
                win += p * self.total
            elif values[i] == value:
                win += p * (below[i] + tie * at[i])
            else:
                win += p * below[i]
        return win


def position_weights(claimed: list[int], me: int) -> list[float]:
    """What winning each open position is worth, for three adjacent and for five."""
    mine = sum(1 for owner in claimed if owner == me)
    theirs = sum(1 for owner in claimed if owner == 1 - me)
    weights = [0.0] * POSITIONS
    for p in range(POSITIONS):
        if claimed[p] >= 0:
            continue
        weight = 1.0
        if mine >= 4 or theirs >= 4:
            weight += 1.5
        elif mine >= 3 or theirs >= 3:
            weight += 0.4
        for triple in TRIPLES:
            if p not in triple:
                continue
            ours = sum(1 for q in triple if claimed[q] == me)
            others = sum(1 for q in triple if claimed[q] == 1 - me)
            if others == 0:
                weight += ATTACK[ours]
            if ours == 0:
                weight += DEFEND[others]
        weights[p] = weight
    return weights


# -- the bot ----------------------------------------------------------------------------------
class OpposingForceBot(Bot):
    """Claims whatever it can prove, then plays the card and position worth most."""

    name = "opposing-force-strategy"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def on_match_start(self, match: pb.MatchStart) -> None:
        self.rng = random.Random(self.seed)

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        plays: list[tuple[int, int, int]] = []
        pass_index = 0
        for i, legal in enumerate(legal_actions):
            action = legal.action.opposing_force
            kind = action.WhichOneof("kind")
            if kind == "claim":
                return i
            if kind == "play":
                plays.append((i, cards.from_message(action.play.card), action.play.position))
            else:
                pass_index = i
        if not plays:
            return pass_index
        if len(plays) == 1:
            return plays[0][0]
        scores = self.score_plays(observation, plays)
        best = max(scores)
        tied = [plays[k][0] for k, score in enumerate(scores) if score >= best - 1e-9]
        return tied[0] if len(tied) == 1 else self.rng.choice(tied)

    def score_plays(self, obs: Any, plays: list[tuple[int, int, int]]) -> list[float]:
        """The worth of each (index, card, position) play; see the module docstring."""
        me = int(obs.seat)
        other = 1 - me
        hand = [cards.from_message(c) for c in obs.hand]
        sides: list[list[list[int]]] = [[], []]
        claimed: list[int] = []
        for position in obs.positions:
            for seat in (0, 1):
                sides[seat].append([cards.from_message(c) for c in position.sides[seat].cards])
            claimed.append(position.claimed_by if position.HasField("claimed_by") else -1)
        on_table = {c for seat in (0, 1) for side in sides[seat] for c in side}
        unseen = [c for c in range(52) if c not in on_table and c not in hand]
        deck = int(obs.deck_size)
        their_hand = int(obs.hand_sizes[other])
        q_us = q_them = 0.0
        if unseen:
            q_us = min(1.0, DRAW_DISCOUNT * ((deck + 1) // 2) / len(unseen))
            q_them = min(1.0, DRAW_DISCOUNT * (their_hand + deck // 2) / len(unseen))
        their_prob = [0.0] * 52
        our_prob = [0.0] * 52
        for c in unseen:
            their_prob[c] = q_them
            our_prob[c] = q_us
        theirs_resources = Resources(their_prob, q_them)
        weights = position_weights(claimed, me)

        opponents: dict[int, Opponent] = {}
        for _, _, p in plays:
            if p not in opponents:
                side = sides[other][p]
                opponents[p] = Opponent(theirs_resources.dist(side), len(side) == 3)

        # Our resources without each played card, and the distributions they give.
        resources: dict[int, Resources] = {}
        dists: dict[tuple[int, tuple[int, ...]], Dist] = {}

        def our_dist(card: int, side: tuple[int, ...]) -> Dist:
            key = (card, side)
            found = dists.get(key)
            if found is None:
                res = resources.get(card)
                if res is None:
                    prob = list(our_prob)
                    for h in hand:
                        if h != card:
                            prob[h] = 1.0
                    res = resources[card] = Resources(prob, q_us)
                found = dists[key] = res.dist(side)
            return found

        gains: list[float] = []
        after_win: list[float] = []
        bonus: list[float] = []
        for _, card, p in plays:
            mine = sides[me][p]
            theirs = sides[other][p]
            opponent = opponents[p]
            before_tie = 0.0 if opponent.complete else 0.5
            before = opponent.p_win(our_dist(card, tuple(sorted(mine))), before_tie)
            extra = 0.0
            if len(mine) == 2:
                value = formation_value((mine[0], mine[1], card))
                if opponent.complete:
                    # They completed first, so a tie is theirs.
                    after = 1.0 if value > formation_value(tuple(theirs)) else 0.0
                else:
                    pool = unseen + [h for h in hand if h != card]
                    their_best = best_completion(theirs, pool)
                    if their_best is None or their_best <= value:
                        after = 1.0
                    else:
                        after = opponent.p_win([(value, 1.0)], 1.0)
                if after >= 1.0:
                    extra = CLAIM_BONUS * weights[p]
            else:
                ours = our_dist(card, tuple(sorted([*mine, card])))
                after = opponent.p_win(ours, 0.0 if opponent.complete else 0.5)
            gains.append(weights[p] * (after - before))
            after_win.append(after)
            bonus.append(extra)

        # The best and second best use of each card, for its opportunity cost.
        top: dict[int, list[float]] = {}
        for k, (_, card, _) in enumerate(plays):
            best2 = top.setdefault(card, [0.0, 0.0])
            gain = gains[k]
            if gain > best2[0]:
                best2[0], best2[1] = gain, best2[0]
            elif gain > best2[1]:
                best2[1] = gain
        scores: list[float] = []
        for k, (_, card, _) in enumerate(plays):
            best2 = top[card]
            elsewhere = best2[1] if gains[k] >= best2[0] else best2[0]
            score = gains[k] + bonus[k] - OPPORTUNITY * elsewhere
            if after_win[k] < HOPELESS:
                score -= WASTE * (cards.rank(card) - 2) / 12.0
            scores.append(score)
        return scores
