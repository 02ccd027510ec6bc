"""What a seat sees: the observation message (only what that seat may know) and its text."""

from __future__ import annotations

from collections.abc import Iterable

from arena.v1 import cards_pb2
from arena.v1 import orc_pit_fighting_pb2 as opb

from referee.games import cards
from referee.games.orc_pit_fighting.actions import wire_use
from referee.games.orc_pit_fighting.combat import value_of
from referee.games.orc_pit_fighting.rules import DECISION_CAP, ROUND_TURN_CAP, Play
from referee.games.orc_pit_fighting.table import Combat, Phase, Table


def card_list(items: Iterable[int]) -> list[cards_pb2.Card]:
    return [cards.to_message(c) for c in items]


def observe(
    table: Table, seat: int | None, to_move: tuple[int, ...]
) -> opb.OrcPitFightingObservation:
    obs = opb.OrcPitFightingObservation(
        phase=opb.OrcPitFightingPhase.ValueType(table.phase),
        turn_seat=table.turn_seat,
        deck_size=len(table.deck),
        discard_pile=card_list(table.discard),
        fangs=table.fangs,
        round=table.round,
        round_turns=table.round_turns,
        round_turn_cap=ROUND_TURN_CAP,
        decisions=table.decisions - pending_choices(table),
        decision_cap=DECISION_CAP,
    )
    if len(to_move) == 1 and table.phase != Phase.DRAW_CHOICE:
        obs.actor = to_move[0]
    if table.favorite is not None:
        obs.favorite = table.favorite
    for s in (0, 1):
        obs.seats.append(
            opb.OrcPitFightingSeatState(
                seat=s,
                damage=table.damage[s],
                hand_size=len(table.hands[s]),
                out_pile=card_list(table.out[s]),
                flair_pile=card_list(table.flair[s]),
            )
        )
    if table.pending is not None:
        owner, card, use = table.pending
        obs.pending_play.CopyFrom(
            opb.OrcPitFightingPlayed(seat=owner, card=cards.to_message(card), use=wire_use(use))
        )
    if seat is not None:
        obs.seat = seat
        obs.hand.extend(card_list(table.hands[seat]))
        private_parts(table, seat, obs)
    if table.combat is not None:
        obs.combat.CopyFrom(combat_view(table.combat, seat))
        drawn = table.combat.drawn
        if seat is not None and drawn is not None and table.actor == seat:
            obs.combat.dirty_drawn.CopyFrom(cards.to_message(drawn))
    return obs


def pending_choices(table: Table) -> int:
    """Draw-procedure choices made but not yet turned up: not counted, so that nobody can tell
    whether the other seat has chosen."""
    fight = table.combat
    return 0 if fight is None else sum(1 for x in fight.choices if x is not None)


def private_parts(table: Table, seat: int, obs: opb.OrcPitFightingObservation) -> None:
    """The seat's own cards in passing: the two drawn, the swap card, the Draw choice."""
    if table.two and table.draw_seat == seat:
        obs.drawn.extend(card_list(table.two))
    if table.put_down is not None and table.actor == seat:
        obs.put_down.CopyFrom(cards.to_message(table.put_down))
    fight = table.combat
    if fight is not None and fight.choices[seat] is not None:
        choice = fight.choices[seat]
        assert choice is not None
        obs.face_down_choice.CopyFrom(cards.to_message(choice))


def combat_view(fight: Combat, seat: int | None) -> opb.OrcPitFightingCombat:
    view = opb.OrcPitFightingCombat(
        attacker=fight.attacker, combat_round=fight.combat_round, rolls=fight.rolls
    )
    if fight.defender is not None:
        view.defender = fight.defender
    if fight.reroll is not None:
        view.reroll_bonus.extend(fight.reroll)
    if fight.ace_of_clubs is not None:
        view.ace_of_clubs = fight.ace_of_clubs
    if fight.ace_of_spades is not None:
        view.ace_of_spades = fight.ace_of_spades
    for s in (0, 1):
        view.sides.append(side_view(fight, s, seat))
        reveal = opb.OrcPitFightingReveal(seat=s)
        shown = fight.revealed[s]
        if shown is not None:
            reveal.card.CopyFrom(cards.to_message(shown))
        view.revealed.append(reveal)
    return view


def side_view(fight: Combat, s: int, seat: int | None) -> opb.OrcPitFightingSide:
    side = opb.OrcPitFightingSide(
        seat=s,
        stance=opb.OrcPitFightingStance.ValueType(fight.stance[s]),
        combat_value=value_of(fight, s),
        passed=fight.passed[s],
        hearts=card_list(fight.hearts[s]),
        reinforced=fight.reinforced[s],
        blank_unsubstituted=fight.blank_unsubstituted[s],
        other_cards=card_list(fight.other_cards[s]),
    )
    for play in fight.plays[s]:
        side.plays.append(play_view(play, visible=not play.face_down or seat == s))
    return side


def play_view(play: Play, visible: bool) -> opb.OrcPitFightingPitPlay:
    shown = opb.OrcPitFightingPitPlay(rank=play.rank, value=play.value, face_down=play.face_down)
    if visible:
        shown.cards.extend(card_list(play.cards))
    return shown


# -- text ------------------------------------------------------------------------------------------
def labels(items: Iterable[cards_pb2.Card]) -> str:
    return " ".join(cards.label(cards.from_message(c)) for c in items) or "-"


def render(obs: opb.OrcPitFightingObservation) -> str:
    phase = opb.OrcPitFightingPhase.Name(obs.phase).removeprefix("ORC_PIT_FIGHTING_PHASE_")
    actor = f"seat {obs.actor}" if obs.HasField("actor") else "-"
    lines = [
        f"Orc Pit Fighting  round {obs.round}  {phase.lower()}  to move: {actor}"
        f"  deck {obs.deck_size}",
        f"  discard (top last): {labels(obs.discard_pile)}",
    ]
    for s in obs.seats:
        lines.append(
            f"  seat {s.seat}: damage {s.damage}  hand {s.hand_size}  flair {len(s.flair_pile)}"
            f"  out: {labels(s.out_pile)}"
        )
    if obs.HasField("pending_play"):
        p = obs.pending_play
        lines.append(f"  waiting for the cancel: seat {p.seat} played {labels([p.card])}")
    if obs.HasField("combat"):
        for side in obs.combat.sides:
            plays = " ".join(labels(p.cards) if not p.face_down else "##" for p in side.plays)
            stance = opb.OrcPitFightingStance.Name(side.stance).removeprefix(
                "ORC_PIT_FIGHTING_STANCE_"
            )
            lines.append(
                f"  pit seat {side.seat} ({stance.lower()}): {plays or '-'}"
                f"  value {side.combat_value}"
            )
    if obs.HasField("seat"):
        lines.append(f"  seat {obs.seat} holds: {labels(obs.hand)}")
    return "\n".join(lines)
