"""An author's W-D-L and match list over a real SQLite state of a three-seat ladder: against each
opponent apart, a better rank a win, an equal one a draw; only over deals that have ended (the
control: the same matches counted once their deal's last seating is in); their own bots only,
not a team mate's; another author's matches are not listed and are refused as ones that do not
exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from tournaments.ladder import authors, roster, uploads
from tournaments.ladder.config_file import write_new_ladder
from tournaments.ladder.database import LadderStore
from tournaments.ladder.matchmaker import rate
from tournaments.read_models.author_reads import AuthorReads
from tournaments.read_models.ladder_reads import HELD_DEAL, AccessDenied, LadderApi, NoSuchMatch
from tournaments.records import MatchRecord
from tournaments.schedule import MatchJob

SPEC = ("example:random",) * 3


def finish(
    store: LadderStore, match_id: str, bots: tuple[str, ...], ranks: tuple[int, ...]
) -> None:
    deal = match_id.split("-")[0] + "-d"
    record = MatchRecord(match_id, deal, bots, ranks, (0.0,) * len(bots), "r", ())
    store.finish(record, "w", 0.1, rate)


@pytest.mark.timeout(30)
def test_w_d_l_against_each_opponent_over_ended_deals_only(tmp_path: Path) -> None:
    write_new_ladder(tmp_path, "capture-the-commander", 3, "127.0.0.1:0")
    store = LadderStore.create(tmp_path)
    ann = authors.add_author(store, "ann", "red")
    authors.add_author(store, "amy", "red")  # ann's team mate
    ben = authors.add_author(store, "ben")
    for name, who in (("a1", "ann"), ("m1", "amy"), ("b1", "ben"), ("h1", "house")):
        roster.add_bot(store, name, "example:random", author=who, bots_per_author=2)
    seats = ("a1@1", "b1@1", "h1@1")
    # Deal t0: two seatings; the first finishes while the second is still to play.
    store.schedule(
        0,
        [
            MatchJob("t0-g0", 0, "t0-d", seats, SPEC),
            MatchJob("t0-g1", 0, "t0-d", seats[::-1], SPEC),
        ],
    )
    finish(store, "t0-g0", seats, (0, 1, 1))  # a1 first, b1 and h1 share second
    reads = AuthorReads(LadderApi(tmp_path))
    me = reads.me(ann)
    assert me.record == []  # the deal is in play: nothing of it counts yet
    [listed] = reads.matches(ann).matches
    assert listed.held == HELD_DEAL and listed.reason is None and listed.mine == [0]
    assert all(s.rank is None for s in listed.seats)
    finish(store, "t0-g1", seats[::-1], (0, 1, 2))  # h1 first, b1 second, a1 third
    # The mate's match: not ann's.
    store.schedule(1, [MatchJob("t1-g0", 0, "t1-d", ("m1@1", "b1@1", "h1@1"), SPEC)])
    finish(store, "t1-g0", ("m1@1", "b1@1", "h1@1"), (0, 1, 2))
    me = reads.me(ann)
    assert {(r.opponent, r.opponent_author, r.wins, r.draws, r.losses) for r in me.record} == {
        ("b1", "ben", 1, 0, 1),
        ("h1", "house", 1, 0, 1),
    }
    assert [b.name for b in me.bots] == ["a1"] and me.bots[0].versions[0].status == "live"
    mine = reads.matches(ann)
    assert (mine.total, [m.match_id for m in mine.matches]) == (2, ["t0-g1", "t0-g0"])
    assert mine.matches[0].mine == [2] and mine.matches[0].seats[2].rank == 2
    assert [m.match_id for m in reads.matches(ann, limit=1, offset=1).matches] == ["t0-g0"]
    # ben's: the mirror of ann's against a1, and t1-g0, his and not ann's.
    assert {(r.opponent, r.wins, r.draws, r.losses) for r in reads.me(ben).record} == {
        ("a1", 1, 0, 1),
        ("m1", 0, 0, 1),
        ("h1", 1, 1, 1),  # a shared second place is a draw
    }
    with pytest.raises(NoSuchMatch) as refused:
        reads.output(ann, "t1-g0")
    with pytest.raises(NoSuchMatch) as nothing:
        reads.output(ann, "t9-g0")
    assert str(refused.value) == str(nothing.value).replace("t9-g0", "t1-g0")
    assert reads.output(ben, "t1-g0").seats[0].version == "b1@1"  # the control: ben's
    with pytest.raises(AccessDenied):
        reads.me("not-" + ann)


@pytest.mark.timeout(30)
def test_an_author_sees_every_version_of_theirs_building_or_failed_and_no_public_list_does(
    tmp_path: Path,
) -> None:
    """What the ladder lists (roster, the public pages) holds live versions only; the author's
    own view holds each upload from the moment it is taken, with its status and reason."""
    write_new_ladder(tmp_path, "opposing-force", 2, "127.0.0.1:0")
    store = LadderStore.create(tmp_path)
    ann = authors.add_author(store, "ann")
    authors.add_author(store, "ben")
    first = uploads.record_upload(store, "ann", "up", "a" * 64, "bot.py", 1)
    reads = AuthorReads(LadderApi(tmp_path))
    [bot] = reads.me(ann).bots
    assert [(v.version, v.status, v.current) for v in bot.versions] == [(first, "building", False)]
    assert roster.bots(store) == []  # no public list shows a bot with no live version
    uploads.set_status(store, first, "failed", "the check found: it chose an illegal action")
    [bot] = reads.me(ann).bots
    assert [(v.status, v.reason) for v in bot.versions] == [
        ("failed", "the check found: it chose an illegal action")
    ]
    second = uploads.record_upload(store, "ann", "up", "b" * 64, "bot.py", 1)
    uploads.go_live(store, second, "bot.py", "")
    [bot] = reads.me(ann).bots
    assert [(v.version, v.status, v.current) for v in bot.versions] == [
        (first, "failed", False),
        (second, "live", True),
    ]
    assert [b.name for b in roster.bots(store)] == ["up"]
    store.close()
