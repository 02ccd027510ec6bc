"""The Capture the Commander state machine: deal, attacks, wars, gifts, captures and deals.

Phases: DEALING (chance steps, one card at a time into the next seat's next slot), TURN (the
current seat attacks or, with teams, gives), WAR (the battle's seats choose a card to flip, at
the same time), OVER.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Sequence
from functools import cache, partial
from typing import TYPE_CHECKING, TypeVar

from arena.v1 import referee_pb2 as pb
from pydantic import Field

from arena_games import cards
from arena_games.base import (
    Event,
    GameError,
    GameOptions,
    GameState,
    OptionsError,
    Result,
    SeatView,
    Step,
    WorldSampler,
    uniform_draw,
)
from arena_games.capture_the_commander import actions, view
from arena_games.capture_the_commander.formation import (
    ADJACENT_BITS,
    ALL_HOLES,
    BIT,
    COMMANDER,
    DEAL_LIMIT,
    DECISION_CAP,
    EMPTY,
    GIFTABLE_SLOTS,
    OUTCOMES,
    SLOTS,
    attackers,
    exposed,
    new_formation,
)
from arena_games.capture_the_commander.view import REFEREE_ONLY

if TYPE_CHECKING:
    from arena_games.capture_the_commander.commander_worlds import Blanks

Row = TypeVar("Row")

DEALING, TURN, WAR, OVER = "dealing", "turn", "war", "over"
CAPTURE_POINTS_TEAMS = 3
DEFAULT_TARGET_SCORE = 25
FOLLOWERS = {
    n: tuple(tuple((s + k) % n for k in range(1, n + 1)) for s in range(n)) for n in (2, 3, 4)
}
"""Seat count -> seat -> every seat in turn order after it (itself last)."""


class CaptureTheCommanderOptions(GameOptions):
    """The seed's variations; all off by default."""

    twos_beat_aces: bool = False
    """A two beats an ace (and still loses to everything else)."""
    one_suit_each: bool = False
    """Seat i gets the whole of suit i (clubs, diamonds, hearts, spades)."""
    scoring: bool = False
    """The scoring option, to the seed's target of 25 unless target_score says otherwise."""
    target_score: int | None = Field(default=None, ge=1)
    """The scoring option with its own target: deals go on until a seat (or team) has this many
    points. Unset, and scoring off: one deal is the whole game."""
    teams: bool = False
    """Four seats, 0+2 against 1+3, with gifts between allies."""

    @property
    def target(self) -> int | None:
        """Points that win the match when the scoring option is on; None for a one-deal game."""
        if self.target_score is not None:
            return self.target_score
        return DEFAULT_TARGET_SCORE if self.scoring else None


class Battle:
    """One attack under way: the slots each side has flipped, and the war choices pending."""

    __slots__ = (
        "attacker",
        "attacker_slots",
        "choice_steps",
        "choices",
        "defender",
        "defender_slots",
        "sole",
        "waiting",
        "wars",
    )

    def __init__(self, attacker: int, slot: int, defender: int, target: int) -> None:
        self.attacker = attacker
        self.defender = defender
        self.attacker_slots = [slot]
        self.defender_slots = [target]
        self.wars = 0
        self.waiting: list[int] = []
        self.choices: dict[int, int] = {}
        # History index of each pending choice, so resample can rewrite it.
        self.choice_steps: dict[int, int] = {}
        # True when only one side could flip: its flip wins the battle.
        self.sole = False

    def slots_of(self, seat: int) -> list[int]:
        return self.attacker_slots if seat == self.attacker else self.defender_slots

    def other(self, seat: int) -> int:
        return self.defender if seat == self.attacker else self.attacker

    def copy(self) -> Battle:
        other = Battle(self.attacker, 0, self.defender, 0)
        other.attacker_slots = list(self.attacker_slots)
        other.defender_slots = list(self.defender_slots)
        other.wars = self.wars
        other.waiting = list(self.waiting)
        other.choices = dict(self.choices)
        other.choice_steps = dict(self.choice_steps)
        other.sole = self.sole
        return other

    def key(self) -> tuple[object, ...]:
        return (
            self.attacker,
            self.defender,
            tuple(self.attacker_slots),
            tuple(self.defender_slots),
            self.wars,
            tuple(self.waiting),
            tuple(sorted(self.choices.items())),
            tuple(sorted(self.choice_steps.items())),
            self.sole,
        )


