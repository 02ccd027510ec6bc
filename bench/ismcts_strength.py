"""How strong example:ismcts is, per game: its score against example:random and against the game's
strategy bot at a time budget per decision (0.1 s and 1 s by default), two seats, alternating
seats over practice deals, with a 95% interval (Wilson's). Not a speed benchmark and not in
bench.all: the baselines are the other bots, played in the same run. Goals (issue 20): at
least 90% against random in every game, ahead of the strategy bot where the budget allows.

Games are played in process (arena_games.local_play: the bot gets the same messages as over
the wire and searches from them alone) by --jobs worker processes, one game each at a time; a
time budget means fewer iterations on a loaded machine, so the load is kept beside every row and
each row counts the iterations the bot made per decision. Finished games are appended to
bench/results/ismcts_strength.jsonl as they end, and a run takes up again where one stopped.

`--searcher oracle` plays the same search on the true state instead of drawn worlds: a bot that
cheats, so not a contestant, but the ceiling of this search in a game at a budget. Where the oracle
itself falls short of a goal, the game (its luck) limits the fair bot, not its sampling.
`--searcher observing` is the fair bot with `split_on_sight`: its tree branches after each step on
what its seat saw.

Run: .venv/bin/python -m bench.ismcts_strength [--games N] [--budgets 0.1 1] [--games-only NAME..]
     [--opponents random strategy] [--searcher ismcts|oracle|observing] [--jobs J]
Writes bench/results/ismcts_strength.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass

from arena.v1 import referee_pb2 as pb
from arena_games import GAMES, get_game
from arena_games.base import GameOptions, GameState
from arena_games.local_play import play_local
from arena_games.tracking import rank_reward
from arena_sdk.bot import Bot

from bench.bench_report import RESULTS, Goal, Report, emit
from example_bots.ismcts_bot import IsmctsBot
from example_bots.random_bot import RandomBot
from referee.bots.launcher import examples

LOG = RESULTS / "ismcts_strength.jsonl"
# Searchers other than example:ismcts as it plays by default, reported without its goals.
VARIANTS = {
    "oracle": "The same search on the true state (a cheat: the ceiling of the search, not a bot)",
    "observing": "example:ismcts with split_on_sight: its tree branches on what its seat saw",
}
Z95 = 1.96


@dataclass(frozen=True)
class Game:
    game: str
    opponent: str  # random or strategy
    budget_s: float
    deal: int
    seat: int  # the search bot's
    searcher: str = "ismcts"  # or oracle (the same search on the true state), or observing

    def key(self) -> tuple[str, str, float, int, str]:
        return (self.game, self.opponent, self.budget_s, self.deal, self.searcher)


@dataclass(frozen=True)
class Played:
    game: Game
    score: float  # the search bot's rank reward: 1 a win, 0.5 a draw, 0 a loss
    iterations: float  # its mean per decision that it searched
    load: float


def opponent(kind: str, game: str, deal: int) -> Bot:
    if kind == "random":
        return RandomBot(deal)
    module, _, name = examples()[game].partition(":")
    bot: Bot = getattr(__import__(module, fromlist=[name]), name)()
    return bot


class _Counting(IsmctsBot):
    def __init__(self, seconds: float, seed: int, split_on_sight: bool) -> None:
        super().__init__(seconds=seconds, seed=seed, split_on_sight=split_on_sight)
        self.counts: list[int] = []

    def act(self, observation: object, legal_actions: object) -> int:
        choice = super().act(observation, legal_actions)  # type: ignore[arg-type]
        if len(legal_actions) > 1:  # type: ignore[arg-type]
            self.counts.append(self.searched)
        return choice


class _Truth:
    """The oracle's stand-in for a SeatTracker: every world it hands out is a clone of the
    match's true state, which _Watched catches as play_local makes it."""

    def __init__(self, states: list[GameState[GameOptions]]) -> None:
        self.states = states
        self.seat = 0

    def on_match_start(self, match: pb.MatchStart) -> None:
        self.seat = match.seat

    def on_event(self, event: pb.Event) -> None:
        pass

    def sampler(self, observation: object, legal_actions: object) -> _Truth:
        return self

    def sample(self, rng: random.Random) -> GameState[GameOptions]:
        return self.states[-1].clone()


class _Watched:
    """A game definition that keeps every state it makes."""

    def __init__(self, name: str) -> None:
        self.definition = get_game(name)
        self.states: list[GameState[GameOptions]] = []

    def new_state(
        self, options: GameOptions | dict[str, object] | None, seats: int
    ) -> GameState[GameOptions]:
        state = self.definition.new_state(options, seats)
        self.states.append(state)
        return state

    def __getattr__(self, name: str) -> object:
        return getattr(self.definition, name)


