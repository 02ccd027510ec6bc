/* Capture the Commander: each player's formation as the seed draws it (slots 1-4 farthest
   from their owner, the commander 13 nearest), the opponent's turned to face the viewer's.
   A card nobody knows is a back (the referee's view peeks at it), a card known since a
   reveal is drawn face up on a dashed blue border, a card face up in the battle under way is
   face up. The frame's attack, its war and the slots it emptied are outlined. */
(function () {
  "use strict";
  const A = window.Arena;
  // Slot -> [row, first of the two half-card columns it spans], as in the seed's diagram.
  const PLACE = {
    1: [1, 1], 2: [1, 3], 3: [1, 5], 4: [1, 7], 5: [2, 2], 6: [2, 4], 7: [2, 6],
    8: [3, 2], 9: [3, 4], 10: [3, 6], 11: [4, 3], 12: [4, 5], 13: [5, 4],
  };

  /* What this frame's events did, by "seat:slot". */
  function marks(view) {
    const out = {};
    const mark = (seat, slot, what) => { out[seat + ":" + slot] = what; };
    for (const event of A.frameEvents(view)) {
      const attack = event.attack_declared;
      if (attack) {
        mark(attack.attacker, attack.slot, "attack");
        mark(attack.defender, attack.target_slot, "target");
      }
      const revealed = event.card_revealed;
      if (revealed && !out[revealed.seat + ":" + revealed.slot]) {
        mark(revealed.seat, revealed.slot, "war");
      }
      const won = event.battle_won;
      if (won) for (const slot of won.removed_slots) mark(won.loser, slot, "lost");
    }
    const battle = view.base.battle;
    if (battle) {
      battle.attacker_slots.slice(1).forEach((slot) => mark(battle.attacker, slot, "war"));
      battle.defender_slots.slice(1).forEach((slot) => mark(battle.defender, slot, "war"));
    }
    return out;
  }

  function slotNode(view, formation, slot, flipped, marked) {
    const [row, col] = PLACE[slot.number];
    const node = A.el("div", "ctc-slot " + slot.cover + (slot.number === 13 ? " commander" : ""));
    node.style.gridRow = String(flipped ? 6 - row : row);
    node.style.gridColumnStart = String(flipped ? 8 - col : col);
    node.dataset.slot = String(slot.number);
    node.dataset.state = slot.state;
    A.board(node, "slot/" + formation.seat + "/" + slot.number);
    const what = marked[formation.seat + ":" + slot.number];
    if (what) node.classList.add(what);
    const truth = view.truth ? view.truth.formations[formation.seat][slot.number - 1] : null;
    const title = "slot " + slot.number + (slot.number === 13 ? " (commander)" : "") + ", " +
      slot.cover.replace("_", " ");
    if (slot.state === "empty") {
      node.appendChild(A.el("div", "slot-empty", "\u00d7"));
    } else if (slot.state === "hidden") {
      node.appendChild(A.back({ peek: truth, title: title + ": nobody knows it" }));
    } else {
      node.appendChild(A.card(slot.card, {
        known: slot.state === "known",
        title: title + (slot.state === "known" ? ": face down, known since its reveal"
          : ": face up in the battle"),
      }));
    }
    node.appendChild(A.el("span", "number", slot.number));
    return node;
  }

  function player(view, formation, flipped, marked) {
    const obs = view.base;
    const node = A.el("div", "ctc-player " + A.seatClass(formation.seat) +
      (formation.in_game ? "" : " out") + (flipped ? " flipped" : ""));
    node.dataset.seat = String(formation.seat);
    const grid = A.el("div", "ctc-formation");
    grid.dataset.zone = "formation";
    formation.slots.forEach((slot) => grid.appendChild(slotNode(view, formation, slot, flipped,
      marked)));
    const info = A.el("div", "ctc-info");
    const extra = (formation.in_game ? "" : "out \u00b7 ") + formation.cards_in_play + " in play" +
      (obs.teams ? " \u00b7 team " + formation.team : "") +
      (obs.target_score ? " \u00b7 " + obs.scores[formation.seat] + " points" : "");
    info.appendChild(A.seatTitle(view, formation.seat, extra));
    const removed = A.el("div", "zone");
    removed.dataset.zone = "removed";
    A.board(removed, "removed/" + formation.seat);
    A.add(removed, A.el("span", "label", "removed (" + formation.removed.length + ")"),
      A.fan(formation.removed, { small: true, tight: true }));
    info.appendChild(removed);
    if (formation.left_unseen) {
      info.appendChild(A.el("span", "count", formation.left_unseen + " left play unseen"));
    }
    const own = view.own[formation.seat];
    if (own && own.own_war_choice !== undefined) {
      info.appendChild(A.el("span", "count", "chose to flip slot " + own.own_war_choice));
    }
    return A.add(node, grid, info);
  }

  function battle(view) {
    const b = view.base.battle;
    const node = A.el("div", "ctc-battle");
    if (!b) {
      const obs = view.base;
      node.textContent = "deal " + obs.deal + " \u00b7 decisions " + obs.decisions + " / " +
        obs.decision_cap + (obs.target_score ? " \u00b7 playing to " + obs.target_score : "");
      return node;
    }
    node.textContent = "battle: seat " + b.attacker + " (slots " + b.attacker_slots.join(", ") +
      ") against seat " + b.defender + " (slots " + b.defender_slots.join(", ") + "), war " +
      b.wars + " \u00b7 waiting for seat " + b.waiting.join(", ");
    node.dataset.zone = "battle";
    return node;
  }

  A.games["capture-the-commander"] = function (root, view) {
    const formations = view.base.formations;
    const marked = marks(view);
    const order = A.seatOrder(view);
    const table = A.el("div", "ctc-table" + (formations.length > 2 ? " many" : ""));
    if (formations.length === 2) {
      A.add(table, player(view, formations[order[0]], true, marked), battle(view),
        player(view, formations[order[1]], false, marked));
    } else {
      order.forEach((seat) => table.appendChild(player(view, formations[seat], false, marked)));
      table.appendChild(battle(view));
    }
    table.appendChild(A.el("div", "ctc-legend",
      "numbers: green fully uncovered, amber partly uncovered; dashed blue border: known " +
      "since its reveal" + (view.truth ? "; corner of a back: the referee's peek" : "")));
    root.appendChild(table);
  };
})();
