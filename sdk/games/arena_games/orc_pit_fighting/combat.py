"""A combat round up to the Result: the answer to the attack, Brutality, the aces of clubs and
spades, Reinforcements and Dirty Tricks."""

from __future__ import annotations

from arena_games.orc_pit_fighting import events, rounds
from arena_games.orc_pit_fighting.actions import (
    COUNTERATTACK,
    DECLINE,
    DEFEND,
    KEEP_DRAWN,
    PASS,
    Use,
    actions_of,
    card_action,
    decode,
)
from arena_games.orc_pit_fighting.events import ONLY, Zone
from arena_games.orc_pit_fighting.rules import (
    ACE_OF_CLUBS,
    ACE_OF_DIAMONDS,
    ACE_OF_SPADES,
    ACES,
    CLUBS,
    DIAMONDS,
    HEARTS,
    RANK,
    SINGLES,
    SPADES,
    SUIT,
    Play,
    combat_value,
    d3,
    extends_run,
    heart_strength,
    lowest_cards,
    run_ends,
    spade_pairs,
    without_card,
)
from arena_games.orc_pit_fighting.table import (
    ATTACKING,
    Combat,
    DrawFor,
    Phase,
    Stance,
    Table,
)

# Enum members under short module names: looking one up on its Enum class is slow, and
# these are read at every step.
HAND, PIT, OUT, DISCARD = Zone.HAND, Zone.PIT, Zone.OUT, Zone.DISCARD
PIT_USE, PAIR, ACE_LOW, DIRTY_DRAW = Use.PIT, Use.PAIR, Use.ACE_LOW, Use.DIRTY_DRAW
PITS, PAIRS, DIRTY_DRAWS = actions_of(Use.PIT), actions_of(Use.PAIR), actions_of(Use.DIRTY_DRAW)
PIT_ACE_OF_CLUBS, PIT_ACE_OF_SPADES = PITS[ACE_OF_CLUBS], PITS[ACE_OF_SPADES]
PIT_ACE_OF_DIAMONDS = PITS[ACE_OF_DIAMONDS]
ACE_LOW_ACTION = card_action(Use.ACE_LOW, ACE_OF_SPADES)
BRUTALITY, DIRTY_TRICKS = Phase.BRUTALITY, Phase.DIRTY_TRICKS
DEFENDING = Stance.DEFEND


def the_combat(table: Table) -> Combat:
    assert table.combat is not None
    return table.combat


def value_of(combat: Combat, seat: int) -> int:
    """Combat Value with the +1 of Reinforcements."""
    return combat_value(combat.plays[seat]) + int(combat.reinforced[seat])


def declared(table: Table, seat: int, stance: Stance) -> None:
    the_combat(table).stance[seat] = stance
    events.stance_declared(table, seat, stance)


def to_pit(table: Table, seat: int, card: int, use: Use) -> None:
    """A card from hand to the Pit, face up."""
    table.take(seat, card)
    the_combat(table).pit.append(card)
    events.moved(table, card, HAND, seat, PIT, None, use)


# -- the start -------------------------------------------------------------------------------------
def start_combat(table: Table, attacker: int, club: int) -> None:
    """The club is in the Pit; the attacked seat answers."""
    fight = Combat(attacker)
    table.combat = fight
    table.round_turns = 0
    fight.pit.append(club)
    if club == ACE_OF_CLUBS:
        fight.ace_of_clubs = attacker
        fight.other_cards[attacker].append(club)
    else:
        fight.plays[attacker].append(SINGLES[club])
    events.segment(table, "combat")
    attacked = 1 - attacker
    if table.hands[attacked]:
        table.phase = Phase.DECLARE
        table.actor = attacked
        return
    declared(table, attacked, Stance.EMPTY)
    after_declaring(table)


