"""The Strato-Sphere strategy bot: legal, fast, takes a win on sight, prevents attacks on its
nodes, and beats the random bot in at least 80% of 200 seeded two-player games from each seat."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, cast

from arena.v1 import referee_pb2 as pb
from arena_games import cards, get_game
from arena_games.base import GameOptions, GameState
from arena_games.legal_actions import legal_action_messages
from arena_games.local_play import play_local
from arena_games.strato_sphere import StratoSphereState
from arena_games.strato_sphere.rules import BLACK, NO_FORCE, RED, attack_action, turn_moves
from arena_sdk.bot import unwrap

from example_bots.random_bot import RandomBot
from example_bots.strato_sphere_bot import StratoSphereBot
from referee.bots.launcher import examples

GAMES = 400
MIN_WIN_RATE = 0.80
# Timed in the CPU time of the deciding thread: other tests on the machine's cores (the suite
# runs on parallel workers) do not make the bot's decisions slower.
MAX_MS_PER_DECISION = 10.0
STRATO_SPHERE = get_game("strato-sphere")


class TimedBot(StratoSphereBot):
    """The strategy bot, checking that its answers are legal and timing them."""

    def __init__(self) -> None:
        super().__init__()
        self.decisions = 0
        self.seconds = 0.0

    def act(self, observation: Any, legal_actions: Sequence[pb.LegalAction]) -> int:
        start = time.thread_time()
        choice = super().act(observation, legal_actions)
        self.seconds += time.thread_time() - start
        self.decisions += 1
        assert 0 <= choice < len(legal_actions)
        return choice


def table(**placed: Any) -> StratoSphereState:
    """A two-seat state after the deal and the first round (so a turn of three moves): named
    face-up cards, hands and forces, the rest of the deck spread over the stacks (three each)
    and the pile."""
    state = STRATO_SPHERE.new_state(None, 2)
    assert isinstance(state, StratoSphereState)
    used: set[int] = set()
    for node, label in placed.get("face_up", {}).items():
        state.face_up[node] = cards.parse(label)
        used.add(state.face_up[node])
    for seat, labels in placed.get("hands", {}).items():
        state.hands[seat] = sorted(cards.parse(x) for x in labels)
        used.update(state.hands[seat])
    rest = [c for c in range(52) if c not in used]
    for node in range(6):
        state.stacks[node] = [rest.pop(), rest.pop(), rest.pop()]
    state.pile = sorted(rest)
    state.forces = placed.get("forces", [RED, BLACK])
    state.dealt = 30
    state.current = placed.get("current", 0)
    state.turns = placed.get("turns", 2)
    state.moves_left = turn_moves(state.turns, 2)
    return state


def choose(state: StratoSphereState) -> str:
    seat = state.to_move()[0]
    legal = legal_action_messages(cast(GameState[GameOptions], state), seat)
    index = StratoSphereBot().act(unwrap(state.observation(seat)), legal)
    return legal[index].label


def test_registered_as_an_example() -> None:
    assert examples()["strato-sphere"] == "example_bots.strato_sphere_bot:StratoSphereBot"


def test_takes_a_zone_when_one_deploy_does_it() -> None:
    state = table(face_up={3: "2h", 4: "3h"}, hands={0: ["4h", "Kh", "Ks"]})
    assert choose(state).endswith(" 5") and choose(state).startswith("deploy")


def test_attacks_to_clear_the_way_when_that_wins_within_the_turn() -> None:
    state = table(face_up={3: "2h", 4: "3h", 5: "5s", 0: "9h"}, hands={0: ["4h"]})
    assert choose(state) == "attack 0>5"


def test_first_reveal_is_at_an_end_of_its_zone_next_to_the_opponents() -> None:
    """Under reach the first reveal must be in the bot's own zone; an end node (0 or 2) touches
    the opponent's zone, so the node it takes lets it deploy there next. So too in the game's
    first turn, of one move (rules v3)."""
    for turns in (0, 2):
        hand = ["2h", "3h", "4d", "5c", "6s", "7c"]
        state = table(hands={0: hand}, forces=[NO_FORCE, NO_FORCE], turns=turns)
        assert state.observation(0).strato_sphere.moves_left == (1 if turns == 0 else 3)
        assert choose(state) in {"reveal 0", "reveal 2"}


def test_prevents_an_attack_on_its_node_with_the_lowest_card_that_does_it() -> None:
    state = table(face_up={2: "Th", 3: "Ts"}, hands={1: ["Qh", "Jd", "9h", "2c"]})
    state.apply(0, attack_action(2, 3))
    assert choose(state) == "prevent Jd"


def test_deterministic() -> None:
    results = [play_local(STRATO_SPHERE, [StratoSphereBot(), RandomBot(4)], deal=5) for _ in "ab"]
    assert results[0] == results[1]


def test_four_seats_play_legally() -> None:
    for game in range(4):
        bots: list[StratoSphereBot | RandomBot] = [RandomBot(game * 4 + s) for s in range(4)]
        bots[game] = TimedBot()
        play_local(STRATO_SPHERE, bots, deal=50 + game)


def test_beats_random_in_four_games_out_of_five_from_either_seat_and_fast() -> None:
    wins = [0, 0]
    bot = TimedBot()
    for game in range(GAMES):
        seat = game % 2
        bots: list[StratoSphereBot | RandomBot] = [RandomBot(10_000 + game)] * 2
        bots[seat] = bot
        result = play_local(STRATO_SPHERE, bots, deal=game)
        wins[seat] += result.ranks[seat] == 0 and result.ranks[1 - seat] == 1
    rates = [w / (GAMES // 2) for w in wins]
    ms = 1000 * bot.seconds / bot.decisions
    shown = ", ".join(f"{rate:.1%} from seat {seat}" for seat, rate in enumerate(rates))
    print(f"strato-sphere bot: {shown} over {GAMES} games, {ms:.2f} ms per decision")
    assert min(rates) >= MIN_WIN_RATE
    assert ms < MAX_MS_PER_DECISION
