"""The contract every rules engine keeps.

An engine is a plain object: no I/O, no clocks, no random generator. Chance is explicit, the
OpenSpiel way: at a chance point the state lists its outcomes with their probabilities and the
caller picks one, so the history of chance outcomes and decisions is the whole game.
Observations, typed actions and events are the wire's protobuf messages, so the .proto files
stay the single schema of what a seat may see. What only the referee sees beyond them (cards
that lie face down) an engine draws in `GameState.referee_picture`, so the replay viewer shows
it without knowing any game.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from operator import itemgetter
from typing import Generic, NamedTuple, TypeVar

from arena.v1 import referee_pb2 as pb
from pydantic import BaseModel, ConfigDict

CHANCE = -1
"""The pseudo-seat that makes chance moves in a history."""


class GameError(Exception):
    """Base of every error a rules engine raises."""


class IllegalActionError(GameError):
    """An action that is not among the legal actions of that seat now."""


class OptionsError(GameError):
    """Options or a seat count that the game does not accept."""


@dataclass(frozen=True)
class SeatView:
    """Everything one seat of a match has been told, as the wire carries it: its MatchStart,
    every Event it received (inside DecisionRequests and on their own) in the order received,
    and its latest observation with, when it must decide, that request's legal actions. A bot
    in any process can fill one from its own messages; nothing in it is hidden from the seat."""

    start: pb.MatchStart
    events: tuple[pb.Event, ...]
    observation: pb.Observation
    legal_actions: tuple[pb.LegalAction, ...] = ()

    @property
    def seat(self) -> int:
        return self.start.seat


class GameOptions(BaseModel):
    """Base of every game's options model: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Event:
    """Something that happened, with who may see it: everyone, or only the listed seats.

    Made from a wire message, or from a builder and its arguments: then the message is
    build(*args), made the first time it is read. The referee reads every event, but random
    playouts and search bots apply thousands of steps whose events nobody reads, and building
    protobuf messages was the largest cost of a step. The arguments are kept apart (rather
    than in a functools.partial) because that is cheaper still, and a step makes one or two."""

    __slots__ = ("_args", "_build", "_message", "audience")

    def __init__(
        self,
        message: pb.Event | Callable[..., pb.Event],
        audience: frozenset[int] | None = None,
        *args: object,
    ) -> None:
        self.audience = audience
        if type(message) is pb.Event:  # not isinstance: a third of this call's cost
            self._message: pb.Event | None = message
            self._build: Callable[..., pb.Event] | None = None
        else:
            self._message = None
            self._build = message
        self._args = args

    @property
    def message(self) -> pb.Event:
        if self._message is None:
            assert self._build is not None
            self._message, self._build = self._build(*self._args), None
            self._args = ()
        return self._message

    @property
    def public(self) -> bool:
        return self.audience is None

    def visible_to(self, seat: int | None) -> bool:
        """Whether a seat (None for a spectator) may see this event."""
        return self.audience is None or (seat is not None and seat in self.audience)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Event)
            and self.audience == other.audience
            and self.message == other.message
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Event(audience={self.audience!r}, message={self.message!r})"


def make_event(
    step: int, text: str, audience: frozenset[int] | None = None, **game_event: object
) -> Event:
    """An event whose wire message says who may see it; game_event is the game's own field,
    e.g. opposing_force=OpposingForceEvent(...). Its parts must not change afterwards: the
    message is put together when first read."""
    return Event(partial(event_message, step, text, audience, **game_event), audience)


def event_message(
    step: int, text: str, audience: frozenset[int] | None, **game_event: object
) -> pb.Event:
    """The wire form of an event (see make_event); engines that defer building their own part
    too wrap a builder that ends here in Event."""
    return pb.Event(
        step=step,
        public=audience is None,
        text=text,
        audience=sorted(audience or ()),
        **game_event,  # type: ignore[arg-type]
    )


class UniformOutcomes(list[tuple[int, float]]):
    """Chance outcomes that are equally likely by construction, so a sampler can pick one by
    index without checking every probability."""