def declare_actions(table: Table, seat: int) -> list[int]:
    """Both stances whenever the seat holds a club or spade; against the ace of clubs only a
    stance that lets it play a card, since it must play one (a Defend without a spade would
    pass)."""
    hand = table.hands[seat]
    kinds = {SUIT[c] for c in hand}
    if CLUBS not in kinds and SPADES not in kinds:
        return [card_action(Use.BLANK, c) for c in hand]
    if the_combat(table).ace_of_clubs is None:
        return [DEFEND, COUNTERATTACK]
    # Nothing is in the Pit on this side yet, so any spade is a valid Defend, any club a
    # valid Counterattack (the ace of clubs is the attacker's), and so is a flush spade pair,
    # which counts as a club for every stance decision (ruling 30).
    stances = [DEFEND] if SPADES in kinds else []
    counters = CLUBS in kinds or bool(spade_pairs(hand))
    return [*stances, COUNTERATTACK] if counters else stances


def declare(table: Table, seat: int, action: int) -> None:
    fight = the_combat(table)
    if action == DEFEND:
        fight.defender = seat
        declared(table, seat, Stance.DEFEND)
    elif action == COUNTERATTACK:
        declared(table, seat, Stance.COUNTERATTACK)
    else:
        _, card = decode(action)
        play_blank(table, seat, card)
    after_declaring(table)


def play_blank(table: Table, seat: int, card: int) -> None:
    fight = the_combat(table)
    table.take(seat, card, face_down=True)
    fight.pit.append(card)
    fight.plays[seat] = [Play.blank(card)]
    fight.blank_played[seat] = True
    fight.blank_unsubstituted[seat] = True
    declared(table, seat, Stance.BLANK)
    events.moved(table, card, HAND, seat, PIT, None, Use.BLANK, ONLY[seat], face_down=True)


def after_declaring(table: Table) -> None:
    fight = the_combat(table)
    attacked = fight.attacked
    if fight.ace_of_clubs is None:
        start_brutality(table)
    elif fight.plays[attacked] or fight.stance[attacked] == Stance.EMPTY:
        go_result(table)
    else:
        table.phase = Phase.MUST_PLAY
        table.actor = attacked


# -- Brutality -------------------------------------------------------------------------------------
def start_brutality(table: Table) -> None:
    """Alternating, the seat that did not open first, until both have passed."""
    fight = the_combat(table)
    fight.passed = [False, False]
    events.segment(table, "brutality")
    table.phase = BRUTALITY
    table.actor = fight.attacked


def brutality_plays(table: Table, seat: int) -> list[int]:
    return plays_under(table, seat, the_combat(table).stance[seat])


def plays_under(table: Table, seat: int, stance: Stance) -> list[int]:
    """Clubs (and two flush spades as a club) for an attacking seat, spades for a defender;
    every card extending the seat's run; the aces by their own rules."""
    fight = the_combat(table)
    hand = table.hands[seat]
    ends = run_ends(fight.plays[seat])
    actions: list[int] = []
    if stance in ATTACKING:
        for card in hand:
            if card < 13 and (card == ACE_OF_CLUBS or ends is None or RANK[card] in ends):
                actions.append(PITS[card])
        for low in spade_pairs(hand):
            if ends is None or RANK[low] in ends:
                actions.append(PAIRS[low])
    elif stance == DEFENDING:
        for card in hand:
            if 39 <= card < 51 and (ends is None or RANK[card] in ends):  # spades but the ace
                actions.append(PITS[card])
        if ACE_OF_SPADES in hand:
            actions.append(PIT_ACE_OF_SPADES)
            if ends is None or 1 in ends:
                actions.append(ACE_LOW_ACTION)
    actions.sort()
    return actions


def brutality_actions(table: Table, seat: int) -> list[int]:
    return [PASS, *brutality_plays(table, seat)]


def must_play_actions(table: Table, seat: int) -> list[int]:
    """Against the ace of clubs "the opponent must play a valid card": one of its stance, or
    when that stance allows none, one the other stance would (taking that stance); pass only
    when no stance allows one."""
    own = brutality_plays(table, seat)
    return own or plays_under(table, seat, other_stance(table, seat)) or [PASS]


def other_stance(table: Table, seat: int) -> Stance:
    if the_combat(table).stance[seat] in ATTACKING:
        return DEFENDING
    return Stance.COUNTERATTACK


def next_actor(fight: Combat, seat: int) -> int | None:
    """Turns alternate; a seat that passed is out of the segment."""
    if not fight.passed[1 - seat]:
        return 1 - seat
    if not fight.passed[seat]:
        return seat
    return None


