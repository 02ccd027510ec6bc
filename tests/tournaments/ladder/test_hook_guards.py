"""The webhooks' guards over a real SQLite ladder and a real HTTP receiver on 127.0.0.1, serve's
delivery thread driven one round at a time: an author's hook at a loopback, private,
link-local or multicast address is refused when set and again at each delivery (control: allowed
with [webhooks] allow_private, and the operator's own is trusted); a first forfeit is told only
once every seating of its deal has ended (control: with the deal's guard off it is told while
another seating still plays); a receiver that never answers is given up after the bounded time,
and a full queue drops its oldest."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.tournaments.ladder.hook_receiver import free_port, receiving
from tournaments.ladder import authors, hook_events, roster
from tournaments.ladder.config_file import Webhooks, load_ladder, write_new_ladder
from tournaments.ladder.database import LadderStore
from tournaments.ladder.hook_settings import hook_of, set_hook
from tournaments.ladder.hook_urls import HookRefused, why_refused
from tournaments.ladder.matchmaker import rate
from tournaments.ladder.notices import OPERATOR, notify
from tournaments.ladder.webhooks import Courier
from tournaments.records import MatchRecord
from tournaments.schedule import MatchJob

pytestmark = pytest.mark.timeout(60)
FAST = Webhooks(timeout_s=2, backoff_s=0.1, backoff_max_s=0.2, give_up_after_s=30)
SPECS = ("example:random", "example:random")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LadderStore]:
    write_new_ladder(tmp_path, "opposing-force", 2, "127.0.0.1:0")
    made = LadderStore.create(tmp_path)
    authors.add_author(made, "alice")
    authors.add_author(made, "bob")
    roster.add_bot(made, "a1", "example:random", author="alice")
    roster.add_bot(made, "b1", "example:random", author="bob")
    yield made
    made.close()


def deliveries(store: LadderStore, owner: str) -> list[tuple[str, str, str]]:
    rows = store.db.execute(
        "SELECT event, state, last_outcome FROM deliveries WHERE owner = ? ORDER BY id", (owner,)
    ).fetchall()
    return [(str(e), str(s), str(o)) for e, s, o in rows]


def hook_directly(store: LadderStore, owner: str, url: str) -> None:
    """A hook as set while its host resolved to a public address (DNS changes later)."""
    with store.write() as db:
        db.execute(
            "INSERT OR REPLACE INTO webhooks VALUES (?, ?, 'a-secret', ?)",
            (owner, url, "2026-01-01T00:00:00+00:00"),
        )


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "10.1.2.3", "192.168.0.1", "169.254.169.254", "::1", "::ffff:127.0.0.1",
     "fe80::1", "224.0.0.1", "0.0.0.0", "100.64.0.1"],
)  # fmt: skip
def test_addresses_only_the_ladders_host_reaches_are_refused(address: str) -> None:
    assert why_refused(address) is not None


def test_control_a_public_address_is_allowed() -> None:
    assert why_refused("93.184.216.34") is None and why_refused("2606:2800:220:1::1") is None


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:9/", "http://localhost:9/x", "http://[::1]:9/", "http://0x7f000001/",
     "http://169.254.169.254/latest/meta-data/"],
)  # fmt: skip
def test_an_authors_hook_at_a_private_host_is_refused_when_set(
    store: LadderStore, url: str
) -> None:
    with pytest.raises(HookRefused, match="address: a webhook must reach a public one"):
        set_hook(store, "alice", url, allow_private=False, who="author alice")
    assert hook_of(store, "alice") is None


@pytest.mark.parametrize(
    "url", ["ftp://example.org/", "file:///etc/passwd", "http://u:p@example.org/", "http:///x"]
)
def test_a_hook_that_is_not_plain_http_is_refused_for_the_operator_too(
    store: LadderStore, url: str
) -> None:
    with pytest.raises(HookRefused, match="webhook URL"):
        set_hook(store, OPERATOR, url, allow_private=True, who="operator")


def test_control_allowed_with_allow_private_and_for_the_operator(store: LadderStore) -> None:
    secret = set_hook(store, "alice", "http://127.0.0.1:9/", allow_private=True, who="a")
    again = set_hook(store, OPERATOR, "http://127.0.0.1:9/", allow_private=False, who="operator")
    assert len(secret) >= 40 and secret != again  # a fresh random secret each time
    hook = hook_of(store, "alice")
    assert hook is not None and secret not in hook.model_dump_json()


def test_each_delivery_checks_the_host_again(store: LadderStore) -> None:
    with receiving() as receiver:
        hook_directly(store, "alice", receiver.url)
        roster.set_status(store, "a1", "paused", "by the operator", who="operator")
        Courier(FAST, store.path.parent).round(store, settle=True)
        assert receiver.events() == []  # refused: 127.0.0.1 is loopback
        [(event, state, outcome)] = deliveries(store, "alice")
        assert (event, state, outcome) == (
            "bot paused", "pending", "refused: resolves to a loopback address"
        )  # fmt: skip
        time.sleep(0.3)  # its backoff
        Courier(FAST.model_copy(update={"allow_private": True}), store.path.parent).round(
            store, settle=True
        )
        assert receiver.events() == ["bot paused"]  # control: allowed, it arrives
        assert deliveries(store, "alice")[0][1] == "delivered"


def two_seatings(store: LadderStore) -> None:
    seats = ("a1@1", "b1@1")
    jobs = [
        MatchJob("t0-g0", 0, "t0-d", seats, SPECS),
        MatchJob("t0-g1", 0, "t0-d", seats[::-1], SPECS),
    ]
    store.schedule(0, jobs)


def crashed(match_id: str, seats: tuple[str, ...], seat: int) -> MatchRecord:
    forfeit = ((seat, "crash", "its process ended: it held the 7 of hearts"),)
    ranks = tuple(1 if s == seat else 0 for s in range(len(seats)))
    return MatchRecord(match_id, "t0-d", seats, ranks, (0.0, 0.0), "forfeit", forfeit)


def test_a_first_forfeit_is_told_once_every_seating_of_its_deal_ended(store: LadderStore) -> None:
    hook_directly(store, OPERATOR, "http://127.0.0.1:9/")
    two_seatings(store)
    store.finish(crashed("t0-g0", ("a1@1", "b1@1"), 0), "w", 0.1, rate)
    assert deliveries(store, OPERATOR) == []  # the other seating still plays the deal
    store.finish(crashed("t0-g1", ("b1@1", "a1@1"), 1), "w", 0.1, rate)
    rows = store.db.execute("SELECT body FROM deliveries").fetchall()
    assert len(rows) == 1, rows  # a1's first forfeit, once: its second is not a first
    assert '"cause": "crash"' in rows[0][0] and "hearts" not in rows[0][0]  # no detail
    assert '"match_id": "t0-g0"' in rows[0][0]


def test_control_without_the_deals_guard_it_is_told_mid_deal(
    store: LadderStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook_directly(store, OPERATOR, "http://127.0.0.1:9/")
    two_seatings(store)
    monkeypatch.setattr(LadderStore, "_in_play", lambda self, deal: False)
    store.finish(crashed("t0-g0", ("a1@1", "b1@1"), 0), "w", 0.1, rate)
    assert [e for e, _, _ in deliveries(store, OPERATOR)] == ["first forfeit"]


def test_a_receiver_that_never_answers_is_given_up_after_the_bounded_time(
    store: LadderStore,
) -> None:
    hook_directly(store, OPERATOR, f"http://127.0.0.1:{free_port()}/")
    roster.set_status(store, "a1", "paused", "by the operator", who="operator")
    courier = Courier(FAST.model_copy(update={"give_up_after_s": 3.0}), store.path.parent)
    deadline = time.monotonic() + 20
    while deliveries(store, OPERATOR)[0][1] == "pending":
        assert time.monotonic() < deadline, deliveries(store, OPERATOR)
        courier.round(store, settle=True)
        time.sleep(0.1)
    [(_, state, outcome)] = deliveries(store, OPERATOR)
    assert (state, outcome) == ("gave-up", "connection refused")
    (attempts,) = store.db.execute("SELECT attempts FROM deliveries").fetchone()
    assert attempts >= 2  # tried again, with backoff, before giving up (3 s at 0.1-0.2 s)


def test_a_full_queue_drops_its_oldest(store: LadderStore) -> None:
    hook_directly(store, OPERATOR, f"http://127.0.0.1:{free_port()}/")
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    with store.write() as db:
        for n in range(5):
            hook_events.bot_paused(db, "a1", "operator", f"pause {n}")
        db.execute("UPDATE deliveries SET next_at = ?", (later,))  # none due: only bounded
    Courier(FAST.model_copy(update={"queue_per_owner": 3}), store.path.parent).round(
        store, settle=True
    )
    states = [s for _, s, _ in deliveries(store, OPERATOR)]
    assert states == ["gave-up", "gave-up", "pending", "pending", "pending"]


def test_init_writes_webhooks_at_their_defaults_and_the_operator_may_change_them(
    tmp_path: Path,
) -> None:
    config = write_new_ladder(tmp_path, "opposing-force", 2, "127.0.0.1:0")
    text = (tmp_path / "ladder.toml").read_text()
    assert "\n[webhooks]" in text and "# allow_private = false" in text
    assert config.webhooks == Webhooks()
    (tmp_path / "ladder.toml").write_text(
        text.replace("# allow_private = false", "allow_private = true")
    )
    assert load_ladder(tmp_path).webhooks.allow_private


@contextmanager
def silent_receiver() -> Iterator[str]:
    """A receiver that takes the connection and never answers: each POST waits its timeout."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"


