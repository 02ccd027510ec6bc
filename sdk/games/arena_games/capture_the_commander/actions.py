"""Action ids, labels and wire forms.

One attack is one decision: (own slot, defender, target slot) in a single id, because its legal
list stays short (at most 4 own cards x 4 targets at the start of a 2-player deal, about 50 in a
4-player deal, under 200 in the worst shapes a formation can take). Ids in the order the legal
lists give them:
  attacks   0..675   ((slot - 1) * 4 + defender) * 13 + (target slot - 1)
  gifts   676..844   676 + (slot - 1) * 13 + (ally slot - 1)
  flips   845..857   845 + (slot - 1)
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.v1 import capture_the_commander_pb2 as ctcpb
from arena.v1 import referee_pb2 as pb

MAX_SEATS = 4
ATTACK_BASE = 0
GIFT_BASE = ATTACK_BASE + 13 * MAX_SEATS * 13
FLIP_BASE = GIFT_BASE + 13 * 13
ACTION_COUNT = FLIP_BASE + 13

ATTACK, GIFT, FLIP = "attack", "gift", "flip"


@dataclass(frozen=True, slots=True)
class Decoded:
    """An action id's parts; fields that do not apply to its kind are 0."""

    kind: str
    slot: int
    defender: int = 0
    target: int = 0


def attack_action(slot: int, defender: int, target: int) -> int:
    return ATTACK_BASE + ((slot - 1) * MAX_SEATS + defender) * 13 + target - 1


def gift_action(slot: int, ally_slot: int) -> int:
    return GIFT_BASE + (slot - 1) * 13 + ally_slot - 1


def flip_action(slot: int) -> int:
    return FLIP_BASE + slot - 1


def decode(action: int) -> Decoded:
    if not 0 <= action < ACTION_COUNT:
        raise ValueError(f"not a Capture the Commander action: {action}")
    if action >= FLIP_BASE:
        return Decoded(FLIP, action - FLIP_BASE + 1)
    if action >= GIFT_BASE:
        slot, ally_slot = divmod(action - GIFT_BASE, 13)
        return Decoded(GIFT, slot + 1, target=ally_slot + 1)
    rest, target = divmod(action - ATTACK_BASE, 13)
    slot, defender = divmod(rest, MAX_SEATS)
    return Decoded(ATTACK, slot + 1, defender, target + 1)


PARTS: tuple[tuple[str, int, int, int], ...] = tuple(
    (d.kind, d.slot, d.defender, d.target) for d in map(decode, range(ACTION_COUNT))
)
"""Action id -> (kind, slot, defender, target) as decode gives them, looked up when applying."""


def label(action: int) -> str:
    """'attack 1 s1.2' (own slot 1 at seat 1's slot 2), 'give 9 to 1' (own slot 9 into the
    ally's slot 1), 'flip 6'."""
    d = decode(action)
    if d.kind == ATTACK:
        return f"attack {d.slot} s{d.defender}.{d.target}"
    if d.kind == GIFT:
        return f"give {d.slot} to {d.target}"
    return f"flip {d.slot}"


def message(action: int) -> pb.Action:
    d = decode(action)
    if d.kind == ATTACK:
        attack = ctcpb.CaptureTheCommanderAttack(
            slot=d.slot, defender=d.defender, target_slot=d.target
        )
        typed = ctcpb.CaptureTheCommanderAction(attack=attack)
    elif d.kind == GIFT:
        gift = ctcpb.CaptureTheCommanderGift(slot=d.slot, ally_slot=d.target)
        typed = ctcpb.CaptureTheCommanderAction(gift=gift)
    else:
        flip = ctcpb.CaptureTheCommanderWarFlip(slot=d.slot)
        typed = ctcpb.CaptureTheCommanderAction(war_flip=flip)
    return pb.Action(capture_the_commander=typed)