def play_to_pit(table: Table, seat: int, action: int) -> None:
    """A club, spade or pair into the Pit as part of the seat's run."""
    fight = the_combat(table)
    use, card = decode(action)
    if use is PAIR:
        for each in (card, card + 1):
            to_pit(table, seat, each, use)
        fight.plays[seat].append(Play.pair(card))
    elif use is ACE_LOW:
        to_pit(table, seat, card, use)
        fight.plays[seat].append(Play.ace_low())
    else:
        to_pit(table, seat, card, PIT_USE)
        fight.plays[seat].append(SINGLES[card])


def brutality(table: Table, seat: int, action: int) -> None:
    fight = the_combat(table)
    if action == PASS:
        fight.passed[seat] = True
        events.passed(table, seat, "brutality")
    elif action == PIT_ACE_OF_CLUBS:
        ace_of_clubs(table, seat)
        return
    elif action == PIT_ACE_OF_SPADES:
        ace_of_spades(table, seat)
        return
    else:
        play_to_pit(table, seat, action)
    following = next_actor(fight, seat)
    if following is not None:
        table.actor = following
    elif value_of(fight, 0) == value_of(fight, 1):
        start_reinforcements(table)
    else:
        start_dirty_tricks(table)


def must_play(table: Table, seat: int, action: int) -> None:
    """The card played against the ace of clubs has no effect; then the Result."""
    fight = the_combat(table)
    if action != PASS and action not in brutality_plays(table, seat):
        declared(table, seat, other_stance(table, seat))
    if action == PASS:
        events.passed(table, seat, "must play")
    elif action == PIT_ACE_OF_SPADES:
        to_pit(table, seat, ACE_OF_SPADES, PIT_USE)
        fight.other_cards[seat].append(ACE_OF_SPADES)
    else:
        play_to_pit(table, seat, action)
    go_result(table)


def ace_of_clubs(table: Table, seat: int) -> None:
    """+5 for its player and nothing for the other; the opponent must play a valid card if he
    has none in the Pit yet; then straight to the Result."""
    fight = the_combat(table)
    to_pit(table, seat, ACE_OF_CLUBS, Use.PIT)
    fight.other_cards[seat].append(ACE_OF_CLUBS)
    fight.ace_of_clubs = seat
    other = 1 - seat
    if fight.plays[other] or fight.other_cards[other]:
        go_result(table)
    else:
        table.phase = Phase.MUST_PLAY
        table.actor = other


def ace_of_spades(table: Table, seat: int) -> None:
    """The opponent may answer with the ace of clubs; otherwise the Result, nothing added."""
    fight = the_combat(table)
    to_pit(table, seat, ACE_OF_SPADES, Use.PIT)
    fight.other_cards[seat].append(ACE_OF_SPADES)
    fight.ace_of_spades = seat
    answer_the_ace_of_spades(table)


def answer_the_ace_of_spades(table: Table) -> None:
    fight = the_combat(table)
    assert fight.ace_of_spades is not None
    table.phase = Phase.ACE_ANSWER
    table.actor = 1 - fight.ace_of_spades


def ace_answer_actions(table: Table, seat: int) -> list[int]:
    """Offered whether or not the seat holds the ace of clubs."""
    fight = the_combat(table)
    if ACE_OF_CLUBS in table.hands[seat] and fight.stance[seat] in ATTACKING:
        return [DECLINE, card_action(Use.PIT, ACE_OF_CLUBS)]
    return [DECLINE]


def ace_answer(table: Table, seat: int, action: int) -> None:
    fight = the_combat(table)
    if action == DECLINE:
        events.passed(table, seat, "ace answer")
    else:
        to_pit(table, seat, ACE_OF_CLUBS, Use.PIT)
        fight.other_cards[seat].append(ACE_OF_CLUBS)
        fight.ace_of_clubs = seat
    go_result(table)


# -- Reinforcements --------------------------------------------------------------------------------
def start_reinforcements(table: Table) -> None:
    fight = the_combat(table)
    fight.passed = [False, False]
    events.segment(table, "reinforcements")
    table.phase = Phase.REINFORCEMENTS
    table.actor = fight.attacker


def reinforcement_actions(table: Table, seat: int) -> list[int]:
    hearts = [PITS[c] for c in table.hands[seat] if SUIT[c] == HEARTS]
    return [PASS, *hearts]


