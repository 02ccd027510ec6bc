"""Match settings: the time control and what happens when a bot misbehaves."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Misbehaviour(StrEnum):
    """Every way a seat can fail a decision; each is recorded with its cause."""

    ILLEGAL_ACTION = "illegal_action"
    TIMEOUT = "timeout"
    CRASH = "crash"  # the bot's stream ended or broke: exit, kill, disconnect
    MALFORMED = "malformed"  # a message that is not a valid answer to the request
    # An answer naming a decision that was never asked (a wrong decision_id or match_id)
    # while one was waiting: the bot lost track of the protocol.
    PROTOCOL = "protocol"
    NO_SHOW = "no_show"  # never connected before the match started


class Policy(StrEnum):
    FORFEIT = "forfeit"
    RANDOM = "random"  # a random legal action is played instead, and a strike is counted


class Policies(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    illegal_action: Policy = Policy.FORFEIT
    timeout: Policy = Policy.FORFEIT
    crash: Policy = Policy.FORFEIT
    malformed: Policy = Policy.FORFEIT
    protocol: Policy = Policy.FORFEIT
    # Under the random policy a seat forfeits once it has misbehaved this many times.
    max_strikes: int = Field(default=3, ge=1)

    def for_(self, kind: Misbehaviour) -> Policy:
        if kind is Misbehaviour.NO_SHOW:
            return Policy.FORFEIT
        policy: Policy = getattr(self, kind.value)
        return policy


class MatchSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    decision_ms: int = Field(default=1000, ge=1, description="time per decision before the bank")
    time_bank_ms: int = Field(default=5000, ge=0, description="extra time for the whole match")
    # Both left out of a dump at their defaults: a wall-clock match's replay reads as before.
    clock: Literal["wall", "cpu"] = Field(
        default="wall",
        exclude_if=lambda clock: clock == "wall",
        description="what the time counts: wall-clock time, or the CPU time of the bot's whole "
        "process tree (bots the referee starts, as root, with control groups)",
    )
    wall_cap: float = Field(
        default=3.0,
        exclude_if=lambda cap: cap == 3.0,
        ge=1.0,
        description="clock = cpu: a decision also ends after this many times its CPU allowance "
        "in wall time, so that a bot that sleeps or blocks still loses on time",
    )
    speed: float | Literal["measure"] = Field(
        default=1.0,
        exclude_if=lambda speed: speed == 1.0,
        description='clock = cpu: "measure" has each host time a fixed reference workload at '
        "start and scale decision_ms and time_bank_ms by how much slower than the reference "
        "machine it is (pools of unequal machines); a number is the factor they were scaled "
        "by, what a replay records",
    )
    policies: Policies = Policies()

    @model_validator(mode="after")
    def _speed_counts_cpu(self) -> MatchSettings:
        if self.speed != 1.0 and self.clock != "cpu":
            raise ValueError('speed scales a CPU budget: it needs clock = "cpu"')
        if isinstance(self.speed, float) and not 0.0 < self.speed <= 100.0:
            raise ValueError(f"speed {self.speed} is no factor a machine's speed could have")
        return self
