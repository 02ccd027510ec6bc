"""tournaments/match_jobs.py: a tournament's matches on the referee's host. The spec travels to
other processes whole; a job becomes a fixture keyed by the tournament's secret or book; what
the host played becomes the tournament's record."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

from arena_games.base import Result
from arena_games.deals import DealKey
from arena_games.match_settings import MatchSettings, Misbehaviour

from referee.matches.match import Forfeit, MatchOutcome
from tournaments.deal_book import booked
from tournaments.match_jobs import JobHostSpec, record_of
from tournaments.schedule import MatchJob

SECRET = b"s" * 32
BOOK = ("ab" * 32, "cd" * 32)


def spec(secret: bytes = SECRET, book: tuple[str, ...] = ()) -> JobHostSpec:
    return JobHostSpec(
        game="opposing-force",
        options={},
        bots={"a": "example:random", "b": "example:first"},
        settings=MatchSettings(),
        replays="replays",
        logs="logs",
        deal_secret=secret,
        deal_book=book,
    )


def test_a_spec_travels_whole_and_its_repr_shows_no_secret() -> None:
    sent = spec(book=BOOK)
    received = pickle.loads(pickle.dumps(sent))
    assert received == sent and received.key() == sent.key()
    assert SECRET.decode() not in repr(sent) and BOOK[0] not in repr(sent)


def test_hosts_are_shared_only_between_specs_with_the_same_deals() -> None:
    assert spec().key() == spec().key()
    assert spec(secret=b"t" * 32).key() != spec().key()
    assert spec(book=BOOK).key() != spec().key()


def test_a_job_becomes_a_fixture_keyed_by_the_secret_or_the_book() -> None:
    job = MatchJob("m1", 0, "t0-d1", ("a", "b"))
    fixture = spec().fixture(job)
    assert (fixture.match_id, fixture.deal, fixture.bots, fixture.specs) == (
        "m1",
        "t0-d1",
        ("a", "b"),
        (),
    )
    assert fixture.deal_key == DealKey.of(SECRET, "t0-d1")
    from_book = spec(book=BOOK).fixture(dataclasses.replace(job, deal=booked("t0-d1", 1)))
    assert from_book.deal_key.key.hex() == BOOK[1]
    assert SECRET.hex() not in repr(fixture) and BOOK[1] not in repr(from_book)


def test_what_the_host_played_becomes_the_tournaments_record() -> None:
    job = MatchJob("m1", 0, "t0-d1", ("a", "b"), ("example:random", "example:first"))
    outcome = MatchOutcome(
        match_id="m1",
        result=Result(ranks=(1, 0), scores=(0.0, 1.0), reason="no_show"),
        forfeits=[Forfeit(0, Misbehaviour.NO_SHOW, "did not join")],
        replay_path=Path("replays/m1.jsonl"),
        decisions=3,
    )
    record = record_of(job, outcome)
    assert (record.match_id, record.deal, record.bots) == ("m1", "t0-d1", ("a", "b"))
    assert (record.ranks, record.scores, record.reason) == ((1, 0), (0.0, 1.0), "no_show")
    assert record.forfeits == ((0, Misbehaviour.NO_SHOW.value, "did not join"),)
    assert (record.replay, record.decisions, record.substituted) == ("replays/m1.jsonl", 3, (0, 0))