def uniform_outcomes(pool: Sequence[int]) -> list[tuple[int, float]]:
    """Each outcome of pool with probability 1 / len(pool); empty for an empty pool."""
    if not pool:
        return []
    probability = 1.0 / len(pool)
    return UniformOutcomes([(outcome, probability) for outcome in pool])


@cache
def _uniform_row(pool_size: int, ids: int) -> tuple[tuple[int, float], ...]:
    probability = 1.0 / pool_size
    return tuple((outcome, probability) for outcome in range(ids))


def uniform_draw(pool: Sequence[int], ids: int) -> list[tuple[int, float]]:
    """uniform_outcomes(pool) for a pool of distinct outcomes below ids (a draw from a pile of
    cards): the pairs are made once per pool size and picked in C, since most chance steps draw
    a card and making the pairs afresh was most of their cost."""
    if not pool:
        return []
    row = _uniform_row(len(pool), ids)
    if len(pool) == 1:  # itemgetter of one item answers it bare, not in a tuple
        return UniformOutcomes([row[pool[0]]])
    return UniformOutcomes(itemgetter(*pool)(row))


@dataclass(frozen=True, slots=True)
class Result:
    """Final standing: rank per seat (0 best, ties share), score per seat, and why it ended."""

    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    reason: str

    @staticmethod
    def from_scores(scores: Sequence[float], reason: str) -> Result:
        """Rank seats by score, higher first; equal scores share a rank."""
        ranks = tuple(sum(1 for other in scores if other > mine) for mine in scores)
        return Result(ranks=ranks, scores=tuple(float(s) for s in scores), reason=reason)


class Step(NamedTuple):
    """One entry of a history: a chance outcome (seat CHANCE) or a seat's decision. A named
    tuple rather than a frozen dataclass: one is made at every step, and this is 4x cheaper."""

    seat: int
    action: int


OptionsT = TypeVar("OptionsT", bound=GameOptions)
KeptT = TypeVar("KeptT")


