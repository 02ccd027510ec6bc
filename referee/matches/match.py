"""The match runner: drives a rules engine between seats, with clocks, misbehaviour policies,
spectators and the replay. One match, start to end; it never raises for a bot's fault."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import structlog
from arena.v1 import referee_pb2 as pb
from arena_games import replay_file as replay
from arena_games.base import Event, GameDefinition, GameOptions, GameState, Result
from arena_games.deals import DealKey
from arena_games.legal_actions import resolve_decision
from arena_games.match_messages import match_start_message, result_message
from arena_games.match_settings import MatchSettings, Misbehaviour, Policy
from arena_games.playout import sample_chance
from arena_games.protowire import field_tag, framed
from pydantic import BaseModel

from referee.matches.cpu_timing import CpuTiming
from referee.matches.decision_timing import DecisionTiming
from referee.matches.decisions import EncodedRequest, encode_request
from referee.matches.protojson import message_dict
from referee.matches.seat_times import SeatTimes, seat_times
from referee.matches.seats import Seat, SeatFailure, Spectators

log = structlog.get_logger("referee.matches.match")


_END_EVENT = field_tag(pb.MatchEnd, "events")


@dataclass
class Forfeit:
    seat: int
    cause: Misbehaviour
    detail: str


@dataclass
class MatchOutcome:
    match_id: str
    result: Result
    forfeits: list[Forfeit]
    replay_path: Path | None
    decisions: int
    records: list[BaseModel] = field(repr=False, default_factory=list)

    def message(self) -> pb.MatchResult:
        return result_message(
            self.result, {f.seat: (f.cause.value, f.detail) for f in self.forfeits}
        )

    def substituted(self) -> tuple[int, ...]:
        """Per seat, the decisions the referee played for it (the random misbehaviour policy)."""
        counts = [0] * len(self.result.ranks)
        for record in self.records:
            if isinstance(record, replay.DecisionRecord) and record.substituted_for:
                counts[record.seat] += 1
        return tuple(counts)

    def seat_times(self) -> list[SeatTimes]:
        """Per seat, its decisions' wall-clock and CPU times, mean and longest."""
        return seat_times(self.records, len(self.result.ranks))


@dataclass
class _Clock:
    bank_ms: float
    strikes: int = 0
    # A send to the seat failed: judged (crash policy) at its next decision.
    broken: SeatFailure | None = None
    # The seat's bot is dead and the random policy plays for it: decide without asking.
    gone: bool = False

    @property
    def reachable(self) -> bool:
        return self.broken is None and not self.gone


def _used_ms(timing: DecisionTiming) -> float:
    """What the decision costs the seat's allowance and bank: CPU under the CPU clock."""
    return timing.cpu_ms() if isinstance(timing, CpuTiming) else timing.elapsed_ms()


def _spent(timing: DecisionTiming) -> tuple[float, float | None]:
    """(wall milliseconds, CPU milliseconds or None on the wall clock) of a decision."""
    return timing.elapsed_ms(), timing.cpu_ms() if isinstance(timing, CpuTiming) else None


