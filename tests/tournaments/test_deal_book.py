"""A book of deals: the file read strictly, its deals dealt in the order the tournament
schedules its deals (every seating of one deal the same entry), through a resume, with keys
the book gives and commitments only the tournament's secret could make."""

from __future__ import annotations

from pathlib import Path

import pytest
from arena_games.deals import DealKey

from tests.tournaments.test_formats import StrengthExecutor, config, run, strengths
from tournaments.config import TournamentConfig
from tournaments.deal_book import DealBookError, deal_key, entry_of, read_book
from tournaments.schedule import Ledger, scheduler_for
from tournaments.store import Store

KEYS = [DealKey.practice(n).key.hex() for n in range(4)]


def book(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "book.txt"
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def test_a_book_is_keys_with_comments_and_blank_lines(tmp_path: Path) -> None:
    path = book(tmp_path, ["# chosen deals", "", f"  {KEYS[0].upper()}  # a close one", KEYS[1]])
    assert read_book(path) == (KEYS[0], KEYS[1])


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([KEYS[0], "zz" * 32], r"line 2: 'zz.*' is not a deal key \(a key is 64 hex digits"),
        ([KEYS[0][:-2]], "line 1: .* is not a deal key"),
        ([KEYS[0], "# again", KEYS[0]], "line 3: the deal of line 1 again"),
        (["# nothing", ""], "holds no deal key"),
    ],
)
def test_a_bad_book_names_its_line(tmp_path: Path, lines: list[str], message: str) -> None:
    with pytest.raises(DealBookError, match=message):
        read_book(book(tmp_path, lines))


def test_an_unreadable_book_says_so(tmp_path: Path) -> None:
    with pytest.raises(DealBookError, match=r"cannot read the deals file .*missing"):
        read_book(tmp_path / "missing")
    (tmp_path / "binary").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DealBookError, match="cannot read the deals file"):
        read_book(tmp_path / "binary")


def with_book(
    tmp_path: Path, fmt: dict[str, object], bots: int, keys: list[str]
) -> TournamentConfig:
    return config(fmt, bots).model_copy(update={"deals": str(book(tmp_path, keys))})


def test_every_seating_of_a_deal_plays_one_entry_in_schedule_order(tmp_path: Path) -> None:
    cfg = with_book(tmp_path, {"kind": "round-robin", "games_per_pairing": 4}, 3, KEYS)
    jobs = scheduler_for(cfg, b"s" * 32, len(KEYS)).next_jobs(Ledger()) or []
    # Three tables, two deals each, each deal in both seatings: six deals, a book of four.
    assert [entry_of(job.deal) for job in jobs] == [0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1]
    assert jobs[0].deal == "t0-d0@book0" and jobs[8].deal == "t2-d0@book0"
    assert len({job.deal for job in jobs}) == 6  # a deal's name is still its own


def test_a_sequential_format_goes_on_through_the_book_and_a_resume(tmp_path: Path) -> None:
    fmt = {"kind": "sprt", "candidate": "b1", "baseline": "b0", "max_pairs": 5}
    cfg = with_book(tmp_path, fmt, 2, KEYS[:3])
    summary = run(tmp_path / "run", cfg, StrengthExecutor({"b0": 0.0, "b1": 0.0}))
    entries = [entry_of(record.deal) for record in summary.ledger.records()]
    assert entries == [0, 0, 1, 1, 2, 2, 0, 0, 1, 1]
    store = Store.open(tmp_path / "run")
    assert store.deal_book() == tuple(KEYS[:3])
    # The scheduler picks up the count from what is scheduled: pair 5 would play entry 2.
    more = scheduler_for(
        cfg.model_copy(update={"format": cfg.format.model_copy(update={"max_pairs": 6})}),
        b"s" * 32,
        3,
    )
    assert [entry_of(j.deal) for j in more.next_jobs(summary.ledger) or []] == [2, 2]


def test_a_booked_deal_has_the_books_key_and_a_commitment_of_the_secret() -> None:
    book_keys = tuple(KEYS)
    dealt = deal_key(b"a" * 32, book_keys, "t0-d1@book2")
    assert dealt.key.hex() == KEYS[2]
    other = deal_key(b"b" * 32, book_keys, "t0-d1@book2")
    assert other.key == dealt.key and other.commitment != dealt.commitment
    assert deal_key(b"a" * 32, book_keys, "t0-d1") == DealKey.of(b"a" * 32, "t0-d1")
    with pytest.raises(ValueError, match="entry 7 of a book of 4"):
        deal_key(b"a" * 32, book_keys, "t0-d1@book7")


def test_without_a_book_nothing_changes(tmp_path: Path) -> None:
    summary = run(tmp_path, config({"kind": "round-robin"}, 3), StrengthExecutor(strengths(3)))
    assert all(entry_of(record.deal) is None for record in summary.ledger.records())
    assert Store.open(tmp_path).deal_book() == ()
