"""A match's replay, the reason it ended, its ranks and forfeits, stay off the page until every
seating of its deal has finished: the other seating replays the same cards. The state is built
with the tournament's own store, one finished seating of a deal and the other in flight, then
the other finishes while the server runs."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from tests.tournaments.web.harness import get, get_json, web_server
from tournaments.read_models.tournament_reads import HELD_DEAL, HELD_PLAYING
from tournaments.store import Store

DEAL = ("t1-g0", "t1-g1")  # strategy and cheat, seats swapped, one deal


def test_a_replay_opens_only_once_its_deal_is_played_out(tournament: Path, tmp_path: Path) -> None:
    played = Store.open(tournament, read_only=True)
    config, ledger = played.config(), played.ledger()
    played.close()
    folder = tmp_path / "in-play"
    store = Store.create(folder, config)
    (folder / "replays").mkdir()
    store.schedule(ledger.scheduled[match_id] for match_id in DEAL)
    records = {}
    for match_id in DEAL:
        record = ledger.finished[match_id]
        assert record.replay is not None
        copied = shutil.copy(record.replay, folder / "replays")
        records[match_id] = replace(record, replay=str(copied))
    store.finish(records["t1-g0"], "test", 1.0)

    with web_server(folder) as url:
        _, first = get_json(f"{url}/api/matches/t1-g0")
        assert (first["status"], first["held"], first["viewer"]) == ("finished", HELD_DEAL, None)
        assert first["reason"] is None and [s["rank"] for s in first["seats"]] == [None, None]
        assert first["forfeits"] == [] and first["decisions"] is None
        winner = records["t1-g0"].bots[records["t1-g0"].ranks.index(0)]
        _, won = get_json(f"{url}/api/matches?bot={winner}&result=win")
        assert "t1-g0" not in [m["match_id"] for m in won["matches"]]  # no oracle either
        _, second = get_json(f"{url}/api/matches/t1-g1")
        assert (second["status"], second["held"]) == ("playing", HELD_PLAYING)
        for match_id, why in (("t1-g0", HELD_DEAL), ("t1-g1", HELD_PLAYING)):
            status, refused = get_json(f"{url}/api/matches/{match_id}/replay")
            assert (status, refused) == (409, {"error": f"match {match_id}: {why}"})
            status, _, body = get(f"{url}/matches/{match_id}")
            assert status == 409 and "is still" in body
        _, _, shown = get(f"{url}/")
        assert "held back: deal in play" in shown and 'href="/matches/t1-g0"' not in shown
        _, standings = get_json(f"{url}/api/standings")
        assert standings["finished"] == 0  # nor do the standings move with a deal in play
        assert all(row["games"] == 0 for row in standings["standings"]), standings

        store.finish(records["t1-g1"], "test", 1.0)
        for match_id in DEAL:
            _, now = get_json(f"{url}/api/matches/{match_id}")
            assert now["held"] is None and now["viewer"] == f"/matches/{match_id}"
            assert now["reason"] == records[match_id].reason
            assert [s["rank"] for s in now["seats"]] == list(records[match_id].ranks)
            status, _, body = get(f"{url}/matches/{match_id}")
            assert status == 200 and "shown as public" in body
        _, won = get_json(f"{url}/api/matches?bot={winner}&result=win")
        assert "t1-g0" in [m["match_id"] for m in won["matches"]]  # the control
        _, standings = get_json(f"{url}/api/standings")
        assert standings["finished"] == 2 and sum(r["games"] for r in standings["standings"]) == 4
    store.close()
