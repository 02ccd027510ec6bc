/* Officers' Battle: North (seat 0) above, South (seat 1) below. Each side has its front line
   (West, Centre, East: the officer with its pile of played cards reaching toward the middle),
   behind it the support officer, the two retreated positions and the decks (to the East),
   the killed officers out of the game (to the West), and the hand on the player's edge: known
   cards face up, the rest as backs. The discard pile and the turn are in the middle. */
(function () {
  "use strict";
  const A = window.Arena;
  const POSITIONS = ["West", "Centre", "East"];

  function played(view) {
    const out = {};
    for (const event of A.frameEvents(view)) {
      const card = event.card_played || event.series_card;
      if (card) out[card.seat + ":" + card.position + ":" + card.card] = true;
    }
    return out;
  }

  function front(view, side, marked) {
    const row = A.el("div", "ob-front");
    const fallen = A.el("div", "zone");
    fallen.dataset.zone = "fallen";
    const pairs = A.board(A.el("div", "ob-fallen"), "fallen/" + side.seat);
    for (const f of side.fallen) {
      pairs.appendChild(A.add(A.el("div", "pair"), A.card(f.officer, { small: true }),
        A.card(f.card, { small: true })));
    }
    A.add(fallen, A.el("span", "label", "out of the game (" + side.fallen.length + ")"), pairs);
    row.appendChild(fallen);
    side.fronts.forEach((position) => {
      const column = A.el("div", "ob-position");
      column.dataset.position = String(position.position);
      const where = side.seat + "/" + position.position;
      const officer = A.board(A.el("div", "ob-officer"), "officer/" + where);
      officer.dataset.zone = "officer";
      const casualty = side.casualty && side.casualty.position === position.position
        ? side.casualty : null;
      if (position.officer) {
        officer.appendChild(A.card(position.officer, { title: "officer" }));
      } else if (!casualty) {
        officer.appendChild(A.el("div", "slot-empty", "none"));
      }
      // The pile played in front of the officer stays when the officer is killed: the seat
      // takes it back or discards it when it reforms.
      const pile = A.board(A.el("div", "ob-pile"), "pile/" + where);
      pile.dataset.zone = "pile";
      for (const label of position.pile) {
        pile.appendChild(A.card(label, {
          small: true, highlight: !!marked[side.seat + ":" + position.position + ":" + label],
        }));
      }
      // A killed officer lies under the cards that killed it until its seat reforms.
      const killed = casualty ? killedHere(casualty, where) : null;
      // The pile reaches toward the middle of the table: below North's officers, above
      // South's, its top card (the last) always drawn whole.
      const name = A.el("span", "label", POSITIONS[position.position]);
      if (side.seat === 0) A.add(column, name, killed, officer, pile);
      else A.add(column, pile, officer, killed, name);
      row.appendChild(column);
    });
    row.appendChild(A.el("div"));
    return row;
  }

  function killedHere(casualty, where) {
    const node = A.board(A.el("div", "ob-casualty"), "killed/" + where);
    node.dataset.zone = "killed";
    const officer = A.add(A.el("div", "ob-killed"),
      A.card(casualty.officer, { small: true, title: "killed" }));
    const killing = A.fan(casualty.cards, { small: true });
    killing.title = "the cards that killed it";
    return A.add(node, officer, killing);
  }

  function reserve(view, side) {
    const row = A.el("div", "ob-reserve");
    row.appendChild(A.add(A.el("div"), A.seatTitle(view, side.seat,
      (side.seat === 0 ? "North" : "South") + " \u00b7 " + side.living_officers + " officers")));
    const support = A.el("div", "zone");
    support.dataset.zone = "support";
    A.board(support, "support/" + side.seat);
    A.add(support, A.el("span", "label", "support"),
      side.support ? A.card(side.support) : A.el("div", "slot-empty", "none"));
    row.appendChild(support);
    side.retreats.forEach((retreat, i) => {
      const zone = A.el("div", "zone");
      zone.dataset.zone = "retreat-" + (i + 1);
      const stack = A.board(A.el("div", "ob-pile"), "retreat/" + side.seat + "/" + (i + 1));
      retreat.officers.forEach((label) => stack.appendChild(A.card(label, { small: true })));
      if (!retreat.officers.length) stack.appendChild(A.el("div", "slot-empty", "-"));
      A.add(zone, A.el("span", "label", "retreat " + (i + 1)), stack);
      row.appendChild(zone);
    });
    const decks = A.add(A.el("div", "ob-group"), A.deck(side.officer_deck_size, "officers"),
      A.deck(side.deck_size, "cards"));
    row.appendChild(decks);
    return row;
  }

  function hand(view, side) {
    const own = view.own[side.seat];
    const zone = A.el("div", "zone");
    let node;
    if (own) {
      node = A.hand(own.hand, 0, { small: true, seat: side.seat });
    } else {
      node = A.hand(null, 0, { small: true, seat: side.seat });
      side.known_hand.forEach((label) => node.appendChild(A.card(label, { small: true,
        title: "seen going into the hand" })));
      for (let i = side.known_hand.length; i < side.hand_size; i++) {
        node.appendChild(A.back({ small: true }));
      }
    }
    A.add(zone, A.el("span", "label", "hand (" + side.hand_size + ")"), node);
    return zone;
  }

  function side(view, seat, marked) {
    const s = view.base.sides[seat];
    const node = A.el("div", "ob-side " + A.seatClass(seat) + (seat === 0 ? " north" : " south"));
    node.dataset.seat = String(seat);
    return A.add(node, hand(view, s), reserve(view, s), front(view, s, marked));
  }

  function centre(view) {
    const obs = view.base;
    const node = A.el("div", "ob-centre");
    const discard = A.el("div", "zone");
    discard.dataset.zone = "discard";
    A.board(discard, "discard");
    A.add(discard, A.el("span", "label", "discard pile (" + obs.discard_pile.length + ")"),
      obs.discard_pile.length ? A.fan(obs.discard_pile, { small: true, tight: true })
        : A.el("div", "slot-empty", "-"));
    const turn = obs.turn;
    const lines = ["turn " + obs.turn_number + " \u00b7 seat " + obs.current_seat + " \u00b7 " +
      obs.phase.replace("_", " "),
    "score if it ended now: " + obs.scores.join(" : ") + " \u00b7 decisions " + obs.decisions +
      " / " + obs.decision_cap];
    if (turn.played_positions.length) {
      lines.push("played at " + turn.played_positions.map((p) => POSITIONS[p]).join(", ") +
        (turn.bonus_cards_due ? " \u00b7 bonus cards due: " + turn.bonus_cards_due : ""));
    }
    if (obs.previous_turn_idle) lines.push("the previous turn was idle");
    const info = A.el("div", "zone");
    lines.forEach((line) => info.appendChild(A.el("span", "count", line)));
    A.add(node, discard, info);
    if (turn.series) {
      const series = A.el("div", "zone");
      series.dataset.zone = "series";
      A.board(series, "series");
      A.add(series, A.el("span", "label", "series at " + POSITIONS[turn.series.position]),
        A.fan(turn.series.cards, { small: true }));
      node.appendChild(series);
    }
    return node;
  }

  A.games["officers-battle"] = function (root, view) {
    const marked = played(view);
    A.add(root, A.add(A.el("div", "ob-table"), side(view, 0, marked), centre(view),
      side(view, 1, marked)));
  };
})();
