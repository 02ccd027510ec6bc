"""Games in a bot author's own process, with no referee and no gRPC: a game stepped by hand
(LocalMatch, and `python -m arena_games`), and a match between in-process SDK bots
(play_local). A replay file is walked with arena_games.replay_file.steps.

The rules, chance and information flow are the same as over the wire; only the clocks,
misbehaviour policies and replays of the match runner are left out. An int deal is a practice
seed: the same seed deals the same cards here, in play_local and in LocalMatch.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.v1 import referee_pb2 as pb
from arena_sdk.bot import Bot, choice_index, unwrap

from arena_games import get_game
from arena_games.base import Event, GameDefinition, GameError, GameOptions, GameState, Result
from arena_games.deals import DealKey
from arena_games.legal_actions import legal_action_messages
from arena_games.match_messages import match_start_message, result_message
from arena_games.playout import sample_chance


def play_local(
    game: GameDefinition[GameOptions],
    bots: Sequence[Bot],
    deal: DealKey | int,
    options: dict[str, object] | None = None,
    match_id: str = "local",
) -> Result:
    """Play one match; bots[i] plays seat i. Chance comes from the deal's key as in a Match
    (an int is a practice seed). A bot's bad answer raises ValueError."""
    return play_local_game(game, bots, deal, options, match_id).result()


def play_local_game(
    game: GameDefinition[GameOptions],
    bots: Sequence[Bot],
    deal: DealKey | int,
    options: dict[str, object] | None = None,
    match_id: str = "local",
) -> GameState[GameOptions]:
    """play_local, giving the final state (its history, turns, the board at the end)."""
    state = game.new_state(options, len(bots))
    key = deal if isinstance(deal, DealKey) else DealKey.practice(deal)
    rng = key.chance()
    for seat, bot in enumerate(bots):
        start = match_start_message(game, state.options, seat, [b.name for b in bots], match_id)
        start.deal_commitment = key.commitment  # as a Match sends it
        bot.on_match_start(start)
    while not state.is_over():
        if state.is_chance():
            _tell(bots, state.apply_chance(sample_chance(state.chance_outcomes(), rng)))
            continue
        # Ask every seat that must decide before applying any answer: simultaneous choices stay
        # hidden from each other.
        choices = []
        for seat in state.to_move():
            legal = legal_action_messages(state, seat)
            observation = unwrap(state.observation(seat))
            index = choice_index(bots[seat].act(observation, legal), legal)
            choices.append((seat, state.legal_actions(seat)[index]))
        for seat, action in choices:
            _tell(bots, state.apply(seat, action))
    result = state.result()
    end = pb.MatchEnd(match_id=match_id, result=result_message(result))
    for bot in bots:
        bot.on_match_end(end)
    return state


def _tell(bots: Sequence[Bot], events: list[Event]) -> None:
    for seat, bot in enumerate(bots):
        for event in events:
            if event.visible_to(seat):
                bot.on_event(event.message)


class LocalMatch:
    """One game stepped by hand or by a script. Chance is dealt as soon as the game reaches it,
    from the practice seed's key, so the game only ever waits for a decision."""

    def __init__(
        self,
        game: str | GameDefinition[GameOptions],
        num_seats: int = 2,
        seed: int = 0,
        options: dict[str, object] | None = None,
    ) -> None:
        self.game = get_game(game) if isinstance(game, str) else game
        self.state = self.game.new_state(options, num_seats)
        self._chance = DealKey.practice(seed).chance()
        self.events: list[Event] = []  # every event so far, each with its audience
        self._deal()

    def to_move(self) -> tuple[int, ...]:
        """The seats that must decide now (none once the game is over)."""
        return () if self.state.is_over() else self.state.to_move()

    def legal(self, seat: int | None = None) -> list[pb.LegalAction]:
        """The legal actions of seat (the first seat to move by default) as the referee would
        send them: index, label and typed action."""
        return legal_action_messages(self.state, self._mover(seat))

    def play(self, choice: int | str, seat: int | None = None) -> list[Event]:
        """Play the legal action with this index or label for seat (the first seat to move by
        default), then deal any chance that follows; the events it caused. A GameError names
        a choice that is not legal."""
        mover = self._mover(seat)
        legal = self.legal(mover)
        index = _index_of(choice, legal)
        events = self.state.apply(mover, self.state.legal_actions(mover)[index])
        self.events += events
        return events + self._deal()

    def board(self, seat: int | None = None) -> str:
        """The table as seat sees it (None: as a spectator sees it)."""
        return self.state.render(seat)

    def is_over(self) -> bool:
        return self.state.is_over()

    def result(self) -> Result:
        return self.state.result()

    def _mover(self, seat: int | None) -> int:
        movers = self.to_move()
        if not movers:
            raise GameError("the game is over")
        if seat is None:
            return movers[0]
        if seat not in movers:
            raise GameError(f"seat {seat} is not to move; seats to move: {list(movers)}")
        return seat

    def _deal(self) -> list[Event]:
        dealt: list[Event] = []
        while self.state.is_chance() and not self.state.is_over():
            outcome = sample_chance(self.state.chance_outcomes(), self._chance)
            dealt += self.state.apply_chance(outcome)
        self.events += dealt
        return dealt


def _index_of(choice: int | str, legal: Sequence[pb.LegalAction]) -> int:
    if isinstance(choice, str):
        for action in legal:
            if action.label == choice:
                return action.index
        labels = ", ".join(repr(action.label) for action in legal)
        raise GameError(f"no legal action is labelled {choice!r}; legal: {labels}")
    if not 0 <= choice < len(legal):
        raise GameError(f"no legal action {choice}; legal indices are 0..{len(legal) - 1}")
    return choice
