"""Re-simulating a replay: from the deal's key and the decisions, every chance outcome, event
and the result must come out the same, and the key must be the one MatchStart committed to. The
first difference is reported with its line."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path

from arena_games import get_game
from arena_games import replay_file as replay
from arena_games.base import Event, GameError, GameOptions, GameState, Result
from arena_games.deals import DealKey, KeyedRandom
from arena_games.match_settings import Misbehaviour
from arena_games.playout import sample_chance
from pydantic import BaseModel

from referee.matches.match import Forfeit, event_record, forfeit_result


class Divergence(Exception):
    """Where the re-simulation and the file disagree."""


@dataclass
class Replayed:
    """A replay re-simulated up to some line: the state then and the records read."""

    header: replay.Header
    state: GameState[GameOptions]
    records: list[BaseModel]


def verify(path: Path, commitment: str | None = None) -> Replayed:
    """Re-simulate the whole file; raises replay.ReplayError or Divergence. With commitment
    (what a seat's MatchStart carried), the file's key must be the one committed to."""
    numbered = replay.numbered(path)
    header = numbered[0][1]
    assert isinstance(header, replay.Header)
    replay.check_rules(path, header)
    try:
        rng = _committed_chance(header, commitment)
        return _resimulate(header, numbered, rng)
    except GameError as exc:
        raise Divergence(f"{path}: {exc}") from None
    except Divergence as exc:
        raise Divergence(f"{path}:{exc}") from None


def _committed_chance(header: replay.Header, commitment: str | None) -> KeyedRandom:
    """The deal's generator, once the key is shown to be the one committed to."""
    try:
        deal = DealKey.from_hex(header.deal_key, header.deal_salt)
    except ValueError:
        raise Divergence("1: the deal key or salt is not hex") from None
    if deal.commitment != header.deal_commitment:
        raise Divergence(
            f"1: the deal key does not match its commitment {header.deal_commitment}: "
            f"SHA-256(salt || key) is {deal.commitment}"
        )
    if commitment is not None and commitment.strip().lower() != deal.commitment:
        raise Divergence(
            f"1: the seats were sent commitment {commitment.strip().lower()}, the file's key "
            f"has {deal.commitment}"
        )
    return deal.chance()


def _resimulate(
    header: replay.Header, numbered: list[tuple[int, BaseModel]], rng: KeyedRandom
) -> Replayed:
    state = get_game(header.game).new_state(header.options, len(header.seats))
    pending: deque[replay.EventRecord] = deque()
    forfeits: list[Forfeit] = []
    result: replay.ResultRecord | None = None
    for line, record in numbered[1:]:
        if not isinstance(record, replay.EventRecord) and pending:
            raise Divergence(
                f"{line}: the re-simulation gives an event the file lacks: {pending[0].text!r}"
            )
        if isinstance(record, replay.ChanceRecord):
            _chance(state, rng, record, line, header.match_id, pending)
        elif isinstance(record, replay.DecisionRecord):
            _decision(state, record, line, header.match_id, pending)
        elif isinstance(record, replay.EventRecord):
            _event(record, line, pending)
        elif isinstance(record, replay.ForfeitRecord):
            forfeits.append(Forfeit(record.seat, Misbehaviour(record.cause), record.detail))
        elif isinstance(record, replay.ResultRecord):
            result = record
    if pending:
        raise Divergence(f"end: the re-simulation gives events the file lacks: {pending[0].text!r}")
    if result is None:
        raise Divergence("end: the file has no result")
    expected = forfeit_result(len(header.seats), forfeits) if forfeits else _final(state)
    if list(expected.ranks) != result.ranks or expected.reason != result.reason:
        raise Divergence(
            f"end: result {result.ranks} ({result.reason}); the re-simulation gives "
            f"{list(expected.ranks)} ({expected.reason})"
        )
    return Replayed(header, state, [record for _, record in numbered])


def _final(state: GameState[GameOptions]) -> Result:
    if not state.is_over():
        raise Divergence("end: the game is not over after the last decision, and nobody forfeited")
    return state.result()


def _chance(
    state: GameState[GameOptions],
    rng: KeyedRandom,
    record: replay.ChanceRecord,
    line: int,
    match_id: str,
    pending: deque[replay.EventRecord],
) -> None:
    if not state.is_chance():
        raise Divergence(f"{line}: a chance outcome where the game expects a decision")
    expected = sample_chance(state.chance_outcomes(), rng)
    if expected != record.outcome:
        raise Divergence(f"{line}: chance outcome {record.outcome}, the key gives {expected}")
    _queue(state.apply_chance(record.outcome), match_id, pending)


def _decision(
    state: GameState[GameOptions],
    record: replay.DecisionRecord,
    line: int,
    match_id: str,
    pending: deque[replay.EventRecord],
) -> None:
    try:
        events = state.apply(record.seat, record.action)
    except GameError as exc:
        raise Divergence(
            f"{line}: seat {record.seat}'s {record.label!r} is not legal: {exc}"
        ) from None
    label = state.action_label(record.action)
    if label != record.label:
        raise Divergence(
            f"{line}: action {record.action} is {label!r}, the file says {record.label!r}"
        )
    _queue(events, match_id, pending)


def _queue(events: list[Event], match_id: str, pending: deque[replay.EventRecord]) -> None:
    for event in events:
        event.message.match_id = match_id
        pending.append(event_record(event))


def _event(record: replay.EventRecord, line: int, pending: deque[replay.EventRecord]) -> None:
    if not pending:
        raise Divergence(f"{line}: event {record.text!r} that the re-simulation does not give")
    expected = pending.popleft()
    if expected != record:
        raise Divergence(
            f"{line}: event {record.text!r}, the re-simulation gives {expected.text!r}"
            f"{'' if expected.text != record.text else ' with other details'}"
        )
