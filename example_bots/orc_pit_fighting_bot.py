"""A strategy bot for Orc Pit Fighting: circle until the hand holds a strong run of clubs, then
attack; fight each segment to win the Combat Value race without wasting cards.

Every decision scores the legal actions and takes the best (the first on ties), so the bot is
deterministic. The scores, by phase:
- Non-combat turn: the ace of clubs attacks at once (+5 against nothing nearly always wins);
  the ace of hearts heals; a run of clubs (two flush spades count as a club) worth at least
  ATTACK_AT attacks with its highest club; otherwise the weakest card is cycled for a better one
  (draw two with a red card, dig a spade when the discard pile's top five hold better, take the
  top of an Out pile worth more), and only then attack with what there is.
- The answer to an attack: whichever of Defend (spades) or Counterattack (clubs and pairs) makes
  the better run; the ace of clubs in hand always counterattacks.
- Brutality: the play that leaves the best run reachable; pass once the lead exceeds the cap of
  four; the ace of clubs at once; the ace of spades when far behind.
- Reinforcements: a heart only if it beats the opponent's best. Dirty Tricks: draw with diamonds
  while not safely ahead; the ace of diamonds against a lead; drawn cards to the Pit when valid.
- Draw procedure: the ace of clubs, else the lowest club, else a spade, else a heart.
- The cancel: a spade picture stops an attack it could not answer well, a heal or a swap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from arena.v1 import orc_pit_fighting_pb2 as opb
from arena.v1 import referee_pb2 as pb
from arena_games import cards
from arena_games.orc_pit_fighting.rules import (
    ACE_OF_CLUBS,
    ACE_OF_DIAMONDS,
    ACE_OF_HEARTS,
    ACE_OF_SPADES,
    CLUBS,
    DIAMONDS,
    HEARTS,
    SPADES,
    is_ace,
    is_picture,
    rank,
    spade_pairs,
    suit,
    value_of_rank,
)
from arena_sdk.bot import Bot

Phase = opb.OrcPitFightingPhase
UseEnum = opb.OrcPitFightingUse

ATTACK_AT = 11
"""The run value at which circling stops and the attack comes."""
CAP = 4
LATE_TURNS = 40
"""Non-combat turns after which any club attacks rather than circling on."""


# -- card and run helpers --------------------------------------------------------------------------
def run_value(available: Iterable[int], current: Sequence[int]) -> int:
    """The best Combat Value a run can reach: from the current ranks extended with available
    ranks at either end, or (with no current run) the best segment of available ranks."""
    ranks = set(available)
    if current:
        low, high = min(current), max(current)
        while low - 1 in ranks:
            low -= 1
        while high + 1 in ranks:
            high += 1
        return value_of_rank(high) + (high - low)
    best = 0
    for start in sorted(ranks):
        if start - 1 in ranks:
            continue
        end = start
        while end + 1 in ranks:
            end += 1
        best = max(best, value_of_rank(end) + (end - start))
    return best


def attack_ranks(hand: Sequence[int]) -> set[int]:
    ranks = {rank(c) for c in hand if suit(c) == CLUBS and not is_ace(c)}
    return ranks | {rank(low) for low in spade_pairs(hand)}


def defend_ranks(hand: Sequence[int]) -> set[int]:
    ranks = {rank(c) for c in hand if suit(c) == SPADES and not is_ace(c)}
    return ranks | ({1} if ACE_OF_SPADES in hand else set())


def card_worth(card: int, hand: Sequence[int], damage: int) -> float:
    """How much a card is worth keeping."""
    special = {ACE_OF_CLUBS: 100.0, ACE_OF_SPADES: 30.0, ACE_OF_DIAMONDS: 20.0}
    if card in special:
        return special[card]
    if card == ACE_OF_HEARTS:
        return 40.0 if damage else 8.0
    kind, r = suit(card), rank(card)
    neighbours = sum(1 for c in hand if suit(c) == kind and abs(rank(c) - r) == 1)
    if kind == CLUBS:
        return 6.0 + value_of_rank(r) + 4.0 * neighbours
    if kind == SPADES:
        return 4.0 + value_of_rank(r) / 2 + 3.0 * neighbours + (6.0 if is_picture(card) else 0.0)
    if kind == DIAMONDS:
        return 7.0 + (3.0 if is_picture(card) else 0.0)
    return 2.0 + r / 4 + (3.0 if is_picture(card) else 0.0)


def card_of(message: Any) -> int:
    return cards.from_message(message)


# -- the bot ---------------------------------------------------------------------------------------
class OrcPitFightingBot(Bot):
    name = "orc-pit-fighting-strategy"

    def __init__(self, seed: int = 0) -> None:
        # Deterministic: the seed is accepted for the common bot signature only.
        self.seed = seed

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        obs: opb.OrcPitFightingObservation = observation
        options = [a.action.orc_pit_fighting for a in legal_actions]
        scorer = SCORERS.get(obs.phase, Decision.default)
        decision = Decision(obs)
        scores = [scorer(decision, option) for option in options]
        return max(range(len(options)), key=lambda i: (scores[i], -i))


class Decision:
    """One decision's view of the table, and the score of each kind of answer."""

    def __init__(self, obs: opb.OrcPitFightingObservation) -> None:
        self.obs = obs
        self.seat = obs.seat
        self.hand = [card_of(c) for c in obs.hand]
        self.damage = obs.seats[self.seat].damage
        self.fight = obs.combat if obs.HasField("combat") else None

    # -- helpers -----------------------------------------------------------------------------------
    def worth(self, card: int) -> float:
        return card_worth(card, self.hand, self.damage)

    def side(self, seat: int) -> opb.OrcPitFightingSide:
        assert self.fight is not None
        return self.fight.sides[seat]

    def my_value(self) -> int:
        return self.side(self.seat).combat_value if self.fight else 0

    def their_value(self) -> int:
        return self.side(1 - self.seat).combat_value if self.fight else 0

    def my_ranks(self) -> list[int]:
        return [p.rank for p in self.side(self.seat).plays if not p.face_down]

    def attacking(self) -> bool:
        stance = self.side(self.seat).stance
        return stance in (
            opb.ORC_PIT_FIGHTING_STANCE_ATTACK,
            opb.ORC_PIT_FIGHTING_STANCE_COUNTERATTACK,
        )

    def reachable(self, hand: Sequence[int], current: Sequence[int]) -> int:
        ranks = attack_ranks(hand) if self.attacking() else defend_ranks(hand)
        return run_value(ranks, current)

    @staticmethod
    def play(option: opb.OrcPitFightingAction) -> tuple[int, int] | None:
        if option.WhichOneof("kind") != "play":
            return None
        return card_of(option.play.card), option.play.use

    # -- scorers -----------------------------------------------------------------------------------
    def default(self, option: opb.OrcPitFightingAction) -> float:
        return 0.0

    def turn(self, option: opb.OrcPitFightingAction) -> float:
        played = self.play(option)
        if played is None:
            return -1.0 if option.WhichOneof("kind") == "done" else 0.0
        card, use = played
        if use == UseEnum.ORC_PIT_FIGHTING_USE_ATTACK:
            return self.attack_score(card)
        if use == UseEnum.ORC_PIT_FIGHTING_USE_HEAL:
            return 90.0 if self.damage else -5.0
        if use == UseEnum.ORC_PIT_FIGHTING_USE_DISCARD:
            return -20.0
        return self.cycle_score(card, use)

    def attack_score(self, club: int) -> float:
        if club == ACE_OF_CLUBS:
            return 100.0
        ranks = attack_ranks(self.hand)
        power = run_value(ranks, [rank(club)])
        only_clubs = all(suit(c) == CLUBS for c in self.hand)
        if power >= ATTACK_AT or only_clubs or self.obs.round_turns >= LATE_TURNS:
            return 50.0 + power + rank(club) / 100
        return power / 10

    def cycle_score(self, card: int, use: int) -> float:
        """Give a weak card for a chance at a better one."""
        loss = self.worth(card)
        gain = 0.0
        if use == UseEnum.ORC_PIT_FIGHTING_USE_DRAW_TWO:
            gain = 14.0
        elif use == UseEnum.ORC_PIT_FIGHTING_USE_DIG:
            top = [card_of(c) for c in self.obs.discard_pile[-5:]]
            gain = sum(self.worth(c) for c in top) / len(top) if top else -10.0
        elif use == UseEnum.ORC_PIT_FIGHTING_USE_TAKE_THEIR_OUT:
            gain = self.top_of_out(1 - self.seat)
        elif use == UseEnum.ORC_PIT_FIGHTING_USE_TAKE_OWN_OUT:
            gain = self.top_of_out(self.seat)
        elif use == UseEnum.ORC_PIT_FIGHTING_USE_SWAP:
            gain = 10.0
        elif use == UseEnum.ORC_PIT_FIGHTING_USE_FLAIR:
            gain = -4.0
        return gain - loss

    def top_of_out(self, seat: int) -> float:
        pile = self.obs.seats[seat].out_pile
        return self.worth(card_of(pile[-1])) if pile else -10.0

    def cancel(self, option: opb.OrcPitFightingAction) -> float:
        if option.WhichOneof("kind") == "decline":
            return 0.0
        pending = self.obs.pending_play
        use = pending.use
        if use == UseEnum.ORC_PIT_FIGHTING_USE_ATTACK:
            defence = max(
                run_value(attack_ranks(self.hand), []), run_value(defend_ranks(self.hand), [])
            )
            return 1.0 if defence < ATTACK_AT else -1.0
        if use in (UseEnum.ORC_PIT_FIGHTING_USE_HEAL, UseEnum.ORC_PIT_FIGHTING_USE_SWAP):
            return 1.0
        return -1.0

    def keep(self, option: opb.OrcPitFightingAction) -> float:
        played = self.play(option)
        return self.worth(played[0]) if played else 0.0

    def put_down(self, option: opb.OrcPitFightingAction) -> float:
        played = self.play(option)
        return -self.worth(played[0]) if played else 0.0

    def declare(self, option: opb.OrcPitFightingAction) -> float:
        kind = option.WhichOneof("kind")
        counter = run_value(attack_ranks(self.hand), [])
        defend = run_value(defend_ranks(self.hand), [])
        if ACE_OF_CLUBS in self.hand:
            counter += 20
        if kind == "counterattack":
            return counter + 0.5
        if kind == "defend":
            return defend
        played = self.play(option)
        return -self.worth(played[0]) if played else 0.0

    def brutality(self, option: opb.OrcPitFightingAction) -> float:
        lead = self.my_value() - self.their_value()
        played = self.play(option)
        if played is None:
            return 1.0 if lead > CAP else 0.0
        card, use = played
        if card == ACE_OF_CLUBS and use == UseEnum.ORC_PIT_FIGHTING_USE_PIT:
            return 100.0
        if card == ACE_OF_SPADES and use == UseEnum.ORC_PIT_FIGHTING_USE_PIT:
            behind = self.their_value() - self.reachable(self.hand, self.my_ranks())
            return 5.0 if behind >= 3 else -5.0
        if lead > CAP:
            return -1.0
        rest = [c for c in self.hand if c != card]
        new_rank = 1 if use == UseEnum.ORC_PIT_FIGHTING_USE_ACE_LOW else rank(card)
        if use == UseEnum.ORC_PIT_FIGHTING_USE_PAIR:
            rest = [c for c in rest if c != card + 1]
        return 2.0 + self.reachable(rest, [*self.my_ranks(), new_rank]) - self.worth(card) / 100

    def must_play(self, option: opb.OrcPitFightingAction) -> float:
        played = self.play(option)
        return -self.worth(played[0]) if played else 0.0

    def ace_answer(self, option: opb.OrcPitFightingAction) -> float:
        return 1.0 if self.play(option) else 0.0

    def reinforcements(self, option: opb.OrcPitFightingAction) -> float:
        played = self.play(option)
        theirs = max((rank(card_of(c)) for c in self.side(1 - self.seat).hearts), default=0)
        mine = max((rank(card_of(c)) for c in self.side(self.seat).hearts), default=0)
        if played is None:
            return 0.0
        r = rank(played[0])
        if mine > theirs or r <= theirs:
            return -1.0
        return 1.0 - r / 100

    def dirty_tricks(self, option: opb.OrcPitFightingAction) -> float:
        lead = self.my_value() - self.their_value()
        played = self.play(option)
        if played is None:
            return 0.0
        card, use = played
        if card == ACE_OF_DIAMONDS and use == UseEnum.ORC_PIT_FIGHTING_USE_PIT:
            return 3.0 if lead <= 1 and self.side(1 - self.seat).plays else -1.0
        if use == UseEnum.ORC_PIT_FIGHTING_USE_DIRTY_DRAW:
            return (2.0 if lead < CAP else -1.0) - self.worth(card) / 100
        return 4.0 if lead <= CAP else -1.0

    def drawn(self, option: opb.OrcPitFightingAction) -> float:
        played = self.play(option)
        lead = self.my_value() - self.their_value()
        if played is None:
            return 0.0
        card, use = played
        if use == UseEnum.ORC_PIT_FIGHTING_USE_DIRTY_DRAW:
            return 1.0 if lead < CAP else -1.0
        if card == ACE_OF_SPADES:
            return 2.0 if lead <= -3 else -1.0
        if card == ACE_OF_DIAMONDS:
            return 2.0 if lead <= 1 else -1.0
        return 3.0 if lead <= CAP or self.side(self.seat).blank_unsubstituted else -1.0

    def face_down(self, option: opb.OrcPitFightingAction) -> float:
        played = self.play(option)
        if played is None:
            return 0.0
        card = played[0]
        if card == ACE_OF_CLUBS:
            return 100.0
        preference = {CLUBS: 50.0, SPADES: 30.0, HEARTS: 10.0, DIAMONDS: 0.0}[suit(card)]
        return preference - self.worth(card) / 10

    def choose_turn(self, option: opb.OrcPitFightingAction) -> float:
        return 1.0 if option.choose_turn.take else 0.0


