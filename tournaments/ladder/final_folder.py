"""The final's folder, written from a frozen ladder (`arena ladder final`): a tournament folder
that `arena tournament run FINAL_DIR` plays.

    FINAL_DIR/tournament.toml   the ladder's game, options, time control, policies, sandbox (at
                                bubblewrap at least when an uploaded version plays) and
                                bot_output; [format] of the chosen kind at the ladder's seats;
                                the bots in seed order; no `seed`: the run draws a fresh deal
                                secret, which no bot has seen on the ladder
    FINAL_DIR/bots/NAME/        an uploaded version's code, copied from the ladder's folder (its
                                built copy when it was built): the final reads nothing of the
                                ladder's folder. The sandbox hides FINAL_DIR from the bots but
                                each uploaded one's own bots/NAME (absolute paths: the folder
                                is run where it was written)
    FINAL_DIR/entrants.json     tournaments.contest.Entrants: who entered each bot

The entrants are the pinned versions (ladder/freeze.py) of the bots active at the freeze, best
conservative rating at the freeze first; an author (or team) enters one bot, their best, even
when [authors] bots_per_author let them play more; the house's bots are each their own party.
A remote bot is left out (a tournament starts its bots; nobody runs a remote one for it), said
in one line of the answer.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.bots.launcher import python_file_spec
from referee.bots.sandbox import Tier
from tournaments import audit_log
from tournaments.config import ConfigError, parse_config
from tournaments.contest import Entrant, Entrants, Release
from tournaments.ladder import freeze
from tournaments.ladder.authors import party_of
from tournaments.ladder.config_file import LadderConfig
from tournaments.ladder.database import LadderStore
from tournaments.ladder.roster import REMOTE_SPEC
from tournaments.ladder.uploads import BUILDS_FOLDER, VERSIONS_FOLDER
from tournaments.ladder.vetting import takes_uploads

BRACKETS = ("knockout", "double-elimination")
KINDS = ("round-robin", "swiss", *BRACKETS)
TOURNAMENT_FILE = "tournament.toml"
ENTRANTS_FILE = "entrants.json"


class FinalError(ValueError):
    """A final that cannot be written; the message says why, on one line."""


@dataclass(frozen=True)
class FinalPlan:
    kind: str
    top: int
    deals: int = 1  # deals each pairing plays, each in every seating
    rounds: int | None = None  # swiss only


@dataclass
class Written:
    entrants: Entrants
    left_out: list[str] = field(default_factory=list)  # one line each: who, and why


@dataclass(frozen=True)
class _Seeded:
    bot: str
    version: str
    spec: str
    uploaded: bool
    author: str
    team: str | None
    token_sha256: str | None  # None: a house bot, which no token opens
    content_hash: str
    rating: float


def write_final(
    store: LadderStore,
    config: LadderConfig,
    folder: Path,
    plan: FinalPlan,
    out: Path,
    why: str = "",
) -> Written:
    """The final's folder at `out` (new or empty); FinalError before the freeze, with too few
    entrants, or with a folder that holds something."""
    when = freeze.frozen_at(store, config)
    if when is None:
        raise FinalError("the ladder is not frozen: `arena ladder freeze` first")
    freeze.pin_if_due(store, config, "operator")
    if plan.kind not in KINDS:
        raise FinalError(f"format {plan.kind!r}: one of {', '.join(KINDS)}")
    chosen, left_out = _entrants(store, plan.top)
    if len(chosen) < config.table.seats:
        raise FinalError(
            f"{len(chosen)} bot(s) can enter the final, too few for a table of {config.table.seats}"
        )
    if out.exists() and any(out.iterdir()):
        raise FinalError(f"{out} holds files already: the final is written to a new folder")
    uploaded = any(s.uploaded for s in chosen)
    specs = {s.bot: _copied(s, folder, out) if s.uploaded else s.spec for s in chosen}
    release = freeze.release_of(store, config)
    document = _tournament(config, plan, chosen, specs, uploaded, out.resolve(), release)
    text = _toml(document)
    entrants = Entrants(
        ladder=config.name,
        frozen_at=freeze.iso(when),
        entrants=[
            Entrant(
                bot=s.bot,
                author=s.author,
                team=s.team,
                token_sha256=s.token_sha256,
                version=s.content_hash,
                seed=seed,
                rating=s.rating,
            )
            for seed, s in enumerate(chosen, 1)
        ],
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / ENTRANTS_FILE).write_text(entrants.model_dump_json(indent=2) + "\n")
    try:  # what `arena tournament run` will read, entrants and all: checked before it is written
        parse_config(tomllib.loads(text), str(out / TOURNAMENT_FILE))
    except ConfigError as exc:
        shutil.rmtree(out / "bots", ignore_errors=True)
        (out / ENTRANTS_FILE).unlink()
        raise FinalError(f"the final's tournament file would not load: {exc}") from None
    (out / TOURNAMENT_FILE).write_text(text)
    with store.write() as db:
        detail: dict[str, object] = {
            "folder": str(out),
            "format": plan.kind,
            "bots": [s.bot for s in chosen],
        }
        audit_log.record(db, "operator", "final written", "the ladder", why, detail)
    return Written(entrants, left_out)


def _entrants(store: LadderStore, top: int) -> tuple[list[_Seeded], list[str]]:
    """The top `top` pinned bots that can play, one per party, in seed order; and a line for
    each one passed over."""
    rows = {
        str(r[0]): r[1:]
        for r in store.db.execute(
            "SELECT v.key, v.spec, v.content_hash, b.author, a.team, a.token_hash "
            "FROM versions v JOIN bots b ON b.name = v.bot JOIN authors a ON a.name = b.author"
        )
    }
    chosen: list[_Seeded] = []
    parties: set[str] = set()
    left_out: list[str] = []
    for pin in freeze.pins(store):
        if len(chosen) == top:
            break
        spec, digest, author, team, token_hash = rows[pin.version]
        if pin.status != "active":
            left_out.append(f"{pin.bot}: {pin.status} at the freeze")
            continue
        if spec == REMOTE_SPEC:
            left_out.append(f"{pin.bot}: a remote bot, which a tournament cannot start")
            continue
        party = party_of(pin.bot, str(author), team)
        if party in parties:
            left_out.append(f"{pin.bot}: its author's (or team's) better bot enters")
            continue
        parties.add(party)
        chosen.append(
            _Seeded(
                bot=pin.bot,
                version=pin.version,
                spec=str(spec),
                uploaded=digest is not None,
                author=str(author),
                team=team,
                token_sha256=str(token_hash) if token_hash else None,
                content_hash=str(digest or ""),
                rating=round(pin.conservative, 6),
            )
        )
    return chosen, left_out


def _copied(seeded: _Seeded, ladder: Path, out: Path) -> str:
    """The version's folder (its built copy, or its upload) copied to bots/NAME; its SPEC
    there (a Python file relative to the tournament file, a command's program absolute)."""
    roots = [ladder / BUILDS_FOLDER / seeded.version / "bot", ladder / VERSIONS_FOLDER]
    source = _home(seeded.spec, roots)
    target = out / "bots" / seeded.bot
    shutil.copytree(source, target, symlinks=True)
    parts = python_file_spec(seeded.spec)
    if parts is not None:
        inside = Path("bots") / seeded.bot / Path(parts.file).relative_to(source)
        return str(inside) + (f":{parts.class_name}" if parts.class_name else "")
    words = [_moved(w, source, target) for w in shlex.split(seeded.spec.removeprefix("cmd:"))]
    return "cmd:" + shlex.join(words)


def _moved(word: str, source: Path, target: Path) -> str:
    """A command's word that is a path into the version's folder, pointed into its copy."""
    path = Path(word)
    if path.is_absolute() and path.is_relative_to(source):
        return str(target.resolve() / path.relative_to(source))
    return word


def _home(spec: str, roots: list[Path]) -> Path:
    """The folder of the version the SPEC runs from: builds/KEY/bot, or versions/HASH."""
    parts = python_file_spec(spec)
    path = parts.file if parts is not None else shlex.split(spec.removeprefix("cmd:"))[0]
    built, stored = roots
    if Path(path).is_relative_to(built):
        return built
    if not Path(path).is_relative_to(stored):
        raise FinalError(f"an uploaded version's SPEC {spec!r} is outside the ladder's folder")
    return stored / Path(path).relative_to(stored).parts[0]


def _tournament(
    config: LadderConfig,
    plan: FinalPlan,
    chosen: list[_Seeded],
    specs: dict[str, str],
    uploaded: bool,
    out: Path,
    release: Release,
) -> dict[str, Any]:
    # The final's folder kept from its bots (the others' code, entrants.json), but for each
    # uploaded bot its own bots/NAME, as the ladder keeps versions/ from them.
    sandbox = config.sandbox.hiding(out)
    if uploaded:
        sandbox = sandbox.running_from(out / "bots")
        if not takes_uploads(sandbox):  # issue 33: uploaded code never runs below it
            sandbox = sandbox.model_copy(update={"tier": Tier.BUBBLEWRAP})
    seats = config.table.seats
    fmt: dict[str, Any] = {"kind": plan.kind, "seats": seats}
    if plan.kind in BRACKETS:  # a mini-match of `deals` deals a table, each in every seating
        fmt["deals"] = plan.deals
    else:
        fmt |= {"games_per_pairing": plan.deals * seats, "rotate_seats": True}
        fmt["duplicate_deals"] = True
    if plan.kind == "swiss":
        fmt["rounds"] = plan.rounds or max(1, (len(chosen) - 1).bit_length())
    document: dict[str, Any] = {
        "name": f"{config.name}-final",
        "game": config.game,
        "output": "run",
        "options": dict(config.options),
        "bots": [{"name": s.bot, "spec": specs[s.bot]} for s in chosen],
        "format": fmt,
        "time_control": config.time_control.model_dump(mode="json", exclude={"policies"}),
        "policies": config.policies.model_dump(mode="json"),
        "sandbox": sandbox.model_dump(mode="json", exclude_none=True),
        "bot_output": config.bot_output.model_dump(mode="json"),
    }
    # The ladder's release holds for its final too (`arena tournament release` changes it).
    document["contest"] = {"release": release.value, "entrants": ENTRANTS_FILE}
    return document


def _toml(document: dict[str, Any]) -> str:
    """TOML of a plain document (strings, numbers, booleans, lists of them, tables, and one
    array of tables: bots); JSON's quoting is TOML's for these strings."""
    lines = ["# The final of a frozen ladder, written by `arena ladder final`.", ""]
    tables = {k: v for k, v in document.items() if isinstance(v, dict)}
    for key, value in document.items():
        if key not in tables and key != "bots":
            lines.append(f"{key} = {_value(value)}")
    for name, table in tables.items():
        lines += ["", f"[{name}]", *_table_lines(name, table)]
    for bot in document["bots"]:
        lines += ["", "[[bots]]", *(f"{k} = {_value(v)}" for k, v in bot.items())]
    return "\n".join(lines) + "\n"


def _table_lines(prefix: str, table: dict[str, Any]) -> list[str]:
    lines = [
        f"{k} = {_value(v)}" for k, v in table.items() if not isinstance(v, dict) and v is not None
    ]
    for key, sub in table.items():
        if isinstance(sub, dict):
            lines += ["", f"[{prefix}.{key}]", *_table_lines(f"{prefix}.{key}", sub)]
    return lines


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise FinalError(f"cannot write {value!r} in the final's tournament file")
