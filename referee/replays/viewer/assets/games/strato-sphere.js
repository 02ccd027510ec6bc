/* Strato-Sphere: the ring of nodes, each player's zone of three nodes on their side of it
   (the viewer's at the bottom). A node is its stack of face-down cards with the face-up card
   on top, framed in its controller's colour; the attack under way (or this frame's) is drawn
   as an arrow. The resource pile, the discard pile and the turn are inside the ring, the
   hands and forces beside it. */
(function () {
  "use strict";
  const A = window.Arena;
  const FORCE = { red: "red", black: "black", clubs: "\u2663 clubs", diamonds: "\u2666 diamonds",
    hearts: "\u2665 hearts", spades: "\u2660 spades", unspecified: "not yet known" };
  // The ring's box and radius for 6 nodes (two players) and 12 (four).
  const SIZE = { 6: [560, 470, 150], 12: [820, 680, 235] };

  function place(view, index, count, out) {
    const [w, h, radius] = SIZE[count];
    const bottom = view.seat === null ? 0 : view.seat;
    const angle = Math.PI / 2 - (index - (3 * bottom + 1)) * (2 * Math.PI / count);
    const r = radius * (out || 1);
    return [w / 2 + r * 1.15 * Math.cos(angle), h / 2 + r * Math.sin(angle)];
  }

  function attackNodes(view) {
    const attack = view.base.attack;
    if (attack) return [attack.from_node, attack.to_node];
    for (const event of A.frameEvents(view)) {
      const a = event.attack_resolved || event.attack_declared;
      if (a) return [a.from_node, a.to_node];
    }
    return null;
  }

  function nodeBox(node, attack) {
    const box = A.el("div", "ss-node");
    box.dataset.node = String(node.index);
    A.board(box, "node/" + node.index, node.face_down + (node.face_up ? 1 : 0));
    if (node.controller !== undefined) box.classList.add("controlled", A.seatClass(node.controller));
    if (attack && attack[0] === node.index) box.classList.add("attack-from");
    if (attack && attack[1] === node.index) box.classList.add("attack-to");
    const stack = A.el("div", "stack");
    if (node.face_down > 0) stack.appendChild(A.back({ title: node.face_down + " face down" }));
    if (node.face_up) stack.appendChild(A.card(node.face_up, { cls: "face" }));
    if (!node.face_down && !node.face_up) stack.appendChild(A.el("div", "slot-empty", "-"));
    A.add(box, stack, A.el("span", "count", "node " + node.index));
    box.title = "node " + node.index + ": " + node.face_down + " face down";
    return box;
  }

  function ring(view) {
    const obs = view.base;
    const count = obs.nodes.length;
    const [w, h] = SIZE[count];
    const node = A.el("div", "ss-ring");
    node.style.width = w + "px";
    node.style.height = h + "px";
    node.dataset.zone = "ring";
    const points = obs.nodes.map((n) => place(view, n.index, count));
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    const poly = document.createElementNS(svg.namespaceURI, "polygon");
    poly.setAttribute("points", points.map((p) => p.join(",")).join(" "));
    poly.setAttribute("fill", "none");
    poly.setAttribute("stroke", "rgba(255,255,255,.3)");
    poly.setAttribute("stroke-width", "3");
    svg.appendChild(poly);
    const attack = attackNodes(view);
    if (attack) {
      const line = document.createElementNS(svg.namespaceURI, "line");
      const [from, to] = [points[attack[0]], points[attack[1]]];
      line.setAttribute("x1", from[0]); line.setAttribute("y1", from[1]);
      line.setAttribute("x2", to[0]); line.setAttribute("y2", to[1]);
      line.setAttribute("stroke", "#ff5a36");
      line.setAttribute("stroke-width", "6");
      svg.appendChild(line);
    }
    node.appendChild(svg);
    obs.nodes.forEach((n, i) => {
      const box = nodeBox(n, attack);
      box.style.left = points[i][0] + "px";
      box.style.top = points[i][1] + "px";
      node.appendChild(box);
    });
    for (let seat = 0; seat < count / 3; seat++) {
      const [x, y] = place(view, 3 * seat + 1, count, 1.3);
      const label = A.seatChip(view, seat);
      label.classList.add("ss-zone-name");
      label.style.left = x + "px";
      label.style.top = y + "px";
      node.appendChild(label);
    }
    const centre = A.el("div", "ss-centre");
    // The discard pile's top six: the text board writes only its size.
    const discard = A.board(A.el("div", "ss-discard"), "discard", obs.discard_pile.length);
    A.add(discard, obs.discard_pile.length
      ? A.fan(obs.discard_pile.slice(-6), { small: true, tight: true }) : null,
    A.el("span", "count", "discard " + obs.discard_pile.length));
    A.add(centre, A.deck(obs.resource_pile_size, "resources"), discard,
      A.el("span", "count", "turn " + obs.turns + " / " + obs.turn_cap + " \u00b7 seat " +
        obs.current_seat + ", " + obs.moves_left + " move(s) left"));
    node.appendChild(centre);
    return node;
  }

  function hands(view) {
    const obs = view.base;
    const node = A.el("div", "ss-hands");
    for (const seat of A.seatOrder(view)) {
      const own = view.own[seat];
      const row = A.el("div", "zone " + A.seatClass(seat));
      A.add(row, A.seatTitle(view, seat, obs.hand_sizes[seat] + " in hand"),
        A.el("span", "ss-force", "force: " + FORCE[obs.forces[seat] || "unspecified"]),
        A.hand(own ? own.hand : null, obs.hand_sizes[seat], { small: true, seat }));
      node.appendChild(row);
    }
    if (obs.attack) {
      const a = obs.attack;
      node.appendChild(A.add(A.board(A.el("div", "count ss-attack"), "attack"),
        A.el("span", "", "attack: seat " + a.attacker + "'s "),
        A.card(a.attacking_card, { small: true }),
        A.el("span", "", " on node " + a.to_node + "; seat " + a.reacting_seat +
          " may prevent it")));
    }
    node.appendChild(A.el("div", "count", "hand limit " + obs.hand_limit));
    return node;
  }

  A.games["strato-sphere"] = function (root, view) {
    A.add(root, A.add(A.el("div", "ss-table"), ring(view), hands(view)));
  };
})();
