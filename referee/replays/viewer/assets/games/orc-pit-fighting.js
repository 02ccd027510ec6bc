/* Orc Pit Fighting: each fighter on their edge of the table with damage, hand, Out and Flair
   piles; between them the deck, the discard pile and the Pit, where a combat shows each
   side's stance, cards and combat value, the segment under way and the dice. */
(function () {
  "use strict";
  const A = window.Arena;
  const SEGMENTS = ["declare", "brutality", "reinforcements", "dirty tricks", "result", "draw"];
  const SEGMENT_OF = {
    declare: 0, must_play: 0, brutality: 1, ace_answer: 1, reinforcements: 2, dirty_tricks: 3,
    drawn: 3, ace_of_diamonds: 3, result: 4, draw_choice: 5,
  };

  function words(text) {
    return String(text).replace(/_/g, " ");
  }

  function zone(name, content, key, board) {
    const node = A.el("div", "zone");
    if (key) node.dataset.zone = key;
    if (board) A.board(node, board);
    return A.add(node, A.el("span", "label", name), content);
  }

  function damage(points) {
    const node = A.el("div", "opf-damage");
    node.dataset.damage = String(points);
    for (let i = 0; i < 5; i++) node.appendChild(A.el("span", i < points ? "hit" : ""));
    node.title = points + " damage of 5";
    return node;
  }

  function fighter(view, seat) {
    const obs = view.base;
    const s = obs.seats[seat];
    const own = view.own[seat];
    const node = A.el("div", "opf-fighter " + A.seatClass(seat));
    node.dataset.seat = String(seat);
    const who = A.el("div", "who");
    const fangs = obs.fangs.length ? "fangs " + obs.fangs[seat] : "";
    A.add(who, A.seatTitle(view, seat, fangs),
      obs.favorite === seat ? A.el("span", "opf-star", "\u2605 the spectators' favourite") : null,
      damage(s.damage));
    A.add(node, who,
      zone("hand (" + s.hand_size + ")", A.hand(own ? own.hand : null, s.hand_size,
        { small: true, seat })),
      zone("out", s.out_pile.length ? A.fan(s.out_pile, { small: true, highlightLast: true })
        : A.el("div", "slot-empty", "-"), "out", "out/" + seat),
      zone("flair " + s.flair_pile.length, s.flair_pile.length
        ? A.fan(s.flair_pile, { small: true }) : A.el("div", "slot-empty", "-"), "flair",
      "flair/" + seat));
    if (own) {
      const mine = (what) => what + "/" + seat;
      if (own.drawn.length) {
        node.appendChild(zone("drawn, keep one", A.fan(own.drawn), null, mine("drawn")));
      }
      if (own.put_down) {
        node.appendChild(zone("put down to swap", A.card(own.put_down), null, mine("put-down")));
      }
      if (own.face_down_choice) {
        node.appendChild(zone("face down (draw)", A.card(own.face_down_choice, { known: true }),
          null, mine("face-down")));
      }
      const dirty = own.combat && own.combat.dirty_drawn;
      if (dirty) {
        node.appendChild(zone("drawn in dirty tricks", A.card(dirty), null, mine("dirty")));
      }
    }
    return node;
  }

  /* A side of the combat as the viewpoint knows it: a seat sees its own Blank's card. */
  function combatSide(view, seat) {
    const own = view.own[seat];
    const combat = own && own.combat ? own.combat : view.base.combat;
    return combat.sides[seat];
  }

  function play(p) {
    if (!p.cards.length) return A.back({ small: true, title: "Blank" });
    const row = A.el("div", "fan");
    p.cards.forEach((label) => row.appendChild(A.card(label, { small: true, known: p.face_down })));
    return row;
  }

  function pit(view) {
    const obs = view.base;
    const node = A.el("div", "opf-pit");
    node.dataset.zone = "pit";
    const segment = SEGMENT_OF[obs.phase];
    const track = A.el("div", "opf-segments");
    SEGMENTS.forEach((name, i) => track.appendChild(A.el("span", i === segment ? "now" : "", name)));
    node.appendChild(A.el("span", "label", "the Pit \u00b7 " + words(obs.phase)));
    if (!obs.combat) {
      const resolved = A.frameEvents(view).find((event) => event.combat_resolved);
      node.appendChild(A.el("div", "count", resolved ? "the combat is over: " +
        settled(resolved.combat_resolved) : "no combat: circling"));
      if (obs.pending_play) {
        const p = obs.pending_play;
        node.appendChild(A.add(A.board(A.el("div", "row"), "pending"),
          A.card(p.card, { small: true, highlight: true }),
          A.el("span", "count", "seat " + p.seat + " plays it for " + words(p.use) +
            "; it may be cancelled")));
      }
      return node;
    }
    const combat = obs.combat;
    node.appendChild(track);
    const sides = A.el("div", "sides");
    for (const seat of [combat.attacker, 1 - combat.attacker]) {
      const side = combatSide(view, seat);
      const col = A.el("div", "side " + A.seatClass(seat));
      col.dataset.seat = String(seat);
      A.board(col, "pit/" + seat);
      A.add(col, A.seatChip(view, seat),
        A.el("span", "count", words(side.stance) + (seat === combat.attacker ? " (attacker)" : "") +
          " \u00b7 combat value " + side.combat_value + (side.passed ? " \u00b7 passed" : "")));
      const plays = A.el("div", "row");
      side.plays.forEach((p) => plays.appendChild(play(p)));
      col.appendChild(plays);
      if (side.hearts.length) {
        col.appendChild(zone("hearts" + (side.reinforced ? " (+1)" : ""),
          A.fan(side.hearts, { small: true })));
      }
      if (side.other_cards.length) col.appendChild(zone("other", A.fan(side.other_cards,
        { small: true })));
      sides.appendChild(col);
    }
    node.appendChild(sides);
    const dice = A.el("div", "opf-dice");
    dice.dataset.zone = "dice";
    if (combat.rolls.length) {
      dice.appendChild(A.el("span", "label", "result dice (attacked first)"));
      combat.rolls.forEach((face) => dice.appendChild(A.die(face)));
    }
    node.appendChild(dice);
    node.appendChild(A.el("span", "count", "combat round " + combat.combat_round));
    return node;
  }

  function settled(r) {
    const totals = r.combat_values.map((value, seat) => "seat " + seat + " " + value + " + roll " +
      r.rolls[seat] + (r.bonus[seat] ? " + " + r.bonus[seat] : ""));
    return totals.join(", ") + (r.winner !== undefined ? "; seat " + r.winner + " wins"
      : "; nobody wins");
  }

  function rolled(view) {
    const node = A.el("div", "opf-dice");
    node.dataset.zone = "rolls";
    for (const event of A.frameEvents(view)) {
      const roll = event.dice_rolled;
      if (!roll) continue;
      node.appendChild(A.add(A.el("span", "count", words(roll.purpose) +
        (roll.seat !== undefined ? " (seat " + roll.seat + ")" : ""))));
      node.appendChild(A.die(roll.face));
    }
    return node;
  }

  function middle(view) {
    const obs = view.base;
    const node = A.el("div", "opf-middle");
    const discard = obs.discard_pile;
    A.add(node,
      A.add(A.el("div", "zone"), A.deck(obs.deck_size, "deck"),
        A.el("span", "count", "round " + obs.round + " \u00b7 turns " + obs.round_turns + "/" +
          obs.round_turn_cap), rolled(view)),
      zone("discard (" + discard.length + "), top last", discard.length
        ? A.fan(discard, { small: true, tight: true })
        : A.el("div", "slot-empty", "-"), "discard", "discard"),
      pit(view));
    return node;
  }

  A.games["orc-pit-fighting"] = function (root, view) {
    const [top, bottom] = A.seatOrder(view);
    A.add(root, A.add(A.el("div", "opf-table"), fighter(view, top), middle(view),
      fighter(view, bottom)));
  };
})();