SCORERS = {
    Phase.ORC_PIT_FIGHTING_PHASE_TURN: Decision.turn,
    Phase.ORC_PIT_FIGHTING_PHASE_EXTRA_RED: Decision.turn,
    Phase.ORC_PIT_FIGHTING_PHASE_CANCEL: Decision.cancel,
    Phase.ORC_PIT_FIGHTING_PHASE_KEEP: Decision.keep,
    Phase.ORC_PIT_FIGHTING_PHASE_PUT_DOWN: Decision.put_down,
    Phase.ORC_PIT_FIGHTING_PHASE_DECLARE: Decision.declare,
    Phase.ORC_PIT_FIGHTING_PHASE_BRUTALITY: Decision.brutality,
    Phase.ORC_PIT_FIGHTING_PHASE_MUST_PLAY: Decision.must_play,
    Phase.ORC_PIT_FIGHTING_PHASE_ACE_ANSWER: Decision.ace_answer,
    Phase.ORC_PIT_FIGHTING_PHASE_REINFORCEMENTS: Decision.reinforcements,
    Phase.ORC_PIT_FIGHTING_PHASE_DIRTY_TRICKS: Decision.dirty_tricks,
    Phase.ORC_PIT_FIGHTING_PHASE_DRAWN: Decision.drawn,
    Phase.ORC_PIT_FIGHTING_PHASE_DRAW_CHOICE: Decision.face_down,
    Phase.ORC_PIT_FIGHTING_PHASE_CHOOSE_TURN: Decision.choose_turn,
}