def reinforce(table: Table, seat: int, action: int) -> None:
    fight = the_combat(table)
    if action == PASS:
        fight.passed[seat] = True
        events.passed(table, seat, "reinforcements")
    else:
        _, card = decode(action)
        to_pit(table, seat, card, Use.PIT)
        fight.hearts[seat].append(card)
    following = next_actor(fight, seat)
    if following is not None:
        table.actor = following
        return
    best = [max((heart_strength(c) for c in fight.hearts[s]), default=0) for s in (0, 1)]
    if best[0] != best[1]:
        fight.reinforced[0 if best[0] > best[1] else 1] = True
    start_dirty_tricks(table)


# -- Dirty Tricks ----------------------------------------------------------------------------------
def start_dirty_tricks(table: Table) -> None:
    """Alternating, the attacked seat first, until both have passed."""
    fight = the_combat(table)
    fight.passed = [False, False]
    fight.start_plays = [tuple(fight.plays[0]), tuple(fight.plays[1])]
    fight.drawn_to_pit = [False, False]
    events.segment(table, "dirty tricks")
    table.phase = DIRTY_TRICKS
    table.actor = fight.attacked


def may_use_ace_of_diamonds(fight: Combat, seat: int) -> bool:
    return not fight.blank_played[seat]


def unlocked_actions(table: Table, seat: int) -> list[int]:
    """Cards in hand made valid by a drawn card this seat put in the Pit this segment (they
    were not valid when the segment began)."""
    fight = the_combat(table)
    stance = fight.stance[seat]
    if not fight.drawn_to_pit[seat] or fight.blank_played[seat]:
        return []
    now, before = fight.plays[seat], fight.start_plays[seat]

    def opened(rank_: int) -> bool:
        return extends_run(now, rank_) and not extends_run(before, rank_)

    hand = table.hands[seat]
    kind = CLUBS if stance in ATTACKING else SPADES
    actions = [PITS[c] for c in hand if SUIT[c] == kind and c not in ACES and opened(RANK[c])]
    if stance in ATTACKING:
        actions += [PAIRS[low] for low in spade_pairs(hand) if opened(RANK[low])]
    return actions


def dirty_actions(table: Table, seat: int) -> list[int]:
    """With more Flair than the opponent only the ace of diamonds may be played, for either of
    its uses: its own sentence exempts it."""
    fight = the_combat(table)
    hand = table.hands[seat]
    actions = [PASS]
    if ACE_OF_DIAMONDS in hand and may_use_ace_of_diamonds(fight, seat):
        actions.append(PIT_ACE_OF_DIAMONDS)
    if not table.more_flair(seat):
        actions += [DIRTY_DRAWS[c] for c in hand if 13 <= c < 26]  # the diamonds
        if fight.drawn_to_pit[seat]:
            actions += unlocked_actions(table, seat)
    elif ACE_OF_DIAMONDS in hand:
        actions.append(DIRTY_DRAWS[ACE_OF_DIAMONDS])
    actions.sort()
    return actions


def dirty_trick(table: Table, seat: int, action: int) -> None:
    fight = the_combat(table)
    use, card = decode(action)
    if action == PASS:
        fight.passed[seat] = True
        events.passed(table, seat, "dirty tricks")
        next_dirty_turn(table, seat)
    elif use is DIRTY_DRAW:
        dirty_draw(table, seat, card)
    elif card == ACE_OF_DIAMONDS:
        ace_of_diamonds(table, seat)
    else:
        play_to_pit(table, seat, action)
        next_dirty_turn(table, seat)


def next_dirty_turn(table: Table, seat: int) -> None:
    fight = the_combat(table)
    fight.drawn = None
    following = next_actor(fight, seat)
    if following is None:
        go_result(table)
    else:
        table.phase = DIRTY_TRICKS
        table.actor = following


def dirty_draw(table: Table, seat: int, diamond: int) -> None:
    """A diamond to own Out pile: draw the top card of the deck."""
    the_combat(table).drawn = None
    table.take(seat, diamond)
    table.out[seat].append(diamond)
    events.moved(table, diamond, HAND, seat, OUT, seat, DIRTY_DRAW)
    if not rounds.start_deck_draw(table, DrawFor.DIRTY, seat):
        next_dirty_turn(table, seat)


