"""`arena tournament export DIR -o SITE`: a tournament as a static site that opens from disk or
any web host, with no server and no network: index.html (the standings, the bracket when there
is one, every match), a replay viewer page per match (the spectators' view, self-contained as
`arena replay html` makes it) and the JSON beside them (tournament.json, standings.json,
matches.json, matches/ID.json: each match's public replay model).

What it shows is what the tournament's web server shows the public, read through the same read
model (tournament_reads.py): a match whose deal still has a seating to play is held back as the
server holds it, its result and replay left out; nothing is re-derived here. Pages embed their
data (a browser will not fetch() from file://) and link to each other by relative paths.

The site is written to a folder beside SITE and then put in its place, so a site is never half
written; --force replaces an earlier export (a folder holding arena-site.json), never any other
folder.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arena_games.base import GameError
from arena_games.replay_file import ReplayError
from pydantic import BaseModel

from referee.replays.viewer import model, page
from tournaments.contest import Release
from tournaments.read_models.tournament_models import MatchList, MatchQuery, MatchSummary
from tournaments.read_models.tournament_reads import Held, NotFound, Snapshot, TournamentFolder
from tournaments.web import pages

MARK = "arena-site.json"
PUBLIC = "public"
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_PAGE = 1000  # the read model's largest page of matches


class ExportError(Exception):
    """Why the site was not written, in one line."""


@dataclass(frozen=True)
class Exported:
    index: Path
    matches: int
    replays: int
    held: int
    still_running: bool
    state: str


def export_site(folder: TournamentFolder, site: Path, force: bool = False) -> Exported:
    """Write folder's tournament as a static site at site (see the module's docstring)."""
    _check_place(site, force)
    release = folder.terms().release
    if release is not Release.PUBLIC:
        # A site is the public's once it is on a web host: it holds only what all may see.
        raise ExportError(
            f"the results are {release.value}: a site shows them to everyone; "
            f"`arena tournament release DIR --to public` first"
        )
    snap = folder.snapshot()
    info = folder.info([PUBLIC], release, snap)
    standings = folder.standings(snap)
    summaries = _all_matches(folder, snap)
    still_running = info.progress.state != "finished"
    site.parent.mkdir(parents=True, exist_ok=True)
    staging = _beside(site, "new")
    try:
        (staging / "matches").mkdir()
        shown = [_write_match(folder, snap, summary, staging / "matches") for summary in summaries]
        listed = MatchList(total=len(shown), offset=0, limit=max(len(shown), 1), matches=shown)
        exported_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        index = pages.exported_page(info, standings, listed, exported_at, still_running)
        (staging / "index.html").write_text(index, encoding="utf-8")
        _write_json(staging / "tournament.json", info)
        _write_json(staging / "standings.json", standings)
        _write_json(staging / "matches.json", listed)
        mark = {"tournament": info.name, "exported_at": exported_at, "state": info.state}
        (staging / MARK).write_text(json.dumps(mark, indent=2) + "\n", encoding="utf-8")
        _put_in_place(staging, site)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    replays = sum(1 for summary in shown if summary.viewer is not None)
    return Exported(
        index=site / "index.html",
        matches=len(shown),
        replays=replays,
        held=len(shown) - replays,
        still_running=still_running,
        state=info.state,
    )


def _check_place(site: Path, force: bool) -> None:
    if site.exists() and not site.is_dir():
        raise ExportError(f"{site} is a file, not a folder for the site")
    if not site.is_dir() or not any(site.iterdir()):
        return
    if not force:
        raise ExportError(f"{site} is not empty: choose another folder, or --force to replace it")
    if not (site / MARK).is_file():
        raise ExportError(
            f"{site} is not a site `arena tournament export` wrote (it has no {MARK}): "
            "--force replaces only those; remove it yourself or choose another folder"
        )


def _all_matches(folder: TournamentFolder, snap: Snapshot) -> list[MatchSummary]:
    """Every match, the latest scheduled first, as the server's match list has them."""
    found: list[MatchSummary] = []
    while True:
        listed = folder.matches(MatchQuery(offset=len(found), limit=_PAGE), snap)
        found += listed.matches
        if len(found) >= listed.total or not listed.matches:
            return found


def _write_match(
    folder: TournamentFolder, snap: Snapshot, summary: MatchSummary, where: Path
) -> MatchSummary:
    """The match's viewer page and replay model, when its replay may be shown; the summary
    as the site lists it (its viewer a relative link, or why it does not open)."""
    if not _SAFE_ID.fullmatch(summary.match_id):
        raise ExportError(f"match id {summary.match_id!r} cannot name a file of the site")
    if summary.viewer is None:
        return summary
    try:
        replay = model.load(folder.replay(summary.match_id, snap), PUBLIC)
    except (Held, NotFound) as exc:
        return summary.model_copy(update={"viewer": None, "held": str(exc)})
    except (ReplayError, ValueError, GameError) as exc:
        why = f"its replay cannot be shown: {exc}"
        return summary.model_copy(update={"viewer": None, "held": why})
    (where / f"{summary.match_id}.html").write_text(page.render(replay), encoding="utf-8")
    _write_json(where / f"{summary.match_id}.json", replay)
    return summary.model_copy(update={"viewer": f"matches/{summary.match_id}.html"})


def _write_json(path: Path, document: BaseModel | dict[str, Any]) -> None:
    text = (
        document.model_dump_json(indent=2)
        if isinstance(document, BaseModel)
        else json.dumps(document, ensure_ascii=False)
    )
    path.write_text(text + "\n", encoding="utf-8")


def _put_in_place(staging: Path, site: Path) -> None:
    """staging becomes site; an earlier site there (checked by _check_place) is removed."""
    if not site.exists():
        os.rename(staging, site)
        return
    old = _beside(site, "old")
    os.rename(site, old / "site")
    os.rename(staging, site)
    shutil.rmtree(old, ignore_errors=True)


def _beside(site: Path, what: str) -> Path:
    """A new folder next to site, its mode from the umask as for every file of the site
    (mkdtemp's is 0700 whatever the umask)."""
    folder = site.parent / f".{site.name}.{what}-{secrets.token_hex(6)}"
    folder.mkdir()
    return folder
