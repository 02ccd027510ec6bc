"""Capture the Commander's worlds from a seat's view (commander_worlds.py) and its resample:
what each inference of the sampler rests on, scripted; uniformity measured; and resample
blind to the hidden cards. The generic checks (agreement over thousands of views, bias against
the truth, over gRPC) are tests/games/test_world_samplers.py and
tests/e2e/test_views_over_grpc.py."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from arena_games import cards
from arena_games.base import CHANCE, Event, SeatView
from arena_games.capture_the_commander import (
    CAPTURE_THE_COMMANDER,
    EMPTY,
    CaptureTheCommanderState,
    attack_action,
    flip_action,
    gift_action,
)
from arena_games.capture_the_commander.commander_worlds import CommanderWorlds
from arena_games.capture_the_commander.formation import SLOTS
from arena_games.legal_actions import legal_action_messages
from arena_games.match_messages import match_start_message
from arena_games.playout import drawn_apart
from arena_games.tracking import SeatTracker, random_views

from tests.games.invariants import game_rngs, play_one
from tests.games.test_capture_the_commander import OPENING, of
from tests.games.views import check_agreement

GAME = CAPTURE_THE_COMMANDER


class Table:
    """A scripted game whose every event goes to each seat's tracker, as a Match sends them."""

    def __init__(
        self, num_seats: int, layout: dict[tuple[int, int], str], **options: object
    ) -> None:
        self.state = of(GAME.new_state(options, num_seats))
        self.trackers = [SeatTracker() for _ in range(num_seats)]
        names = [f"bot{seat}" for seat in range(num_seats)]
        for seat, tracker in enumerate(self.trackers):
            tracker.on_match_start(
                match_start_message(GAME, self.state.options, seat, names, "worlds")
            )
        wanted = {where: cards.parse(text) for where, text in layout.items()}
        while self.state.is_chance():
            outcomes = [c for c, _ in self.state.chance_outcomes()]
            free = next(c for c in outcomes if c not in wanted.values())
            self.send(self.state.apply_chance(wanted.get(self.state.receiver(), free)))

    def send(self, events: list[Event]) -> None:
        for seat, tracker in enumerate(self.trackers):
            for event in events:
                if event.visible_to(seat):
                    tracker.on_event(event.message)

    def play(self, seat: int, action: int) -> None:
        self.send(self.state.apply(seat, action))

    def attack(self, seat: int, slot: int, defender: int, target: int) -> None:
        self.play(seat, attack_action(slot, defender, target))

    def view(self, seat: int) -> SeatView:
        legal = legal_action_messages(self.state, seat)
        return self.trackers[seat].view(self.state.observation(seat), legal)

    def worlds(self, seat: int) -> CommanderWorlds:
        sampler = GAME.world_sampler(self.view(seat))
        assert isinstance(sampler, CommanderWorlds)
        return sampler


def test_a_sample_deals_exactly_the_cards_nobody_has_seen_into_the_places_nobody_sees() -> None:
    """The revealed cards stay where everyone saw them (in a slot or among the removed); the
    others, and only they, fill the hidden slots and the undealt rest."""
    table = Table(2, OPENING)
    for seat, slot, defender, target in ((0, 3, 1, 2), (1, 4, 0, 2), (0, 3, 1, 5)):
        table.attack(seat, slot, defender, target)
    truth = table.state
    seen = {c for s in range(2) for c in truth.removed[s]}
    seen |= {truth.formations[s][t] for s in range(2) for t in SLOTS if truth.known[s][t]}
    rng = random.Random(1)
    worlds = table.worlds(0)
    for _ in range(50):
        world = worlds.sample(rng)
        assert world.removed == truth.removed and world.known == truth.known
        for seat in range(2):
            for slot in SLOTS:
                if truth.known[seat][slot] or truth.formations[seat][slot] == EMPTY:
                    assert world.formations[seat][slot] == truth.formations[seat][slot]
        assert sorted(world.hidden_cards()) == sorted(set(cards.DECK) - seen)
        assert len(world.deck) == 26


def test_every_unseen_card_is_as_likely_in_every_hidden_place() -> None:
    """Uniformity, measured: over 5,200 samples of one view, each of the 48 unseen cards lands
    in seat 1's commander slot and among the undealt about equally often (within 5 standard
    deviations of the expected count), from the view's sampler and from resample alike."""
    table = Table(2, OPENING)
    for seat, slot, defender, target in ((0, 3, 1, 2), (1, 4, 0, 2)):
        table.attack(seat, slot, defender, target)
    unseen = sorted(table.state.hidden_cards())
    assert len(unseen) == 48
    worlds = table.worlds(0)
    rng = random.Random(2)
    samples = 5200
    for draw_world in (worlds.sample, lambda r: table.state.resample(0, r)):
        commander: Counter[int] = Counter()
        undealt: Counter[int] = Counter()
        for _ in range(samples):
            world = of(draw_world(rng))
            commander[world.formations[1][13]] += 1
            undealt.update(world.deck)
        assert set(commander) == set(unseen)
        expected = samples / 48
        assert all(abs(commander[c] - expected) < 5 * expected**0.5 for c in unseen)
        share = samples * 26 / 48  # 26 of the 48 stay undealt
        assert all(abs(undealt[c] - share) < 5 * share**0.5 for c in unseen)