def drew_dirty(table: Table, card: int) -> None:
    seat = table.draw_seat
    rounds.drawn_privately(table, seat, card)
    the_combat(table).drawn = card
    table.phase = Phase.DRAWN
    table.actor = seat


def drawn_actions(table: Table, seat: int) -> list[int]:
    """The drawn card: to the Pit as a club or spade of its rank if valid (not an ace; any
    non-ace after Blank), the ace of spades for a defender, a diamond again, or keep it."""
    fight = the_combat(table)
    card = fight.drawn
    assert card is not None
    stance = fight.stance[seat]
    actions = [KEEP_DRAWN]
    if card not in ACES and (
        fight.blank_played[seat] or extends_run(fight.plays[seat], RANK[card])
    ):
        actions.append(PITS[card])
    if card == ACE_OF_SPADES and stance not in ATTACKING:
        actions.append(PITS[card])
    if card == ACE_OF_DIAMONDS and may_use_ace_of_diamonds(fight, seat):
        actions.append(PITS[card])
    # Drawing again is that diamond's own use: barred above the opponent's Flair but for the ace.
    if SUIT[card] == DIAMONDS and (card == ACE_OF_DIAMONDS or not table.more_flair(seat)):
        actions.append(DIRTY_DRAWS[card])
    return sorted(actions)


def drawn(table: Table, seat: int, action: int) -> None:
    fight = the_combat(table)
    use, card = decode(action)
    fight.drawn = None
    if action == KEEP_DRAWN:
        events.passed(table, seat, "keeps the drawn card")
        next_dirty_turn(table, seat)
    elif use is Use.DIRTY_DRAW:
        dirty_draw(table, seat, card)
    elif card == ACE_OF_DIAMONDS:
        ace_of_diamonds(table, seat)
    elif card == ACE_OF_SPADES:
        ace_of_spades(table, seat)
    else:
        substitute_blank(table, seat)
        to_pit(table, seat, card, PIT_USE)
        fight.plays[seat].append(SINGLES[card])
        fight.drawn_to_pit[seat] = True
        next_dirty_turn(table, seat)


def substitute_blank(table: Table, seat: int) -> None:
    """A drawn card to the Pit replaces the Blank, which is discarded (and turned up)."""
    fight = the_combat(table)
    for play in [p for p in fight.plays[seat] if p.face_down]:
        fight.plays[seat].remove(play)
        discard_from_pit(table, play.cards[0], seat)
        fight.blank_unsubstituted[seat] = False


def discard_from_pit(table: Table, card: int, owner: int) -> None:
    the_combat(table).pit.remove(card)
    table.exposed[owner].discard(card)
    table.discard.append(card)
    events.moved(table, card, PIT, None, DISCARD, None, None)


def ace_of_diamonds(table: Table, seat: int) -> None:
    to_pit(table, seat, ACE_OF_DIAMONDS, Use.PIT)
    the_combat(table).other_cards[seat].append(ACE_OF_DIAMONDS)
    table.phase = Phase.ACE_OF_DIAMONDS
    table.actor = seat


def ace_of_diamonds_rolled(table: Table, face: int) -> None:
    """The D3 lowest of all cards the opponent has put into the Pit in this combat round are
    discarded, hearts included, unless he played the ace of clubs. Left with none, he has a
    Combat Value of zero and no Reinforcements bonus."""
    fight = the_combat(table)
    seat = table.actor
    other = 1 - seat
    events.dice(table, "ace of diamonds", face, d3(face), seat)
    if fight.ace_of_clubs != other:
        plays, hearts = fight.plays[other], fight.hearts[other]
        for card in lowest_cards(plays, hearts, d3(face)):
            if card in hearts:
                hearts.remove(card)
            else:
                without_card(plays, card)
            discard_from_pit(table, card, other)
        if not plays and not hearts and not fight.other_cards[other]:
            fight.reinforced[other] = False
    next_dirty_turn(table, seat)


def go_result(table: Table) -> None:
    the_combat(table).rolls = []
    events.segment(table, "result")
    table.phase = Phase.RESULT
