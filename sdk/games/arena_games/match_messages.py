"""Building the wire messages that are not a game's own: match starts and results."""

from __future__ import annotations

from collections.abc import Sequence

from arena.v1 import referee_pb2 as pb
from google.protobuf import struct_pb2

from arena_games.base import GameDefinition, GameOptions, Result


def options_struct(options: GameOptions) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(options.model_dump(mode="json"))
    return struct


def match_start_message(
    game: GameDefinition[GameOptions],
    options: GameOptions,
    seat: int,
    seat_names: Sequence[str],
    match_id: str,
    time_control: pb.TimeControl | None = None,
) -> pb.MatchStart:
    return pb.MatchStart(
        match_id=match_id,
        game=game.name,
        seat=seat,
        num_seats=len(seat_names),
        options=options_struct(options),
        time_control=time_control,
        seat_names=list(seat_names),
        rules_version=game.rules_version,
    )


def result_message(
    result: Result, forfeits: dict[int, tuple[str, str]] | None = None
) -> pb.MatchResult:
    """The wire form of a result; forfeits maps a seat to its (cause, detail)."""
    forfeits = forfeits or {}
    seats = []
    for seat, (rank, score) in enumerate(zip(result.ranks, result.scores, strict=True)):
        cause, detail = forfeits.get(seat, ("", ""))
        seats.append(
            pb.SeatResult(
                seat=seat, rank=rank, score=score, forfeit_cause=cause, forfeit_detail=detail
            )
        )
    return pb.MatchResult(seats=seats, reason=result.reason)
