/* Opposing Force: each player's hand on their edge of the table and the nine positions in a
   row between them, each with up to three cards per side; a claimed position's marker moves
   to its claimer's side in the claimer's colour. */
(function () {
  "use strict";
  const A = window.Arena;

  function hand(view, seat) {
    const own = view.own[seat];
    return A.hand(own ? own.hand : null, view.base.hand_sizes[seat] || 0, { seat });
  }

  function player(view, seat) {
    const count = view.base.hand_sizes[seat] || 0;
    return A.add(A.el("div", "of-player " + A.seatClass(seat)),
      A.seatTitle(view, seat, count + " in hand"), hand(view, seat));
  }

  function side(view, position, seat, top, played) {
    const cards = position.sides[seat].cards;
    const node = A.el("div", "of-side" + (top ? " top" : ""));
    if (position.sides[seat].completed_order) node.classList.add("complete");
    node.dataset.zone = "side";
    node.dataset.seat = String(seat);
    A.board(node, "side/" + position.index + "/" + seat);
    const shown = top ? cards.slice().reverse() : cards;
    for (const label of shown) {
      node.appendChild(A.card(label, { highlight: played === label }));
    }
    if (position.sides[seat].completed_order) {
      node.title = "completed " + ordinal(position.sides[seat].completed_order);
    }
    return node;
  }

  function ordinal(n) {
    return n + (n === 1 ? "st" : n === 2 ? "nd" : n === 3 ? "rd" : "th");
  }

  function marker(position, topSeat) {
    const node = A.el("div", "of-marker", position.index + 1);
    node.dataset.position = String(position.index);
    if (position.claimed_by !== undefined) {
      node.classList.add("claimed", A.seatClass(position.claimed_by),
        position.claimed_by === topSeat ? "toward-top" : "toward-bottom");
      node.dataset.claimedBy = String(position.claimed_by);
      node.title = "claimed by seat " + position.claimed_by;
    } else {
      node.title = "position " + (position.index + 1);
    }
    return node;
  }

  function line(view, topSeat, bottomSeat) {
    const played = {};
    for (const event of A.frameEvents(view)) {
      if (event.card_played) played[event.card_played.position] = event.card_played.card;
    }
    const node = A.el("div", "of-line");
    for (const position of view.base.positions) {
      const column = A.el("div", "of-position");
      column.dataset.position = String(position.index);
      A.add(column, side(view, position, topSeat, true, played[position.index]),
        marker(position, topSeat), side(view, position, bottomSeat, false, played[position.index]));
      node.appendChild(column);
    }
    return node;
  }

  A.games["opposing-force"] = function (root, view) {
    const [topSeat, bottomSeat] = A.seatOrder(view);
    const obs = view.base;
    const info = A.add(A.el("div", "of-info"), A.deck(obs.deck_size, "deck"),
      A.el("span", "count", "passes in a row: " + obs.consecutive_passes),
      A.el("span", "count", "decisions " + obs.decisions + " / " + obs.decision_cap));
    A.add(root, A.add(A.el("div", "of-table"), player(view, topSeat), line(view, topSeat, bottomSeat),
      player(view, bottomSeat), info));
  };
})();
