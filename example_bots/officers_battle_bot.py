"""A strategy bot for Officers' Battle: kill whenever it can, keep aces and series material,
cycle the rest through singles for bonus cards, and stop drawing once its own deck is empty.

Every officer alive is worth 5 points and every card left in the opponent's hand 1, so kills
decide the game. The referee offers a series start only when the hand can finish it, so the
bot simply lays the series from its lowest natural upwards and puts any ace on top (the killing
card leaves the game instead of feeding the opponent through the discard pile).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.v1 import officers_battle_pb2 as obpb
from arena.v1 import referee_pb2 as pb
from arena_sdk.bot import Bot

ACE = 14
JUNK_RANK = 7  # singles above this rank would raise the pile too high for a later series


def _pair(card: Any) -> tuple[int, int]:
    return int(card.rank), int(card.suit)


class OfficersBattleBot(Bot):
    name = "officers-battle-strategist"

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        obs: obpb.OfficersBattleObservation = observation
        typed = [la.action.officers_battle for la in legal_actions]
        kinds = [t.WhichOneof("kind") for t in typed]
        hand = [_pair(c) for c in obs.hand]
        scored = [
            (self._score(obs, hand, kind, action), -i)
            for i, (kind, action) in enumerate(zip(kinds, typed, strict=True))
        ]
        return -max(scored)[1]

    # -- scoring each answer ------------------------------------------------------------------
    def _score(
        self,
        obs: obpb.OfficersBattleObservation,
        hand: list[tuple[int, int]],
        kind: str | None,
        action: obpb.OfficersBattleAction,
    ) -> float:
        if kind == "draw":
            return self._draw_score(obs, hand, action.draw.source)
        if kind == "no_draw":
            return 1.0
        if kind == "ace_kill":
            return 80.0
        if kind == "start_series":
            # The lowest natural first: the series is then laid upwards.
            return 90.0 - action.start_series.card.rank
        if kind == "add_to_series":
            rank = action.add_to_series.card.rank
            return 40.0 if rank == ACE else 60.0 - rank
        if kind == "finish_series":
            # Finish as soon as possible; the highest start puts the aces on top.
            return 100.0 + action.finish_series.low_rank
        if kind == "single":
            return self._single_score(hand, _pair(action.single.card))
        if kind == "kill_choice":
            return self._kill_choice_score(obs, action.kill_choice.take_pile)
        if kind == "new_support":
            return self._support_score(obs, action.new_support.source_slot)
        if kind == "pass_action":
            return self._pass_score(obs)
        if kind == "end_battle":
            return 0.0
        return -10.0  # regroups: rarely worth a turn

    def _draw_score(
        self, obs: obpb.OfficersBattleObservation, hand: list[tuple[int, int]], source: int
    ) -> float:
        if source == obpb.OFFICERS_BATTLE_SOURCE_OWN_DECK:
            return 2.0
        top = _pair(obs.discard_pile[-1])
        if top[0] == ACE or _series_material(hand, top):
            return 3.0
        mine = obs.sides[obs.seat]
        return 0.5 if mine.deck_size == 0 else 1.5

    def _single_score(self, hand: list[tuple[int, int]], card: tuple[int, int]) -> float:
        rank = card[0]
        if rank == ACE:
            return -5.0
        if rank == 2:
            return 8.0  # a 2 on the pile lets anything follow
        if _series_material(hand, card) or rank > JUNK_RANK:
            return -1.0
        return 5.0 - rank / 10

    def _kill_choice_score(self, obs: obpb.OfficersBattleObservation, take_pile: bool) -> float:
        """Cards are material for later kills while the game is young; once the own deck is
        empty every card kept is a point for the opponent, unless it is an ace."""
        mine = obs.sides[obs.seat]
        pile = mine.fronts[obs.turn.kill_position].pile
        aces = sum(1 for c in pile if c.rank == ACE)
        if take_pile:
            return 2.0 if aces or mine.deck_size else 0.0
        return 1.0

    def _support_score(self, obs: obpb.OfficersBattleObservation, slot: int) -> float:
        if slot == obpb.OFFICERS_BATTLE_SLOT_OFFICER_DECK:
            return 12.0  # an average officer
        mine = obs.sides[obs.seat]
        stack = mine.retreats[0 if slot == obpb.OFFICERS_BATTLE_SLOT_RETREAT_1 else 1].officers
        return float(stack[-1].rank) if stack else 0.0

    def _pass_score(self, obs: obpb.OfficersBattleObservation) -> float:
        """Passing with an empty deck can end the game: worth it when ahead."""
        me, other = obs.seat, 1 - obs.seat
        ahead = obs.scores[me] > obs.scores[other]
        return 0.5 if ahead and obs.turn.passed_draw else 0.0


def _series_material(hand: list[tuple[int, int]], card: tuple[int, int]) -> bool:
    """A natural card with two more naturals of its suit (or aces) close by."""
    rank, suit = card
    if rank == ACE:
        return True
    near = {r for r, s in hand if s == suit and r != ACE and r != rank and abs(r - rank) <= 3}
    aces = sum(1 for r, _ in hand if r == ACE)
    return len(near) + aces >= 2