class CaptureTheCommanderState(GameState[CaptureTheCommanderOptions]):
    def __init__(self, options: CaptureTheCommanderOptions, num_seats: int) -> None:
        super().__init__(options, num_seats)
        if options.teams and num_seats != 4:
            raise OptionsError("capture-the-commander: teams needs exactly 4 seats")
        self.scores = [0] * num_seats
        self.deal = 0
        self.over_reason = ""
        self.final: Result | None = None
        # Per seat, the seats of the other side(s); opponents() keeps those still in the deal.
        self.rivals = _rivals(num_seats, options.teams)
        # The places nobody can see and the cards to fill them (resample), made once per
        # position; set again whenever the history's length is not the one it was made at.
        self.blanks: Blanks | None = None
        self._start_deal()

    def _start_deal(self) -> None:
        n = self.num_seats
        self.deal += 1
        # The cap guards one deal: a long scoring match must not be cut short by it.
        self.decisions = 0
        self.first_seat = (self.deal - 1) % n
        self.formations = [new_formation() for _ in range(n)]
        # holes[seat]: the empty slots of its formation as a bitmask (formation.BIT), kept in
        # step with every change to formations: the legal lists are looked up by it.
        self.holes = [ALL_HOLES] * n
        # known[seat][slot]: the card there has been revealed to everyone.
        self.known = [[False] * 14 for _ in range(n)]
        self.removed: list[list[int]] = [[] for _ in range(n)]
        self.unseen_out: list[list[int]] = [[] for _ in range(n)]
        self.deck = list(cards.DECK)
        self.dealt = 0
        self.deal_start = len(self.history)
        # Where in the deal's order each card in play was dealt (its chance step is deal_start
        # plus that), per seat and slot, followed through gifts; and the same for each card
        # that left play unseen, in unseen_out's order. Public (the deal's order is the rules'),
        # they let resample tell a hidden card's suit with one_suit_each and rewrite its chance
        # step without looking at it. Replaced, never changed in place, so clones share them.
        self.deal_index = DEAL_INDEX[n]
        self.unseen_deal_index: tuple[tuple[int, ...], ...] = ((),) * n
        self.in_game = [True] * n
        self.out_order: list[int] = []
        self.current = self.first_seat
        self.battle: Battle | None = None
        self.phase = DEALING

    # -- whose move ---------------------------------------------------------------------------
    def is_chance(self) -> bool:
        return self.phase == DEALING

    def receiver(self) -> tuple[int, int]:
        """(seat, slot) of the next card dealt: round by round, seat by seat."""
        slot, seat = divmod(self.dealt, self.num_seats)
        return seat, slot + 1

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.phase != DEALING:
            return []
        pool = self.deck
        if self.options.one_suit_each:
            # The deck stays sorted, so the receiver's suit is one run of it.
            first = 13 * (self.dealt % self.num_seats)
            start = bisect_left(pool, first)
            pool = pool[start : bisect_left(pool, first + 13, start)]
        return uniform_draw(pool, len(cards.DECK))

    def _is_chance_outcome(self, outcome: int) -> bool:
        """A card still in the deck, of the receiver's suit with one_suit_each."""
        if self.phase != DEALING:
            return False
        if self.options.one_suit_each and outcome // 13 != self.dealt % self.num_seats:
            return False
        return outcome in self.deck

    def to_move(self) -> tuple[int, ...]:
        if self.phase == TURN:
            return (self.current,)
        if self.phase == WAR:
            assert self.battle is not None
            return tuple(self.battle.waiting)
        return ()

    def is_over(self) -> bool:
        return self.phase == OVER

    def result(self) -> Result:
        if self.final is None:
            raise GameError("the game is not over")
        return self.final

    # -- who is who ---------------------------------------------------------------------------
    def team(self, seat: int) -> int:
        return seat % 2 if self.options.teams else seat

    def ally(self, seat: int) -> int | None:
        return (seat + 2) % 4 if self.options.teams else None

    def opponents(self, seat: int) -> list[int]:
        """Seats still in the deal that this seat may attack: everyone else, or with teams the
        other team."""
        return [o for o in self.rivals[seat] if self.in_game[o]]

    def sides_in(self) -> list[int]:
        """Teams (or seats) with a player still in the deal."""
        return sorted({self.team(s) for s in range(self.num_seats) if self.in_game[s]})

    def cards_in_play(self, seat: int) -> int:
        return sum(1 for s in SLOTS if self.formations[seat][s] != EMPTY)

    # -- legal actions ------------------------------------------------------------------------
    def _legal_actions(self, seat: int) -> list[int]:
        if self.phase == WAR:
            return [actions.flip_action(s) for s in self.war_options(seat)]
        holes, in_game = self.holes, self.in_game
        rivals = [o for o in self.rivals[seat] if in_game[o]]
        if len(rivals) == 1:  # a duel: two seats, or the last rival left
            columns: Sequence[int] = _attack_columns(rivals[0], holes[rivals[0]])
        else:
            columns = [column for o in rivals for column in _attack_columns(o, holes[o])]
        # Rows and columns both ascend and a column is below 52, so the list comes out sorted;
        # gifts have higher ids than every attack.
        legal = [row + column for row in _attack_rows(holes[seat]) for column in columns]
        if self.options.teams:
            legal += self.gifts(seat)
        return legal

    def gifts(self, seat: int) -> list[int]:
        """With teams: each never-revealed non-commander card into each empty non-commander
        slot of an ally still in the deal."""
        ally = self.ally(seat)
        if ally is None or not self.in_game[ally]:
            return []
        mine, theirs = self.formations[seat], self.formations[ally]
        givable = [s for s in GIFTABLE_SLOTS if mine[s] != EMPTY and not self.known[seat][s]]
        places = [s for s in GIFTABLE_SLOTS if theirs[s] == EMPTY]
        return [actions.gift_action(s, p) for s in givable for p in places]

    def war_options(self, seat: int) -> list[int]:
        """The seat's cards in play, not yet flipped in this battle, adjacent to one it has."""
        assert self.battle is not None
        flipped = self.battle.slots_of(seat)
        near = 0
        for s in flipped:
            near |= ADJACENT_BITS[s]
        near &= ~self.holes[seat]
        return [s for s in SLOTS if near & BIT[s] and s not in flipped]

    # -- chance -------------------------------------------------------------------------------
    def _apply_chance(self, outcome: int) -> list[Event]:
        step = len(self.history)
        dealt = self.dealt
        row, seat = divmod(dealt, self.num_seats)
        slot = row + 1
        events = []
        if dealt == 0:
            self.deal_start = step
            events.append(Event(partial(view.deal_started, step, self.deal, self.first_seat)))
        self.deck.remove(outcome)
        self.formations[seat][slot] = outcome
        self.holes[seat] &= ~BIT[slot]
        self.dealt = dealt + 1
        events.append(Event(partial(view.card_dealt, step, seat, slot, outcome), REFEREE_ONLY))
        if dealt + 1 == 13 * self.num_seats:
            self.phase = TURN
        return events

    # -- decisions ----------------------------------------------------------------------------
    def _apply_action(self, seat: int, action: int) -> list[Event]:
        step = len(self.history)
        self.decisions += 1
        kind, slot, defender, target = actions.PARTS[action]
        if kind == actions.ATTACK:
            events = self._attack(step, seat, slot, defender, target)
        elif kind == actions.GIFT:
            events = self._gift(step, seat, slot, target)
        else:
            events = self._war_choice(step, seat, slot)
        if self.phase != OVER and self.decisions >= DECISION_CAP:
            events += self._end_by_cap(step)
        return events

    def _attack(self, step: int, seat: int, slot: int, defender: int, target: int) -> list[Event]:
        mine, theirs = self.formations[seat][slot], self.formations[defender][target]
        self.known[seat][slot] = True
        self.known[defender][target] = True
        events = [
            Event(partial(view.attack_declared, step, seat, slot, defender, target)),
            Event(partial(view.card_revealed, step, seat, slot, mine)),
            Event(partial(view.card_revealed, step, defender, target, theirs)),
        ]
        outcome = OUTCOMES[self.options.twos_beat_aces][mine][theirs]
        # Most battles end at once: only a tie (a war) needs a Battle to keep its flips.
        if outcome > 0:
            events += self._win(step, seat, defender, (target,), seat)
        elif outcome < 0:
            events += self._win(step, defender, seat, (slot,), seat)
        else:
            self.battle = Battle(seat, slot, defender, target)
            events += self._war(step)
        return events

    def _reveal(self, step: int, seat: int, slot: int) -> Event:
        self.known[seat][slot] = True
        return Event(partial(view.card_revealed, step, seat, slot, self.formations[seat][slot]))

    def _compare(self, step: int) -> list[Event]:
        """Compare the last card each side flipped: the higher wins, a tie is a war."""
        battle = self.battle
        assert battle is not None
        attacker, defender = battle.attacker, battle.defender
        mine = self.formations[attacker][battle.attacker_slots[-1]]
        theirs = self.formations[defender][battle.defender_slots[-1]]
        outcome = OUTCOMES[self.options.twos_beat_aces][mine][theirs]
        if outcome:
            return self._war_won(step, attacker if outcome > 0 else defender)
        return self._war(step)

    def _war(self, step: int) -> list[Event]:
        battle = self.battle
        assert battle is not None
        battle.wars += 1
        able = tuple(s for s in (battle.attacker, battle.defender) if self.war_options(s))
        events = [Event(partial(view.war_declared, step, able))]
        if not able:
            return events + self._drawn(step)
        battle.waiting = sorted(able)
        battle.sole = len(able) == 1
        self.phase = WAR
        return events

    def _war_choice(self, step: int, seat: int, slot: int) -> list[Event]:
        battle = self.battle
        assert battle is not None
        battle.choices[seat] = slot
        battle.choice_steps[seat] = step
        battle.waiting.remove(seat)
        events = [
            Event(partial(view.war_choice_private, step, seat, slot), frozenset((seat,))),
            Event(partial(view.war_choice_public, step, seat)),
        ]
        if battle.waiting:
            return events
        flippers = [s for s in (battle.attacker, battle.defender) if s in battle.choices]
        for s in flippers:
            battle.slots_of(s).append(battle.choices[s])
            events.append(self._reveal(step, s, battle.choices[s]))
        battle.choices.clear()
        battle.choice_steps.clear()
        self.phase = TURN
        if battle.sole:
            # The only side that could flip has more cards in the battle: it wins.
            return events + self._war_won(step, flippers[0])
        return events + self._compare(step)

    def _war_won(self, step: int, winner: int) -> list[Event]:
        battle = self.battle
        assert battle is not None
        if winner == battle.attacker:
            loser, lost = battle.defender, battle.defender_slots
        else:
            loser, lost = battle.attacker, battle.attacker_slots
        return self._win(step, winner, loser, tuple(lost), battle.attacker)

    def _win(
        self, step: int, winner: int, loser: int, lost: tuple[int, ...], attacker: int
    ) -> list[Event]:
        """The loser loses every card it flipped in the battle (the slots `lost`)."""
        formation, known, removed = self.formations[loser], self.known[loser], self.removed[loser]
        holes = self.holes[loser]
        for slot in lost:
            removed.append(formation[slot])
            formation[slot] = EMPTY
            known[slot] = False
            holes |= BIT[slot]
        self.holes[loser] = holes
        events = [Event(partial(view.battle_won, step, winner, loser, lost))]
        self.battle = None
        self.phase = TURN
        if COMMANDER in lost:
            events += self._capture(step, loser, winner)
            sides = self.sides_in()
            reason = f"seat {loser}'s commander falls to seat {winner}"
            if len(sides) == 1:
                winners = [s for s in range(self.num_seats) if self.team(s) == sides[0]]
                return events + self._end_deal(step, winners, reason)
            if self._reached_target(winner):
                # The match ends at once, mid-deal: no later capture may overtake this side.
                return events + self._end_at_target(step, self._side(winner), reason)
        self._next_turn(attacker)
        return events

    def _capture(self, step: int, loser: int, winner: int) -> list[Event]:
        points = 0
        if self.options.target is not None:
            points = CAPTURE_POINTS_TEAMS if self.options.teams else self.cards_in_play(loser)
        self._score(winner, points)
        self.in_game[loser] = False
        self.out_order.append(loser)
        formation, known, index = self.formations[loser], self.known[loser], self.deal_index[loser]
        unseen = list(self.unseen_deal_index[loser])
        for slot in SLOTS:
            if formation[slot] != EMPTY:
                if known[slot]:
                    self.removed[loser].append(formation[slot])
                else:
                    self.unseen_out[loser].append(formation[slot])
                    unseen.append(index[slot])
                formation[slot] = EMPTY
                known[slot] = False
        self.holes[loser] = ALL_HOLES
        self.unseen_deal_index = _replaced(self.unseen_deal_index, loser, tuple(unseen))
        return [Event(partial(view.commander_captured, step, loser, winner, points))]

    def _side(self, seat: int) -> list[int]:
        """The seat and, with teams, its ally."""
        return [s for s in range(self.num_seats) if self.team(s) == self.team(seat)]

    def _reached_target(self, seat: int) -> bool:
        target = self.options.target
        return target is not None and self.scores[seat] >= target

    def _score(self, seat: int, points: int) -> None:
        for s in range(self.num_seats):
            if self.team(s) == self.team(seat):
                self.scores[s] += points

    def _drawn(self, step: int) -> list[Event]:
        battle = self.battle
        assert battle is not None
        events = [Event(partial(view.war_drawn, step, battle.attacker, battle.defender))]
        self.battle = None
        return events + self._end_deal(step, [], "a war neither side could go on with")

    def _gift(self, step: int, seat: int, slot: int, ally_slot: int) -> list[Event]:
        ally = self.ally(seat)
        assert ally is not None
        self.formations[ally][ally_slot] = self.formations[seat][slot]
        self.formations[seat][slot] = EMPTY
        given = list(self.deal_index[ally])
        given[ally_slot] = self.deal_index[seat][slot]
        self.deal_index = _replaced(self.deal_index, ally, tuple(given))
        self.holes[ally] &= ~BIT[ally_slot]
        self.holes[seat] |= BIT[slot]
        self._next_turn(seat)
        return [Event(partial(view.gift_given, step, seat, slot, ally, ally_slot))]

    def _next_turn(self, after: int) -> None:
        """The next seat in seat order still in the deal."""
        in_game = self.in_game
        for seat in FOLLOWERS[self.num_seats][after]:
            if in_game[seat]:
                self.current = seat
                return

    # -- the end of a deal and of the game ----------------------------------------------------
    def _end_deal(self, step: int, winners: list[int], reason: str) -> list[Event]:
        """winners: the seats of the side left standing, empty for a drawn deal."""
        target = self.options.target
        if winners and self.options.teams and target is not None:
            self._score(winners[0], sum(self.cards_in_play(s) for s in winners))
        if target is not None and winners and self._reached_target(winners[0]):
            return self._end_at_target(step, winners, reason)
        scores = tuple(self.scores)
        events = [Event(partial(view.deal_ended, step, self.deal, reason, tuple(winners), scores))]
        if target is None:
            self._finish_deal_result(winners, reason)
        elif self.deal >= DEAL_LIMIT:
            self._finish(Result.from_scores(self.scores, f"{reason}; {DEAL_LIMIT} deals played"))
        else:
            self._start_deal()
        return events

    def _end_at_target(self, step: int, winners: list[int], reason: str) -> list[Event]:
        """winners (a seat, or a team) have reached the target: the deal and the match end.
        Every other side is still below it, so ranking by score puts the winners first."""
        target = self.options.target
        scores = tuple(self.scores)
        events = [Event(partial(view.deal_ended, step, self.deal, reason, tuple(winners), scores))]
        self._finish(Result.from_scores(self.scores, f"{reason}; target {target} reached"))
        return events

    def _end_by_cap(self, step: int) -> list[Event]:
        """The deal ends with nobody winning it: a one-deal game is a draw among the seats still
        in; a scoring match goes on to the next deal, as after a drawn war."""
        self.battle = None
        return self._end_deal(step, [], f"decision cap of {DECISION_CAP} reached")

    def _finish_deal_result(self, winners: list[int], reason: str) -> None:
        """One deal is the game: the winning side first (with no winner, every seat of a side
        still in shares first place), then the others by how long they lasted."""
        top = set(winners)
        if not top:
            alive = set(self.sides_in())
            top = {s for s in range(self.num_seats) if self.team(s) in alive}
        lasted = {s: i for i, s in enumerate(self.out_order)}
        standing = [
            len(lasted) + 1 if s in top else lasted.get(s, 0) for s in range(self.num_seats)
        ]
        if self.options.teams:
            # Team mates share a place whoever of them fell first.
            standing = [max(standing[s], standing[(s + 2) % 4]) for s in range(4)]
        ranks = tuple(sum(1 for o in standing if o > mine) for mine in standing)
        sides = len({self.team(s) for s in top})
        scores = tuple(1.0 / sides if s in top else 0.0 for s in range(self.num_seats))
        self._finish(Result(ranks=ranks, scores=scores, reason=reason))

    def _finish(self, result: Result) -> None:
        self.final = result
        self.over_reason = result.reason
        self.phase = OVER

    # -- what seats see -----------------------------------------------------------------------
    def observation(self, seat: int | None) -> pb.Observation:
        return view.observation(self, seat)

    def action_label(self, action: int) -> str:
        return actions.label(action)

    def action_message(self, action: int) -> pb.Action:
        return actions.message(action)

    def render(self, seat: int | None) -> str:
        return view.render(self.observation(seat).capture_the_commander)

    def referee_picture(self) -> dict[str, object]:
        return view.referee_picture(self)

    def all_cards(self) -> list[int]:
        """Every card of the deck wherever it is now: formations, removed, out unseen, unused.
        Each of the 52 appears exactly once (card conservation)."""
        found = [c for f in self.formations for c in f if c != EMPTY]
        for seat in range(self.num_seats):
            found += self.removed[seat] + self.unseen_out[seat]
        return found + self.deck

    # -- search and tests ---------------------------------------------------------------------
    def clone(self) -> CaptureTheCommanderState:
        other = CaptureTheCommanderState.__new__(CaptureTheCommanderState)
        other.options = self.options
        other.num_seats = self.num_seats
        other.history = list(self.history)
        other.scores = list(self.scores)
        other.deal = self.deal
        other.decisions = self.decisions
        other.over_reason = self.over_reason
        other.final = self.final
        other.first_seat = self.first_seat
        other.rivals = self.rivals
        other.formations = [list(f) for f in self.formations]
        other.holes = list(self.holes)
        other.known = [list(k) for k in self.known]
        other.removed = [list(r) for r in self.removed]
        other.unseen_out = [list(u) for u in self.unseen_out]
        other.deck = list(self.deck)
        other.dealt = self.dealt
        other.deal_start = self.deal_start
        other.deal_index = self.deal_index
        other.unseen_deal_index = self.unseen_deal_index
        other.blanks = self.blanks
        other.in_game = list(self.in_game)
        other.out_order = list(self.out_order)
        other.current = self.current
        other.battle = None if self.battle is None else self.battle.copy()
        other.phase = self.phase
        self._share_kept_legal_actions(other)
        return other

    def hidden_cards(self) -> list[int]:
        """Cards of this deal nobody knows: never revealed in play, out unseen, or undealt."""
        found = [
            card
            for seat, formation in enumerate(self.formations)
            for slot, card in enumerate(formation)
            if card != EMPTY and not self.known[seat][slot]
        ]
        return found + [c for u in self.unseen_out for c in u] + self.deck

    def forget_legal_actions(self) -> None:
        """The table of blanks goes too: a state changed by hand may show other cards."""
        super().forget_legal_actions()
        self.blanks = None

    @classmethod
    def world_sampler(
        cls, options: CaptureTheCommanderOptions, view: SeatView
    ) -> WorldSampler[CaptureTheCommanderOptions]:
        from arena_games.capture_the_commander.commander_worlds import CommanderWorlds

        return CommanderWorlds(options, view)

    def resample(self, seat: int, rng: random.Random) -> CaptureTheCommanderState:
        """Nobody knows a card before it is revealed and no play depends on one, so the cards
        not seen in this deal are dealt afresh into the places nobody can see, every placement
        equally likely (within each suit with one_suit_each), without a look at the cards there
        now; the deal's chance steps are rewritten to match, so the history still replays.
        Another seat's pending war choice is drawn again from its options: this seat cannot see
        it. The table of blanks is made once per position and shared by its clones."""
        from arena_games.capture_the_commander import commander_worlds

        if self.blanks is None or self.blanks.at != len(self.history):
            self.blanks = commander_worlds.blanks_of(self)
        # The clone keeps the legal list kept here: legal lists depend on the table's shape
        # alone, which a re-deal leaves as it is.
        state = self.clone()
        commander_worlds.fill(state, self.blanks, rng)
        state.redraw_war_choices(seat, rng)
        return state

    def redraw_war_choices(self, seat: int, rng: random.Random) -> None:
        """Every other seat's pending war choice, drawn again from its options (and its step in
        the history rewritten, when the history holds it)."""
        battle = self.battle
        if battle is None:
            return
        for other in list(battle.choices):
            if other != seat:
                slot = rng.choice(self.war_options(other))
                battle.choices[other] = slot
                step = battle.choice_steps.get(other)
                if step is not None and step < len(self.history):
                    self.history[step] = Step(other, actions.flip_action(slot))

    def key(self) -> tuple[object, ...]:
        return (
            self.num_seats,
            tuple(self.scores),
            self.deal,
            self.decisions,
            self.over_reason,
            self.final,
            self.first_seat,
            tuple(tuple(f) for f in self.formations),
            tuple(tuple(k) for k in self.known),
            tuple(tuple(r) for r in self.removed),
            tuple(tuple(u) for u in self.unseen_out),
            tuple(self.deck),
            self.dealt,
            self.deal_start,
            self.deal_index,
            self.unseen_deal_index,
            tuple(self.in_game),
            tuple(self.out_order),
            self.current,
            None if self.battle is None else self.battle.key(),
            self.phase,
            tuple((s.seat, s.action) for s in self.history),
        )