def test_the_draw_picks_every_ordered_selection_equally_often() -> None:
    """The Lehmer-code draw every sampler deals with, exhaustively on a small pool: all 60
    ordered selections of 3 of 5 cards come up, each about 1/60 of the time."""
    rng = random.Random(3)
    counts = Counter(tuple(drawn_apart([10, 11, 12, 13, 14], 3, rng)[0]) for _ in range(30000))
    assert len(counts) == 60
    assert all(abs(n - 500) < 5 * 500**0.5 for n in counts.values())
    with pytest.raises(ValueError, match="cannot draw 6 cards from 5"):
        drawn_apart([10, 11, 12, 13, 14], 6, rng)


@pytest.mark.parametrize(
    ("num_seats", "options"),
    [(2, {"one_suit_each": True}), (4, {"teams": True, "one_suit_each": True})],
)
def test_with_one_suit_each_every_hidden_card_keeps_the_suit_it_was_dealt_in(
    num_seats: int, options: dict[str, object]
) -> None:
    """With one_suit_each a hidden card's suit is public: that of the seat it was dealt to,
    followed through gifts and into the pile of a captured seat's unseen cards; the undealt
    are the suits of absent seats. Every sample puts a card of the true suit in every hidden
    place (random games, every fifth decision)."""
    rng = random.Random(4)
    places = Counter[str]()
    for seed in range(6):
        for index, (truth, view) in enumerate(random_views(GAME, num_seats, seed, options)):
            if index % 5:
                continue
            worlds = GAME.world_sampler(view)
            for world in (worlds.sample(rng), truth.resample(view.seat, rng)):
                suits = suits_by_place(of(world))
                assert suits == suits_by_place(of(truth))
                places.update(place for place, _ in suits)
    assert places["undealt" if num_seats == 2 else "unseen"] > 0
    if num_seats == 4:
        assert places["given"] > 0


def suits_by_place(state: CaptureTheCommanderState) -> Counter[tuple[str, object]]:
    """Each hidden place with the suit of its card: a slot (counted as given when the card
    came from another seat's deal, with deal_index), a seat's unseen pile, the undealt."""
    found: Counter[tuple[str, object]] = Counter()
    n = state.num_seats
    for seat, formation in enumerate(state.formations):
        for slot in SLOTS:
            if formation[slot] != EMPTY and not state.known[seat][slot]:
                given = state.deal_index[seat][slot] % n != seat
                found["given" if given else "slot", (seat, slot, cards.suit(formation[slot]))] += 1
        found.update(("unseen", (seat, cards.suit(c))) for c in state.unseen_out[seat])
    found.update(("undealt", cards.suit(c)) for c in state.deck)
    return found


def test_a_given_card_keeps_the_givers_suit_in_every_sample() -> None:
    """Teams and one_suit_each: seat 3 gives a hidden spade into seat 1's empty slot 2; in the
    view of seat 0, who never saw it, that slot holds a spade in every sample, and every
    other hidden slot of seat 1 a diamond."""
    layout = {(0, 1): "Kc", (1, 2): "5d", (1, 1): "Qd", (2, 1): "2h", (2, 2): "Qh", (3, 1): "4s"}
    table = Table(4, layout, teams=True, one_suit_each=True)
    table.attack(0, 1, 1, 2)  # Kc beats 5d: seat 1 has a hole in slot 2
    table.attack(1, 1, 2, 1)
    table.attack(2, 2, 3, 1)
    table.play(3, gift_action(12, 2))
    worlds = table.worlds(0)
    rng = random.Random(5)
    for _ in range(100):
        world = worlds.sample(rng)
        assert cards.suit(world.formations[1][2]) == 3
        others = [world.formations[1][s] for s in SLOTS if s not in (1, 2)]
        assert {cards.suit(c) for c in others} == {1}


