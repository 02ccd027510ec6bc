"""Orc Pit Fighting against its rules (docs/games/orc-pit-fighting.md): random playouts keep the
generic invariants: every card accounted for once at every step, damage within 0..5."""

from __future__ import annotations

from collections import Counter

from arena_games.base import CHANCE
from arena_games.orc_pit_fighting.actions import PLAIN_LABELS, Use, decode
from arena_games.orc_pit_fighting.table import Phase, Table

from tests.games.invariants import random_playouts
from tests.games.orc_pit_fighting.scenario import GAME, AnyState, of


def conserved(table: Table) -> bool:
    return sorted(table.all_cards()) == list(range(52))


class PlayoutChecks:
    """After every step: every card once, damage within 0..5, the decision count; and tallies
    of what the games went through."""

    def __init__(self) -> None:
        self.phases: Counter[str] = Counter()
        self.uses: Counter[str] = Counter()
        self.ends: Counter[str] = Counter()
        self.decisions = 0

    def __call__(self, generic: AnyState) -> None:
        state = of(generic)
        table = state.table
        assert conserved(table), f"cards not conserved at step {len(state.history)}"
        assert all(0 <= d <= 5 for d in table.damage), table.damage
        assert table.deck == sorted(table.deck), "the deck is an unordered pile, kept sorted"
        last = state.history[-1]
        if len(state.history) == 1:
            self.decisions = 0
        self.decisions += last.seat != CHANCE
        assert table.decisions == self.decisions
        self.phases[table.phase.name] += 1
        if last.seat != CHANCE:
            use, _ = decode(last.action)
            self.uses[PLAIN_LABELS[last.action] if use is None else use.name] += 1
        if state.is_over():
            reason = state.result().reason
            self.ends["knocked out" if "knocked out" in reason else reason] += 1
            assert (max(table.damage) == 5) == (table.winner is not None)


def test_random_playouts_keep_every_invariant() -> None:
    """300 seeded random games: every card accounted for exactly once and damage within 0..5
    after every step, the generic invariants (thorough in the first 30 games), and every
    phase and every kind of decision reached."""
    checks = PlayoutChecks()
    finals = random_playouts(GAME, 300, seed=1, per_step=checks, thorough_games=30)
    assert len(finals) == 300
    assert all(of(f).table.phase == Phase.OVER for f in finals)
    missing_phases = {p.name for p in Phase} - set(checks.phases)
    assert not missing_phases, missing_phases
    missing_uses = ({u.name for u in Use} | set(PLAIN_LABELS.values())) - set(checks.uses)
    assert not missing_uses, missing_uses
    assert checks.ends["knocked out"] == 300
