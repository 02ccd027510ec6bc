"""Tests arena_games.orc_pit_fighting.view.render: the text board (`arena replay show`, any
text view of a position) shows each viewpoint what the rules page says it sees, and nothing
more. The Flair piles and the Pit's cards are public; a Blank in the Pit is its owner's alone;
a referee's board is each seat's. The control: a board with the Flair and Pit lines left out, as
it was, fails the same check."""

from __future__ import annotations

import pytest
from arena.v1 import orc_pit_fighting_pb2 as opb
from arena_games import cards
from arena_games.orc_pit_fighting import view

from tests.games.invariants import game_rngs, play_one
from tests.games.orc_pit_fighting.scenario import GAME, AnyState, Game, of
from tests.games.orc_pit_fighting.test_determinism_and_information import hidden_from

VIEWPOINTS = (0, 1, None)


def blank_in_the_pit() -> Game:
    """Seat 1 has a Flair pile (3h) and is attacked with 9c; it plays the 4d face down, as
    Blank."""
    game = Game("Qd 5h 9c 8c 7c", "2h 3h 4d 6d Kh")
    game.acts("swap Qd", "decline", "put down 5h")
    game.chance("2h")
    game.acts("flair 3h", "decline", "attack 9c", "decline", "blank 4d")
    return game


def pit_line(board: str, seat: int) -> str:
    return next(line for line in board.splitlines() if line.startswith(f"  pit seat {seat} "))


def test_each_viewpoint_sees_the_flair_and_the_pit_and_the_blank_is_its_owners() -> None:
    game = blank_in_the_pit()
    boards = {seat: game.state.render(seat) for seat in VIEWPOINTS}
    for board in boards.values():
        assert "seat 1: damage 0  hand 3  flair 1: 3h  out: -" in board, board
        assert pit_line(board, 0) == "  pit seat 0 (attack): 9c  value 9", board
    assert pit_line(boards[1], 1) == "  pit seat 1 (blank): blank 4d  value -1"
    for seat in (0, None):  # the other seat and the spectators: a face-down card
        assert pit_line(boards[seat], 1) == "  pit seat 1 (blank): ##  value -1"
        assert "4d" not in boards[seat].split()
    # The referee's board (replays/walk.py) is each seat's in turn: the Blank is named there.
    referee = "\n".join(game.state.render(seat) for seat in range(2))
    assert "blank 4d" in referee


def shown_public_cards(obs: opb.OrcPitFightingObservation) -> set[str]:
    """The labels of the Flair piles' and the Pit's face-up cards the observation holds."""
    found = [c for s in obs.seats for c in s.flair_pile]
    if obs.HasField("combat"):
        for side in obs.combat.sides:
            found += [*side.hearts, *side.other_cards]
            found += [c for p in side.plays if not p.face_down for c in p.cards]
    return {cards.label(cards.from_message(c)) for c in found}


def check_boards(state: AnyState) -> tuple[int, int]:
    """Each viewpoint's board holds every Flair and Pit card of its observation, and no card it
    may not know (the deck, the other's hand and Blank, ...). (boards with such cards, checks)"""
    with_cards = 0
    for seat in VIEWPOINTS:
        words = set(state.render(seat).split())
        wanted = shown_public_cards(state.observation(seat).orc_pit_fighting)
        assert wanted <= words, f"seat {seat} misses {wanted - words}:\n{state.render(seat)}"
        hidden = {cards.label(h) for h in hidden_from(of(state).table, seat)}
        assert not words & hidden, f"seat {seat} is shown {words & hidden}"
        with_cards += bool(wanted)
    return with_cards, len(VIEWPOINTS)


def played_boards() -> tuple[int, int]:
    totals = [0, 0]

    def after_step(state: AnyState, _: object) -> None:
        for at, count in enumerate(check_boards(state)):
            totals[at] += count

    for index in range(3):
        play_one(GAME, *game_rngs(23, index), after_step=after_step)
    return totals[0], totals[1]


def test_every_board_of_played_games_shows_the_flair_and_pit_cards_and_no_secret() -> None:
    with_cards, checked = played_boards()
    assert checked > 300 and with_cards > 100, (with_cards, checked)


def test_control_a_board_without_the_flair_and_pit_cards_fails_the_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(view, "combat_lines", lambda combat: [])
    monkeypatch.setattr(view, "labels", lambda items: "-")  # the Flair piles' cards too
    with pytest.raises(AssertionError, match="misses"):
        played_boards()
