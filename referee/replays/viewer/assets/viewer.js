/* The replay viewer: reads the model (one frame per decision, see referee/replays/viewer/model.py),
   draws the table with the game's renderer (games/GAME.js registers it in Arena.games), and
   beside it the log and the clocks; the controls step through the frames. */
(function () {
  "use strict";

  const SUIT = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
  const RED = { d: true, h: true };

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function add(parent, ...children) {
    for (const child of children) if (child) parent.appendChild(child);
    return parent;
  }

  function rankText(label) {
    const rank = label.slice(0, -1);
    return rank === "T" ? "10" : rank;
  }

  function isRed(label) {
    return !!RED[label.slice(-1)];
  }

  /* A card face up: rank and suit symbol, red or black. data-card holds its label. */
  function card(label, opts) {
    const o = opts || {};
    const suit = label.slice(-1);
    const node = el("div", "card " + (isRed(label) ? "red" : "black"));
    if (o.small) node.classList.add("small");
    if (o.highlight) node.classList.add("highlight");
    if (o.known) node.classList.add("known");
    if (o.cls) node.classList.add(...o.cls.split(" "));
    node.dataset.card = label;
    node.title = o.title || rankText(label) + SUIT[suit];
    add(node, el("span", "rank", rankText(label)), el("span", "corner-suit", SUIT[suit]),
      el("span", "pip", SUIT[suit]));
    return node;
  }

  /* A card face down. With peek (the referee's view), a corner shows what it is. */
  function back(opts) {
    const o = opts || {};
    const node = el("div", "card back");
    if (o.small) node.classList.add("small");
    if (o.highlight) node.classList.add("highlight");
    if (o.cls) node.classList.add(...o.cls.split(" "));
    node.dataset.back = "";
    node.title = o.title || "face down";
    if (o.peek) {
      node.appendChild(el("span", "peek" + (isRed(o.peek) ? " red" : ""),
        rankText(o.peek) + SUIT[o.peek.slice(-1)]));
      node.dataset.peek = o.peek;
    }
    return node;
  }

  /* Cards overlapping left to right (the last one on top); face-down cards as backs. */
  function fan(labels, opts) {
    const o = opts || {};
    const node = el("div", "fan" + (o.tight ? " tight" : ""));
    labels.forEach((label, i) => node.appendChild(
      label ? card(label, { small: o.small, highlight: o.highlightLast && i === labels.length - 1 })
        : back({ small: o.small })));
    return node;
  }

  /* A hand: its cards side by side when they are known, else as many backs. */
  function hand(labels, count, opts) {
    const o = opts || {};
    const node = el("div", "hand-row");
    if (labels) labels.forEach((label) => node.appendChild(card(label, { small: o.small })));
    else for (let i = 0; i < count; i++) node.appendChild(back({ small: o.small }));
    if (o.seat !== undefined) {
      node.dataset.zone = "hand";
      node.dataset.seat = String(o.seat);
      board(node, "hand/" + o.seat);
    }
    return node;
  }

  /* Names what a zone holds for the tests that read every frame's cards back from the page
     (tests/referee/replays/viewer/test_boards_drawn.py): the cards drawn inside the node, not
     inside a zone nested in it, are the zone's; count, when given, is the size the zone
     writes beside fewer cards (a deck, the top of a long pile). */
  function board(node, key, count) {
    node.dataset.board = key;
    if (count !== undefined) node.dataset.count = String(count);
    return node;
  }

  function backs(count, opts) {
    const o = opts || {};
    const node = el("div", "fan" + (o.tight ? " tight" : ""));
    for (let i = 0; i < count; i++) node.appendChild(back({ small: o.small }));
    return node;
  }

  /* A face-down pile: one back and its size (or an empty place). */
  function deck(count, name, opts) {
    const o = opts || {};
    const node = el("div", "deck");
    node.appendChild(count > 0 ? back({ small: o.small, title: name + ": " + count })
      : el("div", "slot-empty" + (o.small ? " small" : ""), "-"));
    node.appendChild(el("span", "count", name + " " + count));
    return node;
  }

  function die(face) {
    const node = el("span", "die", face);
    node.dataset.die = String(face);
    return node;
  }

  function seatClass(seat) {
    return "seat-" + seat;
  }

  /* "seat 0: name" in the seat's colour. */
  function seatChip(view, seat) {
    const info = view.seats[seat];
    const node = el("span", "chip " + seatClass(seat), "seat " + seat + ": " + info.name);
    node.dataset.seat = String(seat);
    return node;
  }

  function seatTitle(view, seat, extra) {
    const node = el("div", "seat-title " + seatClass(seat));
    const name = add(el("span", "seat-name"), seatChip(view, seat));
    if (view.toMove.indexOf(seat) >= 0) node.classList.add("to-move");
    add(node, name);
    if (view.seat === seat) node.appendChild(el("span", "label", " (you)"));
    if (extra) node.appendChild(el("span", "count", " " + extra));
    return node;
  }

  /* The seats in the order to draw them top to bottom: the viewing seat last (nearest the
     viewer), the others before it in turn order. */
  function seatOrder(view) {
    const n = view.seats.length;
    const bottom = view.seat === null ? 0 : view.seat;
    const order = [];
    for (let i = 1; i <= n; i++) order.push((bottom + i) % n);
    return order;
  }

  /* The game's events of this frame, as {kind: fields} objects. */
  function frameEvents(view) {
    return view.frame.log.filter((e) => e.kind === "event" && e.event && view.sees(e))
      .map((e) => e.event);
  }

  const Arena = {
    games: {},
    el, add, card, back, fan, backs, hand, deck, die, board, seatChip, seatTitle, seatOrder,
    seatClass, frameEvents, rankText, isRed, SUIT,
  };
  window.Arena = Arena;

  function start() {
    const model = JSON.parse(document.getElementById("arena-model").textContent);
    const game = Arena.games[model.game];
    const last = model.frames.length - 1;
    let index = 0;
    let viewpoint = model.viewer;
    let timer = null;
    const $ = (id) => document.getElementById(id);

    function sees(entry) {
      if (viewpoint === "referee") return true;
      if (entry.kind === "chance") return false;
      if (entry.kind !== "event") return true;
      return entry.audience === null || entry.audience.indexOf(Number(viewpoint)) >= 0;
    }

    function makeView(frame) {
      const views = frame.views;
      const own = {};
      let base;
      let seat = null;
      if (viewpoint === "referee") {
        base = views.public;
        model.seats.forEach((s) => { own[s.seat] = views[String(s.seat)]; });
      } else if (viewpoint === "public") {
        base = views.public;
      } else {
        seat = Number(viewpoint);
        base = views[viewpoint];
        own[seat] = base;
      }
      return {
        model, frame, base, own, seat, sees,
        referee: viewpoint === "referee",
        truth: viewpoint === "referee" ? frame.truth || null : null,
        seats: model.seats,
        toMove: frame.to_move,
      };
    }

    function decisionText(entry) {
      const what = entry.label !== undefined ? "chooses " + entry.label : "decides";
      const how = entry.substituted_for ? " (played by the referee: " + entry.substituted_for + ")"
        : "";
      const own = viewpoint === "referee" || Number(viewpoint) === entry.seat;
      return "seat " + entry.seat + " " + (own ? what : "decides") + " in " +
        entry.time_ms.toFixed(1) + " ms" + how;
    }

    function logEntry(entry, current) {
      const node = el("div", "entry " + entry.kind + (current ? " current" : ""));
      if (entry.kind === "chance") entry = Object.assign({}, entry, { text: "chance: " + entry.text });
      if (entry.kind === "event" && entry.audience !== null) {
        node.classList.add(entry.audience.length ? "private" : "referee-only");
      }
      const text = entry.kind === "decision" ? decisionText(entry) : entry.text;
      add(node, el("span", "step", entry.step === undefined ? "" : entry.step), el("span", "", text));
      return node;
    }

    // The log as drawn: the frames up to logUpTo, for logViewpoint. Stepping on appends one
    // frame's entries and stepping back drops them, so a long match steps as fast at its end
    // as at its start.
    let logUpTo = -1;
    let logViewpoint = null;

    function drawLog() {
      const log = $("log");
      if (logViewpoint !== viewpoint) {
        log.replaceChildren();
        logUpTo = -1;
        logViewpoint = viewpoint;
      }
      for (; logUpTo > index; logUpTo--) {
        while (log.lastElementChild && Number(log.lastElementChild.dataset.frame) === logUpTo) {
          log.lastElementChild.remove();
        }
      }
      for (const node of log.querySelectorAll(".entry.current")) node.classList.remove("current");
      for (let i = logUpTo + 1; i <= index; i++) {
        for (const entry of model.frames[i].log) {
          if (!sees(entry)) continue;
          const node = logEntry(entry, false);
          node.dataset.frame = String(i);
          log.appendChild(node);
        }
      }
      logUpTo = index;
      const current = log.querySelectorAll('.entry[data-frame="' + index + '"]');
      current.forEach((node) => node.classList.add("current"));
      const target = current[0] || log.lastElementChild;
      // Scrolled when the page is next painted: reading a position here laid the whole page out
      // at every step, nine tenths of a step's time in a long match.
      if (target) {
        requestAnimationFrame(() => { log.scrollTop = target.offsetTop - log.offsetTop - 40; });
      }
    }

    function drawClocks(frame) {
      const body = $("clocks").querySelector("tbody");
      body.replaceChildren();
      frame.clocks.forEach((clock, seat) => {
        const row = el("tr", frame.decision && frame.decision.seat === seat ? "deciding" : "");
        const last = frame.decision && frame.decision.seat === seat
          ? frame.decision.time_ms.toFixed(1) : "";
        add(row, add(el("td"), seatChip({ seats: model.seats }, seat)),
          el("td", "", last), el("td", "", (clock.used_ms / 1000).toFixed(2) + " s"),
          el("td", "", (clock.bank_ms / 1000).toFixed(1) + " s"));
        body.appendChild(row);
      });
    }

    function drawResult() {
      const node = $("result");
      const result = model.result;
      if (index !== last || !result) {
        node.textContent = "";
        node.parentElement.hidden = true;
        return;
      }
      node.parentElement.hidden = false;
      const places = result.ranks.map((rank, seat) => "seat " + seat + " (" +
        model.seats[seat].name + "): rank " + (rank + 1) + ", score " + result.scores[seat]);
      node.textContent = result.reason + "\n" + places.join("\n");
    }

    function draw() {
      const frame = model.frames[index];
      const table = $("table");
      table.replaceChildren();
      table.dataset.frame = String(index);
      table.dataset.viewpoint = viewpoint;
      if (game) {
        game(table, makeView(frame));
      } else {
        table.textContent = "no renderer for " + model.game;
      }
      $("slider").value = String(index);
      const decision = frame.decision;
      $("position").textContent = "frame " + index + " / " + last + "  step " + frame.step;
      $("decision").textContent = decision ? decisionText(decision) : "the deal";
      $("first").disabled = $("prev").disabled = index === 0;
      $("next").disabled = $("last").disabled = index === last;
      drawLog();
      drawClocks(frame);
      drawResult();
    }

    function go(to) {
      index = Math.max(0, Math.min(last, to));
      draw();
    }

    function stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      $("play").textContent = "\u25B7";
    }

    function toggle() {
      if (timer !== null) { stop(); return; }
      if (index === last) go(0);
      $("play").textContent = "\u275A\u275A";
      timer = setInterval(() => {
        if (index >= last) { stop(); return; }
        go(index + 1);
      }, Number($("speed").value));
    }

    $("slider").max = String(last);
    $("first").onclick = () => { stop(); go(0); };
    $("prev").onclick = () => { stop(); go(index - 1); };
    $("next").onclick = () => { stop(); go(index + 1); };
    $("last").onclick = () => { stop(); go(last); };
    $("play").onclick = toggle;
    $("speed").onchange = () => { if (timer !== null) { stop(); toggle(); } };
    $("slider").oninput = () => { stop(); go(Number($("slider").value)); };
    const picker = $("viewpoint");
    if (model.viewpoints.length > 1) {
      for (const key of model.viewpoints) {
        const name = key === "referee" || key === "public" ? key
          : "seat " + key + " (" + model.seats[Number(key)].name + ")";
        const option = el("option", "", name);
        option.value = key;
        picker.appendChild(option);
      }
      picker.value = viewpoint;
      picker.onchange = () => { viewpoint = picker.value; draw(); };
    } else {
      picker.parentElement.hidden = true;
    }
    document.addEventListener("keydown", (event) => {
      if (event.target instanceof HTMLSelectElement) return;
      const keys = {
        ArrowLeft: () => go(index - 1), ArrowRight: () => go(index + 1),
        Home: () => go(0), End: () => go(last),
      };
      if (event.key === " ") { event.preventDefault(); toggle(); return; }
      if (keys[event.key]) { event.preventDefault(); stop(); keys[event.key](); }
    });
    const asked = /frame=(\d+)/.exec(location.hash);
    go(asked ? Number(asked[1]) : 0);
  }

  Arena.start = start;
})();
