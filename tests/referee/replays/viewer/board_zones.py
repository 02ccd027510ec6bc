"""What each game's table holds, zone by zone, from the observations the text board is printed
from (`arena replay show --boards`): the cards a page must draw in each zone it names with
data-board (assets/viewer.js, `board`), and the cards the text board lists.

A zone is (its face-up cards sorted, how many backs, the size it writes or None). Empty zones
are left out on both sides: a renderer may draw an empty place or nothing."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

Json = dict[str, Any]
Zone = tuple[list[str], int, int | None]
Zones = dict[str, Zone]

# A card label in a text board: Strato-Sphere writes a node as "Qds0/2" (card, controller,
# face-down count), so a label may run into "s" and a digit.
BOARD_LABEL = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][cdhs])(?=s\d|[^A-Za-z0-9]|$)")


def zone(faces: list[str], backs: int = 0, count: int | None = None) -> Zone:
    return sorted(faces), backs, count


def non_empty(zones: Zones) -> Zones:
    return {key: z for key, z in zones.items() if z[0] or z[1] or z[2]}


def board_labels(board: str, viewpoint: str) -> Counter[str]:
    """The cards the text board lists. Officers' Battle's board lists a seat's own cards seen
    going into its hand twice (in its hand and as known in hand): counted once."""
    kept, side = [], None
    for line in board.splitlines():
        if re.match(r"  seat \d+ \(", line):
            side = line.split()[1]
        if not (side == viewpoint and line.startswith("    known in hand:")):
            kept.append(line)
    return Counter(BOARD_LABEL.findall("\n".join(kept)))


def face_up(zones: Zones) -> Counter[str]:
    out: Counter[str] = Counter()
    for faces, _, _ in zones.values():
        out.update(faces)
    return out


def _hand(key_seat: int, own: dict[int, Json], size: int, known: list[str] | None = None) -> Zone:
    if key_seat in own:
        return zone(own[key_seat]["hand"])
    seen = known or []
    return zone(seen, size - len(seen))


def opposing_force(base: Json, own: dict[int, Json]) -> Zones:
    out = {f"hand/{s}": _hand(s, own, size) for s, size in enumerate(base["hand_sizes"])}
    for position in base["positions"]:
        for seat, side in enumerate(position["sides"]):
            out[f"side/{position['index']}/{seat}"] = zone(side["cards"])
    return out


def capture_the_commander(base: Json, own: dict[int, Json]) -> Zones:
    out: Zones = {}
    for formation in base["formations"]:
        seat = formation["seat"]
        out[f"removed/{seat}"] = zone(formation["removed"])
        for slot in formation["slots"]:
            card = [slot["card"]] if "card" in slot else []
            out[f"slot/{seat}/{slot['number']}"] = zone(card, int(slot["state"] == "hidden"))
    return out


def officers_battle(base: Json, own: dict[int, Json]) -> Zones:
    out: Zones = {"discard": zone(base["discard_pile"])}
    series = base["turn"].get("series")
    if series:
        out["series"] = zone(series["cards"])
    for side in base["sides"]:
        seat = side["seat"]
        out[f"hand/{seat}"] = _hand(seat, own, side["hand_size"], side["known_hand"])
        out[f"fallen/{seat}"] = zone([c for f in side["fallen"] for c in (f["officer"], f["card"])])
        out[f"support/{seat}"] = zone([side["support"]] if "support" in side else [])
        for number, retreat in enumerate(side["retreats"], 1):
            out[f"retreat/{seat}/{number}"] = zone(retreat["officers"])
        for front in side["fronts"]:
            where = f"{seat}/{front['position']}"
            out[f"officer/{where}"] = zone([front["officer"]] if "officer" in front else [])
            out[f"pile/{where}"] = zone(front["pile"])
        casualty = side.get("casualty")
        if casualty:
            where = f"{seat}/{casualty['position']}"
            out[f"killed/{where}"] = zone([casualty["officer"], *casualty["cards"]])
    return out


def orc_pit_fighting(base: Json, own: dict[int, Json]) -> Zones:
    out: Zones = {"discard": zone(base["discard_pile"])}
    pending = base.get("pending_play")
    if pending:
        out["pending"] = zone([pending["card"]])
    for s in base["seats"]:
        seat = s["seat"]
        out[f"hand/{seat}"] = _hand(seat, own, s["hand_size"])
        out[f"out/{seat}"] = zone(s["out_pile"])
        out[f"flair/{seat}"] = zone(s["flair_pile"])
        mine = own.get(seat)
        if mine is not None:
            out[f"drawn/{seat}"] = zone(mine["drawn"])
            for key, field in (("put-down", "put_down"), ("face-down", "face_down_choice")):
                out[f"{key}/{seat}"] = zone([mine[field]] if field in mine else [])
            dirty = mine.get("combat", {}).get("dirty_drawn")
            out[f"dirty/{seat}"] = zone([dirty] if dirty else [])
    if "combat" in base:
        for seat in range(len(base["seats"])):
            # A seat sees its own Blank's card; the others see a back.
            combat = own[seat]["combat"] if seat in own else base["combat"]
            side = combat["sides"][seat]
            faces = [c for p in side["plays"] for c in p["cards"]]
            faces += side["hearts"] + side["other_cards"]
            out[f"pit/{seat}"] = zone(faces, sum(not p["cards"] for p in side["plays"]))
    return out


def strato_sphere(base: Json, own: dict[int, Json]) -> Zones:
    out = {f"hand/{s}": _hand(s, own, size) for s, size in enumerate(base["hand_sizes"])}
    pile = base["discard_pile"]
    # The page draws the discard pile's top six and writes its size, as the board does.
    out["discard"] = zone(pile[-6:], 0, len(pile))
    for node in base["nodes"]:
        up = [node["face_up"]] if "face_up" in node else []
        out[f"node/{node['index']}"] = zone(
            up, int(node["face_down"] > 0), node["face_down"] + len(up)
        )
    if "attack" in base:
        out["attack"] = zone([base["attack"]["attacking_card"]])
    return out


ZONES: dict[str, Callable[[Json, dict[int, Json]], Zones]] = {
    "opposing-force": opposing_force,
    "capture-the-commander": capture_the_commander,
    "officers-battle": officers_battle,
    "orc-pit-fighting": orc_pit_fighting,
    "strato-sphere": strato_sphere,
}


def expected(game: str, frame: Json, viewpoint: str) -> Zones:
    """The zones a page shown as viewpoint draws at frame: the spectators' table with every
    seat's own view for the referee, a seat's own table for a seat."""
    views = frame["views"]
    if viewpoint == "referee":
        base = views["public"]
        own = {int(k): v for k, v in views.items() if k != "public"}
    elif viewpoint == "public":
        base, own = views["public"], {}
    else:
        base, own = views[viewpoint], {int(viewpoint): views[viewpoint]}
    return non_empty(ZONES[game](base, own))
