/* The bracket's lines: from each table to the table its winners go to, drawn in one SVG over
   the bracket, again when the window is resized or the live updates swap the bracket in. A
   line to a table on another side (the winners' final to the grand final) is drawn too; the
   losers' drops are left as the boxes' text, or the lines would cross the whole bracket. */
(function () {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";

  function draw() {
    const sides = document.querySelector("#bracket .bracket-sides");
    if (!sides) return;
    const svg = sides.querySelector("svg.bracket-lines");
    const origin = sides.getBoundingClientRect();
    svg.setAttribute("width", sides.scrollWidth);
    svg.setAttribute("height", sides.scrollHeight);
    svg.replaceChildren();
    for (const table of sides.querySelectorAll(".bracket-table[data-feeds]")) {
      const target = table.dataset.feeds && document.getElementById("table-" + table.dataset.feeds);
      if (!target) continue;
      const from = table.getBoundingClientRect();
      const to = target.getBoundingClientRect();
      const x1 = from.right - origin.left, y1 = from.top + from.height / 2 - origin.top;
      const x2 = to.left - origin.left, y2 = to.top + to.height / 2 - origin.top;
      const middle = x2 > x1 ? (x1 + x2) / 2 : x1 + 8;
      const path = document.createElementNS(NS, "path");
      path.setAttribute("d", `M${x1},${y1} H${middle} V${y2} H${x2}`);
      path.dataset.from = table.dataset.table;
      path.dataset.to = table.dataset.feeds;
      svg.appendChild(path);
    }
  }

  window.addEventListener("resize", draw);
  document.addEventListener("arena:parts", draw);
  draw();
})();