def first_arrival(store: LadderStore, workers: int) -> float:
    """Seconds until the operator's event arrives, queued after one of alice's whose receiver
    never answers."""
    settings = FAST.model_copy(update={"timeout_s": 3, "allow_private": True})
    courier = Courier(settings, store.path.parent, workers)
    try:
        with silent_receiver() as silent, receiving() as operators:
            hook_directly(store, "alice", silent)
            hook_directly(store, OPERATOR, operators.url)
            with store.write() as db:  # alice's first in the queue
                notify(db, "bot paused", "alice", {"bot": "a1"}, operator=False)
                notify(db, "bot paused", None, {"bot": "b1"})
            began = time.monotonic()
            courier.round(store)
            operators.wait_for("the operator's event", ["bot paused"], wait_s=20)
            return time.monotonic() - began
    finally:
        courier.stop()


def test_a_receiver_that_never_answers_delays_no_other_owners_events(store: LadderStore) -> None:
    assert first_arrival(store, workers=4) < 2.0  # alice's waits out its 3 s alone


def test_control_one_worker_the_silent_receiver_holds_up_the_operators(store: LadderStore) -> None:
    assert first_arrival(store, workers=1) >= 2.9


def test_a_revoked_author_hears_nothing_more(store: LadderStore) -> None:
    set_hook(store, "alice", "http://127.0.0.1:9/x", allow_private=True, who="author alice")
    set_hook(store, "bob", "http://127.0.0.1:9/y", allow_private=True, who="author bob")
    with store.write() as db:
        notify(db, "bot paused", "alice", {"bot": "a1"})
        notify(db, "bot paused", "bob", {"bot": "b1"})
    authors.revoke(store, "alice", "cheated")
    assert hook_of(store, "alice") is None
    assert deliveries(store, "alice") == [("bot paused", "gave-up", "the author was revoked")]
    with store.write() as db:
        notify(db, "bot paused", "alice", {"bot": "a1"})
    assert len(deliveries(store, "alice")) == 1  # nothing more queued for her
    # The control: bob, not revoked, keeps his hook and his pending delivery.
    assert hook_of(store, "bob") is not None
    assert deliveries(store, "bob") == [("bot paused", "pending", "")]