def play(game: Game) -> Played:
    definition = _Watched(game.game)
    search = _Counting(game.budget_s, game.deal, game.searcher == "observing")
    if game.searcher == "oracle":
        search.tracker = _Truth(definition.states)  # type: ignore[assignment]
    other = opponent(game.opponent, game.game, game.deal)
    bots: list[Bot] = [search, other] if game.seat == 0 else [other, search]
    result = play_local(definition, bots, deal=game.deal)  # type: ignore[arg-type]
    counts = search.counts or [0]
    return Played(
        game, rank_reward(result.ranks, game.seat), sum(counts) / len(counts), os.getloadavg()[0]
    )


def planned(args: argparse.Namespace) -> Iterator[Game]:
    for budget in args.budgets:
        for name in args.games_only or sorted(GAMES):
            for kind in args.opponents:
                for deal in range(args.games):
                    # Each deal from both seats in turn: deal 2k and 2k+1 share cards.
                    yield Game(name, kind, budget, deal // 2, deal % 2, args.searcher)


Done = dict[tuple[str, str, float, int, str, int], Played]


def done_games() -> Done:
    done: Done = {}
    if LOG.exists():
        for line in LOG.read_text().splitlines():
            record = json.loads(line)
            played = Played(
                Game(**record["game"]), record["score"], record["iterations"], record["load"]
            )
            done[(*played.game.key(), played.game.seat)] = played
    return done


def wilson(score: float, games: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a mean score over games. A draw's 1/2 makes a score
    vary less than a win rate of the same mean, so p(1-p) overstates the spread: the interval
    is on the safe side. Unlike mean +- 1.96 standard errors, it is not empty at 0% or 100%."""
    z2 = Z95 * Z95
    centre = (score + z2 / (2 * games)) / (1 + z2 / games)
    half = Z95 / (1 + z2 / games) * math.sqrt(score * (1 - score) / games + z2 / (4 * games**2))
    # The interval always holds the score; min and max only undo rounding at 0% and 100%.
    return max(0.0, min(score, centre - half)), min(1.0, max(score, centre + half))


def row(games: list[Played]) -> dict[str, object]:
    first = games[0].game
    mean = sum(g.score for g in games) / len(games)
    low, high = wilson(mean, len(games))
    return {
        "game": first.game,
        "opponent": first.opponent,
        "budget_s": first.budget_s,
        "games": len(games),
        "score_pct": round(100 * mean, 1),
        "ci95_pct": f"{100 * low:.1f}-{100 * high:.1f}",
        "iterations_per_decision": round(sum(g.iterations for g in games) / len(games), 1),
        "load": round(max(g.load for g in games), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--budgets", type=float, nargs="+", default=[0.1, 1.0])
    parser.add_argument("--games-only", nargs="*", choices=sorted(GAMES))
    parser.add_argument("--opponents", nargs="+", default=["random", "strategy"])
    parser.add_argument("--searcher", choices=["ismcts", *VARIANTS], default="ismcts")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    done = done_games()
    todo = [g for g in planned(args) if (*g.key(), g.seat) not in done]
    print(f"{len(todo)} games to play, {len(done)} already in {LOG}", flush=True)
    LOG.parent.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(args.jobs) as pool, LOG.open("a") as log:
        for future in as_completed([pool.submit(play, g) for g in todo]):
            played = future.result()
            done[(*played.game.key(), played.game.seat)] = played
            log.write(json.dumps(asdict(played)) + "\n")
            log.flush()
    emit(report(args, done))


def report(args: argparse.Namespace, done: Done) -> Report:
    groups: dict[tuple[str, str, float], list[Played]] = {}
    for game in planned(args):
        played = done.get((*game.key(), game.seat))
        if played:
            groups.setdefault((game.game, game.opponent, game.budget_s), []).append(played)
    rows = [row(games) for games in groups.values()]
    if args.searcher in VARIANTS:
        return Report(
            f"ismcts_{args.searcher}",
            VARIANTS[args.searcher],
            rows,
            facts={"loadavg_at_report": round(os.getloadavg()[0], 2), "log": str(LOG)},
            notes=["figures only: the goals are example:ismcts's, in ismcts_strength"],
        )
    goals = [
        Goal(
            f"{r['game']} at {r['budget_s']} s: at least 90% against random",
            float(str(r["score_pct"])) >= 90,
            f"{r['score_pct']}% ({r['ci95_pct']}), {r['games']} games",
        )
        for r in rows
        if r["opponent"] == "random"
    ]
    # Ahead means shown ahead: the whole 95% interval above 50%, not the score alone.
    goals += [
        Goal(
            f"{r['game']} at {r['budget_s']} s: ahead of the strategy bot (interval above 50%)",
            float(str(r["ci95_pct"]).split("-")[0]) > 50,
            f"{r['score_pct']}% ({r['ci95_pct']}), {r['games']} games",
        )
        for r in rows
        if r["opponent"] == "strategy"
    ]
    return Report(
        "ismcts_strength",
        "example:ismcts's score (win 1, draw 1/2) against the other example bots, two seats",
        rows,
        facts={"loadavg_at_report": round(os.getloadavg()[0], 2), "log": str(LOG)},
        goals=goals,
        notes=["a row's load is the highest 1-minute load average seen at the end of its games"],
    )


if __name__ == "__main__":
    main()