class Match:
    def __init__(
        self,
        game: GameDefinition[GameOptions],
        seats: list[Seat],
        deal: DealKey,
        match_id: str,
        options: dict[str, object] | None = None,
        settings: MatchSettings | None = None,
        spectators: Spectators | None = None,
        seat_specs: list[str] | None = None,
        content_hashes: Sequence[str] = (),
        cpu_meters: Sequence[Callable[[], float] | None] = (),
    ) -> None:
        """cpu_meters: each seat's CPU seconds so far (its bot's control group), which the
        CPU clock (settings.clock == "cpu") counts; a seat without one is timed on the wall
        clock (a remote bot on a live ladder; a series or a tournament refuses to start with
        one: referee/hosting/cpu_clock.py)."""
        self.game = game
        self.seats = seats
        self.deal = deal
        self.match_id = match_id
        self.settings = settings or MatchSettings()
        self.state: GameState[GameOptions] = game.new_state(options, len(seats))
        self.spectators = spectators
        self.chance_rng = deal.chance()
        self.substitute_rng = deal.substitutes()
        self.clocks = [_Clock(bank_ms=float(self.settings.time_bank_ms)) for _ in seats]
        self.forfeits: list[Forfeit] = []
        specs = seat_specs or [""] * len(seats)
        hashes = list(content_hashes) or [""] * len(seats)
        # Replay records in order; events stay Event until the end (see _replay_records).
        self.records: list[BaseModel | Event] = [
            replay.Header(
                match_id=match_id,
                game=game.name,
                rules_version=game.rules_version,
                options=self.state.options.model_dump(mode="json"),
                seats=[
                    replay.SeatInfo(seat=i, name=s.name, spec=specs[i], content_hash=hashes[i])
                    for i, s in enumerate(seats)
                ],
                deal_key=deal.key.hex(),
                deal_salt=deal.salt.hex(),
                deal_commitment=deal.commitment,
                settings=self.settings,
                started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            )
        ]
        self._decision_ids = 0
        self._decisions_made = 0  # decisions in the history, counted as they are applied
        # Events each seat may see and has not been sent yet, serialized (see _broadcast).
        self._unsent: list[list[bytes]] = [[] for _ in seats]
        meters = list(cpu_meters) or [None] * len(seats)
        self.cpu_meters = meters if self.settings.clock == "cpu" else [None] * len(seats)
        if self.settings.clock == "cpu" and None in meters:
            # A remote bot on a live ladder: its processes are on its author's machine, which
            # no other bot shares, so its wall time is its own; its replay has no cpu_ms.
            walled = [i for i, meter in enumerate(meters) if meter is None]
            log.warning("cpu_clock_unavailable", match_id=match_id, wall_clock_seats=walled)

    # -- the loop -----------------------------------------------------------------------------
    async def run(self, no_shows: dict[int, str] | None = None) -> MatchOutcome:
        for seat, detail in (no_shows or {}).items():
            self._forfeit(seat, Misbehaviour.NO_SHOW, detail)
        if not self.forfeits:
            await self._start()
        while not self.forfeits and not self.state.is_over():
            if self.state.is_chance():
                outcome = sample_chance(self.state.chance_outcomes(), self.chance_rng)
                step = len(self.state.history)
                self.records.append(replay.ChanceRecord(step=step, outcome=outcome))
                self._broadcast(self.state.apply_chance(outcome))
            else:
                await self._decide_round()
        return await self._finish()

    async def _start(self) -> None:
        names = [s.name for s in self.seats]
        for seat, player in enumerate(self.seats):
            start = match_start_message(
                self.game, self.state.options, seat, names, self.match_id, self._told(seat)
            )
            start.deal_commitment = self.deal.commitment
            await self._guard(seat, player.start(start))
        public_start = match_start_message(
            self.game, self.state.options, 0, names, self.match_id, self._told(None)
        )
        public_start.ClearField("seat")
        public_start.deal_commitment = self.deal.commitment
        self._publish(pb.WatchResponse(match_start=public_start))

    def _told(self, seat: int | None) -> pb.TimeControl:
        """The seat's time control as its bot is told it: the clock its time counts in (the
        wall clock for a seat without a CPU meter, a remote bot's, whatever the match's);
        seat None: the match's, as watchers are told it."""
        told = pb.TimeControl(
            decision_ms=self.settings.decision_ms,
            time_bank_ms=self.settings.time_bank_ms,
            clock=pb.CLOCK_WALL,
        )
        cpu = self.settings.clock == "cpu" if seat is None else self.cpu_meters[seat] is not None
        if cpu:
            told.clock, told.wall_cap = pb.CLOCK_CPU, self.settings.wall_cap
        return told

    async def _decide_round(self) -> None:
        """Ask every seat that must decide, all at once, before applying any answer: a
        simultaneous choice stays hidden until everyone has chosen."""
        movers = self.state.to_move()
        requests = {seat: self._request(seat) for seat in movers}
        if len(movers) == 1:  # most decisions: no task to gather, one event-loop hop fewer
            answers = [await self._ask(movers[0], requests[movers[0]])]
        else:
            answers = await asyncio.gather(*(self._ask(seat, requests[seat]) for seat in movers))
        for seat, (action, (elapsed_ms, cpu_ms), queued_ms, cause) in zip(
            movers, answers, strict=True
        ):
            if action is None:
                continue  # forfeited
            step = len(self.state.history)
            self.records.append(
                replay.DecisionRecord(
                    step=step,
                    seat=seat,
                    action=action,
                    label=self.state.action_label(action),
                    time_ms=round(elapsed_ms, 3),
                    queued_ms=round(queued_ms, 3),
                    cpu_ms=None if cpu_ms is None else round(cpu_ms, 3),
                    substituted_for=cause,
                )
            )
            self._broadcast(self.state.apply(seat, action))
            self._decisions_made += 1

    def _request(self, seat: int) -> EncodedRequest:
        self._decision_ids += 1
        header = pb.DecisionRequest(
            match_id=self.match_id,
            decision_id=self._decision_ids,
            seat=seat,
            deadline_ms=self.settings.decision_ms,
            time_bank_ms=int(self.clocks[seat].bank_ms),
            decision_number=self._decisions_made,
        )
        return encode_request(self.state, header, self._take_unsent(seat))

    async def _ask(
        self, seat: int, request: EncodedRequest
    ) -> tuple[int | None, tuple[float, float | None], float, str | None]:
        """(action, (milliseconds the bot used on the wall clock, and of CPU under the CPU
        clock), milliseconds the decision waited in the referee (see DecisionTiming.queued_ms),
        misbehaviour that made the referee choose, if any)."""
        clock = self.clocks[seat]
        if clock.gone:
            return self._substitute(seat), (0.0, None), 0.0, Misbehaviour.CRASH.value
        broken = clock.broken  # _misbehaved clears it when the bot is played for from now on
        if broken is not None:
            return self._misbehaved(seat, broken), (0.0, None), 0.0, broken.kind.value
        timing = self._timing(seat, (self.settings.decision_ms + clock.bank_ms) / 1000.0)
        try:
            try:
                # asyncio.timeout, unlike wait_for, runs the decision in this task: no new task
                # and two event-loop hops fewer on every decision.
                async with asyncio.timeout(None) as deadline:
                    timing.arm(deadline)
                    decision = await self.seats[seat].decide(request, timing)
            except TimeoutError:
                raise SeatFailure(Misbehaviour.TIMEOUT, self._late(timing, clock)) from None
            finally:
                timing.finish()
            if isinstance(timing, CpuTiming) and timing.over_time():
                raise SeatFailure(Misbehaviour.TIMEOUT, self._late(timing, clock))
            used_ms = _used_ms(timing)
            clock.bank_ms = max(0.0, clock.bank_ms - max(0.0, used_ms - self.settings.decision_ms))
            action = self._check(seat, request, decision)
            return action, _spent(timing), timing.queued_ms(), None
        except SeatFailure as failure:
            failed = self._misbehaved(seat, failure)
            return failed, _spent(timing), timing.queued_ms(), failure.kind.value

    def _timing(self, seat: int, allowed_s: float) -> DecisionTiming:
        meter = self.cpu_meters[seat]
        if meter is None:
            return DecisionTiming(allowed_s, self.seats[seat])
        return CpuTiming(allowed_s, self.seats[seat], meter, self.settings.wall_cap)

    def _late(self, timing: DecisionTiming, clock: _Clock) -> str:
        allowance = f"{self.settings.decision_ms} ms + bank {clock.bank_ms:.0f} ms"
        if timing.stalled:
            return f"did not read its stream: the request could not be sent within {allowance}"
        if isinstance(timing, CpuTiming):
            if timing.capped:
                cap = f"{timing.wall_cap_s * 1000:.0f} ms"
                return f"no answer within the wall-clock cap of {cap} ({allowance} of CPU)"
            return f"used {timing.cpu_ms():.0f} ms of CPU, over {allowance} of CPU"
        return f"no answer within {allowance}"

    def _check(self, seat: int, request: EncodedRequest, decision: pb.Decision) -> int:
        if decision.decision_id != request.decision_id or decision.match_id != self.match_id:
            raise SeatFailure(
                Misbehaviour.MALFORMED,
                f"answer names decision {decision.decision_id} of match {decision.match_id!r}, "
                f"expected {request.decision_id} of {self.match_id!r}",
            )
        if decision.WhichOneof("choice") is None:
            raise SeatFailure(Misbehaviour.MALFORMED, "answer has neither an index nor an action")
        action = resolve_decision(self.state, seat, decision)
        if action is None:
            shown = (
                f"index {decision.index} of {request.legal_count} legal actions"
                if decision.WhichOneof("choice") == "index"
                else "a typed action that is not legal now"
            )
            raise SeatFailure(Misbehaviour.ILLEGAL_ACTION, f"chose {shown}")
        return action

    def _misbehaved(self, seat: int, failure: SeatFailure) -> int | None:
        clock = self.clocks[seat]
        clock.strikes += 1
        log.info(
            "misbehaviour",
            match_id=self.match_id,
            seat=seat,
            cause=failure.kind.value,
            detail=failure.detail,
        )
        policy = self.settings.policies.for_(failure.kind)
        if policy is Policy.FORFEIT or clock.strikes >= self.settings.policies.max_strikes:
            self._forfeit(seat, failure.kind, failure.detail)
            return None
        if failure.kind is Misbehaviour.CRASH:
            clock.gone = True
            clock.broken = None
        return self._substitute(seat)

    def _substitute(self, seat: int) -> int:
        legal = self.state.legal_actions(seat)
        return legal[int(self.substitute_rng.random() * len(legal))]

    def _forfeit(self, seat: int, cause: Misbehaviour, detail: str) -> None:
        if any(f.seat == seat for f in self.forfeits):
            return
        self.forfeits.append(Forfeit(seat, cause, detail))
        step = len(self.state.history)
        self.records.append(
            replay.ForfeitRecord(step=step, seat=seat, cause=cause.value, detail=detail)
        )

    # -- information flow ---------------------------------------------------------------------
    def _broadcast(self, events: list[Event]) -> None:
        """Record events and keep each for the seats that may see it until the seat's next
        decision request or the match's end carries it: one message per decision, not one per
        event (the wire benchmark's finding), and no seat learns of a move while it waits."""
        watched = self.spectators is not None and self.spectators.watching(self.match_id)
        for event in events:
            message = event.message
            message.match_id = self.match_id
            self.records.append(event)
            if event.audience is None and watched:
                self._publish(pb.WatchResponse(event=message))
            data = message.SerializeToString()  # once, however many seats may see it
            for seat, unsent in enumerate(self._unsent):
                if event.visible_to(seat):
                    unsent.append(data)
        if watched:
            self._publish(pb.WatchResponse(public_observation=self.state.public_observation()))

    def _take_unsent(self, seat: int) -> list[bytes]:
        unsent, self._unsent[seat] = self._unsent[seat], []
        return unsent

    async def _guard(self, seat: int, sending: object) -> None:
        """Send to a seat; a seat whose stream is gone is marked so, and decided for later."""
        try:
            await sending  # type: ignore[misc]
        except SeatFailure as failure:
            self.clocks[seat].broken = failure

    def _publish(self, message: pb.WatchResponse) -> None:
        if self.spectators is not None:
            self.spectators.publish(self.match_id, message)

    # -- the end ------------------------------------------------------------------------------
    async def _finish(self) -> MatchOutcome:
        result = self._result()
        forfeits = {f.seat: [f.cause.value, f.detail] for f in self.forfeits}
        self.records.append(
            replay.ResultRecord(
                ranks=list(result.ranks),
                scores=list(result.scores),
                reason=result.reason,
                forfeits=forfeits,
            )
        )
        records = self._replay_records()
        outcome = MatchOutcome(
            match_id=self.match_id,
            result=result,
            forfeits=list(self.forfeits),
            replay_path=None,  # set by whoever writes it (referee.hosting.match_table.save_replay)
            decisions=sum(1 for s in self.state.history if s.seat >= 0),
            records=records,
        )
        end = pb.MatchEnd(match_id=self.match_id, result=outcome.message())
        for seat, player in enumerate(self.seats):
            if self.clocks[seat].reachable:
                seat_end = pb.MatchEnd.FromString(
                    b"".join(framed(_END_EVENT, event) for event in self._take_unsent(seat))
                )
                seat_end.MergeFrom(end)
                await self._guard(seat, player.end(seat_end))
        self._publish(pb.WatchResponse(match_end=end))
        log.info("match_over", match_id=self.match_id, reason=result.reason, ranks=result.ranks)
        return outcome

    def _replay_records(self) -> list[BaseModel]:
        """The records, each event in its replay form. Converting an event to JSON is a sixth of
        the referee's work per decision: done here, once the match is over, no decision waits
        for it."""
        return [event_record(r) if isinstance(r, Event) else r for r in self.records]

    def _result(self) -> Result:
        if not self.forfeits:
            return self.state.result()
        return forfeit_result(len(self.seats), self.forfeits)


def forfeit_result(num_seats: int, forfeits: list[Forfeit]) -> Result:
    """Seats that forfeited share the last rank and score 0; the others share the first."""
    out = {f.seat for f in forfeits}
    scores = [0.0 if seat in out else 1.0 for seat in range(num_seats)]
    causes = "; ".join(f"seat {f.seat} forfeits ({f.cause.value}: {f.detail})" for f in forfeits)
    return Result.from_scores(scores, causes)


def event_record(event: Event) -> replay.EventRecord:
    return replay.EventRecord(
        step=event.message.step,
        audience=None if event.audience is None else sorted(event.audience),
        text=event.message.text,
        event=message_dict(event.message),
    )