def test_another_seats_pending_war_choice_is_drawn_from_its_options() -> None:
    """Seat 0 has chosen its war flip (slot 2 or 5); seat 1 cannot see which: its samples hold
    each about half the time, and seat 0's own samples always hold the slot it chose."""
    table = Table(2, {(0, 1): "9c", (0, 2): "Kc", (1, 1): "9d", (1, 2): "2d"})
    table.attack(0, 1, 1, 1)
    table.play(0, flip_action(2))
    rng = random.Random(6)
    theirs = table.worlds(1)
    chosen = Counter[int]()
    for _ in range(1000):
        world = theirs.sample(rng)
        assert world.battle is not None
        chosen[world.battle.choices[0]] += 1
        check_agreement(world, theirs.view)
    assert set(chosen) == {2, 5} and 400 < chosen[2] < 600
    mine = table.worlds(0)
    for _ in range(20):
        world = mine.sample(rng)
        assert world.battle is not None and world.battle.choices == {0: 2}


def test_a_lone_flipper_wins_in_every_sample() -> None:
    """Seat 1's tied 9 has nothing left beside it, seat 0 still has its slot 5: the table
    alone says only seat 0 can flip, so in every sample seat 0's flip wins the battle, as it
    does in the true game."""
    table = Table(2, OPENING)
    for seat, slot, defender, target in ((0, 3, 1, 2), (1, 4, 0, 2), (0, 3, 1, 5), (1, 4, 0, 4)):
        table.attack(seat, slot, defender, target)
    table.attack(0, 1, 1, 1)
    assert table.state.to_move() == (0,)
    rng = random.Random(7)
    for seat in (0, 1):
        worlds = table.worlds(seat)
        for _ in range(20):
            world = worlds.sample(rng)
            assert world.battle is not None and world.battle.sole
            world.apply(0, flip_action(5))
            assert world.formations[1][1] == EMPTY and world.to_move() == (1,)


def test_a_view_whose_events_miss_a_battle_is_refused_with_a_clear_error() -> None:
    """The events must account for the table the observation shows (here a battle's removal
    is missing): a one-line ValueError, not a world that disagrees."""
    table = Table(2, OPENING)
    table.attack(0, 3, 1, 2)
    view = table.view(1)
    kept = tuple(e for e in view.events if not e.capture_the_commander.HasField("battle_won"))
    with pytest.raises(ValueError, match="do not account for seat 1's formation"):
        GAME.world_sampler(SeatView(view.start, kept, view.observation, view.legal_actions))


def test_resample_does_not_look_at_the_hidden_cards() -> None:
    """Blindness: two worlds a seat cannot tell apart, differing in where the hidden cards
    lie (the second a re-deal of the first for that seat), give the same re-deal from the same
    random draws, at points of random games in three configurations, wars with a choice made
    included. (The resample before issue 22 permuted the true cards: its re-deals differed.)"""
    compared = 0
    for num_seats, options in [(2, {}), (3, {"one_suit_each": True}), (4, {"teams": True})]:

        def after_step(generic: object, events: list[Event]) -> None:
            nonlocal compared
            state = of(generic)  # type: ignore[arg-type]
            pending = state.battle is not None and bool(state.battle.choices)
            if not pending and len(state.history) % 7:
                return
            for seat in range(state.num_seats):
                # A world this seat cannot tell from the true one (its own war choice kept).
                twin = state.resample(seat, random.Random(len(state.history)))
                assert twin.hidden_cards() != state.hidden_cards() or not state.hidden_cards()
                mine = state.resample(seat, random.Random(seat))
                theirs = twin.resample(seat, random.Random(seat))
                assert mine.key() == theirs.key()
                compared += 1

        for index in range(3):
            play_one(GAME, *game_rngs(31, index), num_seats, options, after_step)  # type: ignore[arg-type]
    assert compared > 200


def test_a_sample_played_into_the_next_deal_resamples_with_that_deals_history() -> None:
    """A sample has no history of the deal it was built in (nothing to rewrite); played on
    into the next deal of a scoring match, its history holds that deal's chance steps, and a
    re-deal rewrites them to the cards now in each hidden slot."""
    rng = random.Random(8)
    view = next(v for s, v in random_views(GAME, 2, 3, {"target_score": 30}) if s.decisions == 5)
    world = of(GAME.world_sampler(view).sample(rng))
    assert world.history == []
    again = of(world.resample(1, rng))
    check_agreement(again, view)
    deal = world.deal
    while world.deal == deal and not world.is_over():
        if world.is_chance():
            world.apply_chance(rng.choice(world.chance_outcomes())[0])
        else:
            seat = world.to_move()[0]
            world.apply(seat, rng.choice(world.legal_actions(seat)))
    while world.is_chance():
        world.apply_chance(rng.choice(world.chance_outcomes())[0])
    assert world.deal == deal + 1
    redealt = of(world.resample(0, rng))
    assert redealt.hidden_cards() != world.hidden_cards()
    for seat in range(2):
        for slot in SLOTS:
            step = redealt.history[redealt.deal_start + redealt.deal_index[seat][slot]]
            assert step == (CHANCE, redealt.formations[seat][slot])
