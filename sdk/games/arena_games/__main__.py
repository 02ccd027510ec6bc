"""Step a game by hand in a terminal: `python -m arena_games GAME [--seats N] [--seed S]`.

Every seat is played from the same keyboard. Before each decision the table is shown as the
seat to move sees it (or as every seat sees it with --open), then its legal actions; answer with
an action's index or its label. `q` or end of input stops.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator

from arena_games import GAMES
from arena_games.base import GameError
from arena_games.local_play import LocalMatch


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        match = LocalMatch(args.game, args.seats, args.seed)
    except (GameError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    answers = _lines()
    while not match.is_over():
        seat = match.to_move()[0]
        print(_table(match, seat, args.open))
        for action in match.legal(seat):
            print(f"  {action.index:3d}  {action.label}")
        if not _decide(match, seat, answers):
            return 0
    print(match.board(None))
    result = match.result()
    print(f"result: ranks {list(result.ranks)}, scores {list(result.scores)} - {result.reason}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m arena_games", description=__doc__)
    parser.add_argument("game", help=f"one of: {', '.join(GAMES)}")
    parser.add_argument("--seats", type=int, default=2, help="how many seats (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="the practice seed of the deal")
    parser.add_argument("--open", action="store_true", help="show every seat's view, not one")
    return parser


def _table(match: LocalMatch, seat: int, open_table: bool) -> str:
    seats = range(match.state.num_seats) if open_table else [seat]
    views = "\n".join(match.board(s) for s in seats)
    return f"\n{views}\nseat {seat} to move:"


def _decide(match: LocalMatch, seat: int, answers: Iterator[str]) -> bool:
    """Play the seat's answer; False when the player stops."""
    for answer in answers:
        if answer in ("q", "quit"):
            return False
        try:
            match.play(int(answer) if answer.isdigit() else answer, seat)
            return True
        except GameError as exc:
            print(f"{exc}; answer with an index or a label (q stops)")
    return False


def _lines() -> Iterator[str]:
    while True:
        try:
            line = input("> ").strip()
        except EOFError:
            return
        if line:
            yield line


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