@cache
def _attack_rows(holes: int) -> tuple[int, ...]:
    """attack_action(slot, 0, 1) for each card a formation with these holes may attack with:
    an attack's id is its row plus its column, attack_action(1, defender, target)."""
    return tuple(actions.attack_action(s, 0, 1) for s in attackers(holes))


@cache
def _attack_columns(defender: int, holes: int) -> tuple[int, ...]:
    """attack_action(1, defender, target) for each card the defender, with these holes, may be
    attacked at."""
    return tuple(actions.attack_action(1, defender, t) for t in exposed(holes))


def _replaced(rows: tuple[Row, ...], index: int, row: Row) -> tuple[Row, ...]:
    """rows with rows[index] replaced by row."""
    return (*rows[:index], row, *rows[index + 1 :])


DEAL_INDEX = {
    n: tuple(tuple([-1] + [(slot - 1) * n + seat for slot in SLOTS]) for seat in range(n))
    for n in (2, 3, 4)
}
"""Seat count -> seat -> slot -> the card's place in the deal's order, before any gift: round
by round, seat by seat (index 0 is no slot)."""


@cache
def _rivals(num_seats: int, teams: bool) -> tuple[tuple[int, ...], ...]:
    """Seat -> the seats of the other side(s): everyone else, or with teams the other pair."""
    return tuple(
        tuple(o for o in range(num_seats) if (o % 2 != s % 2 if teams else o != s))
        for s in range(num_seats)
    )