class GameState(ABC, Generic[OptionsT]):
    """A game in progress. Subclasses keep `history` up to date in every apply."""

    def __init__(self, options: OptionsT, num_seats: int) -> None:
        self.options = options
        self.num_seats = num_seats
        self.history: list[Step] = []
        # The legal list kept for one seat at one history length (see _kept_legal_actions).
        self._kept_legal: list[int] = []
        self._kept_at = -1
        self._kept_seat = -1

    # -- whose move ---------------------------------------------------------------------------
    @abstractmethod
    def is_chance(self) -> bool:
        """True when the next step is a chance outcome rather than a decision."""

    @abstractmethod
    def chance_outcomes(self) -> list[tuple[int, float]]:
        """Outcomes of the pending chance step with their probabilities, in a stable order."""

    @abstractmethod
    def to_move(self) -> tuple[int, ...]:
        """Seats that must decide now: one, several for a simultaneous choice, none otherwise."""

    def legal_actions(self, seat: int) -> list[int]:
        """Sorted, unique action ids for a seat that must decide; empty for any other seat.
        Kept per (history length, seat): the runner, apply() and bots all ask for the same list,
        and two seats of a simultaneous choice ask at the same history length."""
        return list(self._kept_legal_actions(seat))

    def _kept_legal_actions(self, seat: int) -> list[int]:
        """The kept list itself (callers must not change it), or [] for a seat not to move.
        A list is kept only for a seat that was to move, and to_move() cannot change while the
        history's length stays the same, so a kept list answers both questions at once."""
        # Two attributes rather than one (length, seat) key: no tuple to build on every ask.
        if self._kept_at == len(self.history) and self._kept_seat == seat:
            return self._kept_legal
        if seat not in self.to_move():
            return []
        self._kept_legal = self._legal_actions(seat)
        self._kept_at, self._kept_seat = len(self.history), seat
        return self._kept_legal

    @abstractmethod
    def _legal_actions(self, seat: int) -> list[int]:
        """The legal list of a seat that is in to_move(), computed afresh."""

    def forget_legal_actions(self) -> None:
        """Drop the kept legal lists, and whatever else is kept for this position (what
        resample keeps), after a state is changed other than by apply (resample, or a test
        that sets up a position by hand)."""
        self._kept_at = -1
        self._kept_for_resample = None

    _kept_for_resample: tuple[int, int, object] | None = None
    """(history length, seat, what resample keeps for that position): see kept_for_resample.
    A clone starts without it (this class default)."""

    def kept_for_resample(self, seat: int, make: Callable[[], KeptT]) -> KeptT:
        """What the worlds of this position share for seat (a pool, an index of the draws, a
        deal to clone), made by make() once per position: search resamples one state many
        times. forget_legal_actions drops it."""
        kept = self._kept_for_resample
        if kept is None or kept[0] != len(self.history) or kept[1] != seat:
            kept = self._kept_for_resample = (len(self.history), seat, make())
        return kept[2]  # type: ignore[return-value]

    def _share_kept_legal_actions(self, clone: GameState[OptionsT]) -> None:
        """Give a clone the kept legal list (never changed in place, so it can be shared)."""
        clone._kept_legal, clone._kept_at = self._kept_legal, self._kept_at
        clone._kept_seat = self._kept_seat

    @abstractmethod
    def is_over(self) -> bool: ...

    @abstractmethod
    def result(self) -> Result:
        """The outcome; only valid once is_over()."""

    # -- moves --------------------------------------------------------------------------------
    @abstractmethod
    def _apply_chance(self, outcome: int) -> list[Event]: ...

    @abstractmethod
    def _apply_action(self, seat: int, action: int) -> list[Event]: ...

    def _is_chance_outcome(self, outcome: int) -> bool:
        """Whether outcome is among chance_outcomes(); engines answer it without building the
        list when they can (a card still in the deck)."""
        return any(possible == outcome for possible, _ in self.chance_outcomes())

    def apply_chance(self, outcome: int) -> list[Event]:
        if not self.is_chance():
            raise GameError("no chance step is pending")
        if not self._is_chance_outcome(outcome):
            raise GameError(f"{outcome} is not a possible chance outcome here")
        events = self._apply_chance(outcome)
        self.history.append(Step(CHANCE, outcome))
        return events

    def apply(self, seat: int, action: int) -> list[Event]:
        """Apply a seat's decision; raises IllegalActionError for anything not legal now."""
        legal = self._kept_legal_actions(seat)
        if action not in legal:
            if not legal:
                raise IllegalActionError(f"seat {seat} is not to move")
            raise IllegalActionError(f"action {action} is not legal for seat {seat}")
        events = self._apply_action(seat, action)
        self.history.append(Step(seat, action))
        return events

    def apply_step(self, step: Step) -> list[Event]:
        if step.seat == CHANCE:
            return self.apply_chance(step.action)
        return self.apply(step.seat, step.action)

    # -- what seats see -----------------------------------------------------------------------
    @abstractmethod
    def observation(self, seat: int | None) -> pb.Observation:
        """What a seat may know now; seat None is a spectator (public information only)."""

    def public_observation(self) -> pb.Observation:
        return self.observation(None)

    @abstractmethod
    def action_label(self, action: int) -> str:
        """Short, stable label: the same action has the same label in every state."""

    def chance_label(self, outcome: int) -> str:
        """How a chance outcome reads in a referee's log (a card, a die face)."""
        return str(outcome)

    @abstractmethod
    def action_message(self, action: int) -> pb.Action:
        """The typed wire form of an action id: the same in every state, like the label (the
        referee builds both once per game, in referee/matches/decisions.py)."""

    @abstractmethod
    def render(self, seat: int | None) -> str:
        """Text picture of observation(seat), for people."""

    def referee_picture(self) -> dict[str, object] | None:
        """What the referee's view shows that no seat's or spectator's observation holds (the
        cards face down in a formation), as JSON-ready data for the replay viewer's referee
        frames; None, the default, for a game whose observations already show everything the
        referee's page draws."""
        return None

    # -- search and tests ---------------------------------------------------------------------
    @abstractmethod
    def clone(self) -> GameState[OptionsT]:
        """An independent copy, cheaper than deepcopy."""

    @classmethod
    def world_sampler(cls, options: OptionsT, view: SeatView) -> WorldSampler[OptionsT]:
        """Determinizations of a seat's view (see WorldSampler); every engine overrides it."""
        raise NotImplementedError(f"{cls.__name__} cannot build states from a seat's view yet")

    @abstractmethod
    def resample(self, seat: int, rng: random.Random) -> GameState[OptionsT]:
        """A state the seat cannot tell apart from this one, with what it cannot see re-dealt,
        under the promises of WorldSampler, read from this state's public part. What the worlds
        of one position share may be kept for the next call there (search resamples its root
        many times): a state changed other than by apply must call forget_legal_actions."""

    @abstractmethod
    def key(self) -> tuple[object, ...]:
        """Everything that makes up the state, for equality in tests."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GameState) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def action_for(self, message: pb.Action, seat: int) -> int | None:
        """The legal action of a seat whose typed form equals message, if any."""
        for action in self.legal_actions(seat):
            if self.action_message(action) == message:
                return action
        return None


class WorldSampler(ABC, Generic[OptionsT]):
    """Worlds that one seat cannot tell apart from the one it is in (determinizations), for
    search. Built once from a SeatView, which does the work of reading it; then each sample()
    costs a clone and a draw of the unseen cards, never a replay (2-4 clones in bench.engines).
    Every engine keeps three promises:

    - Agreement: in every sample, observation(seat) equals the view's observation byte for
      byte, and when the view has legal actions, the seat is to move and its legal actions as
      messages equal them; the sample plays on by the rules to the end.
    - Uniformity: samples are drawn uniformly over the worlds consistent with everything the
      seat saw: every placement of the cards it has not seen into the places it cannot see
      that the rules and the play it saw allow is equally likely (rejection may be used, but
      never a fallback that changes the distribution).
    - Blindness: only the view is read; a sampler never consults the true hidden cards.

    A sample's history is not a record of the match (a view does not hold the other seats'
    private choices); engines may leave it empty."""

    def __init__(self, view: SeatView) -> None:
        self.view = view

    @property
    def seat(self) -> int:
        return self.view.seat

    @abstractmethod
    def sample(self, rng: random.Random) -> GameState[OptionsT]:
        """One world consistent with the view, drawn uniformly."""

    @abstractmethod
    def hidden(self, state: GameState[OptionsT]) -> set[tuple[object, int]]:
        """What the seat cannot see in a state of this match (the true one, or a sample), as
        (place, card) pairs: the part a sample draws afresh. Tests measure bias with it."""


@dataclass(frozen=True)
class GameDefinition(Generic[OptionsT]):
    """A game's identity and its factory."""

    name: str
    title: str
    seat_counts: tuple[int, ...]
    rules_version: str
    options_model: type[OptionsT]
    state_class: type[GameState[OptionsT]]
    decision_cap: int
    default_seats: int = field(default=2)

    def options(self, raw: dict[str, object] | None = None) -> OptionsT:
        """Validate raw options; raises OptionsError naming the bad key."""
        from pydantic import ValidationError

        try:
            return self.options_model.model_validate(raw or {})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'options'}: {err['msg']}"
                for err in exc.errors()
            )
            raise OptionsError(f"bad options for {self.name}: {problems}") from None

    def world_sampler(self, view: SeatView) -> WorldSampler[OptionsT]:
        """Determinizations of a seat's view of a match of this game (see WorldSampler)."""
        from google.protobuf import json_format

        options = self.options(json_format.MessageToDict(view.start.options))
        return self.state_class.world_sampler(options, view)

    @property
    def builds_from_views(self) -> bool:
        """Whether the engine can build states from a seat's view yet."""
        engine_classes = self.state_class.__mro__[: self.state_class.__mro__.index(GameState)]
        return any("world_sampler" in vars(cls) for cls in engine_classes)

    def new_state(
        self, options: OptionsT | dict[str, object] | None = None, num_seats: int | None = None
    ) -> GameState[OptionsT]:
        seats = self.default_seats if num_seats is None else num_seats
        if seats not in self.seat_counts:
            allowed = ", ".join(str(n) for n in self.seat_counts)
            raise OptionsError(f"{self.name} is played by {allowed} seats, not {seats}")
        opts = options if isinstance(options, GameOptions) else self.options(options)
        return self.state_class(opts, seats)
