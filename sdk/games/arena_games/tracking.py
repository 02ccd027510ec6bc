"""A seat's view of a match, gathered from the messages it receives, for search in a bot's own
process: feed it the MatchStart, every Event and each request's observation and legal
actions, and it hands out the SeatView that the engines' world samplers read."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from arena.v1 import referee_pb2 as pb
from google.protobuf.message import Message

from arena_games import get_game
from arena_games.base import GameDefinition, GameOptions, GameState, SeatView, WorldSampler
from arena_games.legal_actions import legal_action_messages
from arena_games.match_messages import match_start_message
from arena_games.playout import sample_chance

_GAME_FIELDS = pb.Observation.DESCRIPTOR.oneofs_by_name["game"].fields


def wrap(observation: Message) -> pb.Observation:
    """The wire's Observation around a game's own observation message (what the SDK's act()
    receives)."""
    if isinstance(observation, pb.Observation):
        return observation
    for field in _GAME_FIELDS:
        if field.message_type is observation.DESCRIPTOR:
            wrapped = pb.Observation()
            getattr(wrapped, field.name).CopyFrom(observation)
            return wrapped
    raise ValueError(f"not a game's observation: {observation.DESCRIPTOR.full_name}")


class SeatTracker:
    """What one seat has been told in its current match. In a world a sampler draws, the seat's
    legal actions are those it was sent, in the same order: world.legal_actions(seat)[i] is the
    engine's action id of the request's legal action i."""

    def __init__(self) -> None:
        self.start: pb.MatchStart | None = None
        self.events: list[pb.Event] = []
        self.game: GameDefinition[GameOptions] | None = None

    def on_match_start(self, start: pb.MatchStart) -> None:
        self.start, self.events = start, []
        self.game = get_game(start.game)

    def on_event(self, event: pb.Event) -> None:
        self.events.append(event)

    def view(self, observation: Message, legal_actions: Sequence[pb.LegalAction] = ()) -> SeatView:
        """The view at a request: its observation (wrapped or the game's own) and legal
        actions, after every event received so far."""
        if self.start is None:
            raise ValueError("no MatchStart yet")
        return SeatView(self.start, tuple(self.events), wrap(observation), tuple(legal_actions))

    def reward(self, end: pb.MatchEnd) -> float:
        """This seat's reward in a match's result, for a search to back up (see rank_reward)."""
        if self.start is None:
            raise ValueError("no MatchStart yet")
        ranks = [0] * len(end.result.seats)
        for seat_result in end.result.seats:
            if seat_result.seat >= len(ranks):
                raise ValueError(f"the result names seat {seat_result.seat} of {len(ranks)}")
            ranks[seat_result.seat] = seat_result.rank
        if self.start.seat >= len(ranks):
            raise ValueError(f"the result names no seat {self.start.seat}")
        return rank_reward(ranks, self.start.seat)

    def sampler(
        self, observation: Message, legal_actions: Sequence[pb.LegalAction] = ()
    ) -> WorldSampler[GameOptions]:
        """Determinizations of the view at a request (see WorldSampler)."""
        if self.game is None:
            raise ValueError("no MatchStart yet")
        return self.game.world_sampler(self.view(observation, legal_actions))


def rank_reward(ranks: Sequence[int], seat: int) -> float:
    """A seat's reward in [0, 1] from the ranks of a result (0 best): the share of the other
    seats it finished ahead of, a tie counting half. Games score in their own units (Officers'
    Battle in points), so a search that mixes games backs up this instead of the scores."""
    others = [rank for other, rank in enumerate(ranks) if other != seat]
    if not others:
        return 1.0
    mine = ranks[seat]
    return sum(1.0 if mine < rank else 0.5 if mine == rank else 0.0 for rank in others) / len(
        others
    )


def random_views(
    game: GameDefinition[GameOptions],
    num_seats: int,
    seed: int,
    options: dict[str, object] | None = None,
) -> Iterator[tuple[GameState[GameOptions], SeatView]]:
    """One random game in process; at every decision, the true state and the view of each
    deciding seat, tracked from the MatchStart and the events visible to it, as a Match sends
    them."""
    state = game.new_state(options, num_seats)
    chance, policy_rng = random.Random(seed), random.Random(seed + 1)
    trackers = [SeatTracker() for _ in range(num_seats)]
    names = [f"bot{seat}" for seat in range(num_seats)]
    for seat, tracker in enumerate(trackers):
        tracker.on_match_start(match_start_message(game, state.options, seat, names, "views"))
    while not state.is_over():
        if state.is_chance():
            events = state.apply_chance(sample_chance(state.chance_outcomes(), chance))
        else:
            movers = state.to_move()
            for seat in movers:
                legal = legal_action_messages(state, seat)
                yield state, trackers[seat].view(state.observation(seat), legal)
            choices = [(s, policy_rng.choice(state.legal_actions(s))) for s in movers]
            events = [event for seat, action in choices for event in state.apply(seat, action)]
        for seat, tracker in enumerate(trackers):
            for event in events:
                if event.visible_to(seat):
                    tracker.on_event(event.message)
